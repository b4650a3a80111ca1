/* A small shell tokenizer, for the command policy (reconcilers/policy/command_policy.h): it splits
 * a POSIX sh or bash script (what `sh -c` or `bash -c` runs) into words and operators, the way the
 * shell's own token recognition does, without expanding anything.
 *
 * - Quotes: '...' is literal; "..." keeps backslash escapes of $ ` " \ and newline; a
 *   backslash outside quotes escapes the next character, and backslash-newline joins lines.
 *   Quotes are removed from a word's text; the word remembers that it had some.
 * - Substitutions $(...), $((...)), ${...} and `...` stay inside their word, verbatim, and
 *   mark it as one whose value is known only when it runs.
 * - Operators: ; && || | |& & ;; ;& ;;& ( ) newline, the redirections (with an optional
 *   file descriptor number: 2>, 2>&1, &>, <<<, ...) and here-documents, whose bodies are
 *   skipped. A word starting with # begins a comment to the end of the line. (( ... )) at
 *   the start of a token is one arithmetic token.
 *
 * Input is bounded: at most TJ_SH_MAX_SCRIPT bytes and TJ_SH_MAX_TOKENS tokens. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#define TJ_SH_MAX_SCRIPT   (64 * 1024)
#define TJ_SH_MAX_TOKENS   8192
#define TJ_SH_MAX_HEREDOCS 16 /* pending on one line */

enum tj_sh_kind {
	TJ_SH_WORD,
	TJ_SH_ARITH,    /* (( expression )); text is the expression */
	TJ_SH_NEWLINE,  /* also the end of a comment */
	TJ_SH_SEMI,     /* ; */
	TJ_SH_AMP,      /* & */
	TJ_SH_AND,      /* && */
	TJ_SH_OR,       /* || */
	TJ_SH_PIPE,     /* | or |& */
	TJ_SH_CASE_END, /* ;; ;& ;;& */
	TJ_SH_LPAREN,
	TJ_SH_RPAREN,
	/* < <> <& <<< (text "<"), > >> >| >& &> &>> (text ">"); the next word is the target.
	 * A here-document (<< or <<-, text "<<") has its delimiter as the next word. */
	TJ_SH_REDIRECT,
};

struct tj_sh_token {
	enum tj_sh_kind kind;
	const char *text; /* borrowed from the lexer's buffer; quotes removed; NUL-terminated */
	bool quoted;      /* a word with quotes or backslashes: never a reserved word */
	bool expands;     /* a word with $ or ` outside single quotes: its value is unknown */
};

struct tj_sh_lex {
	struct tj_sh_token *tokens; /* owned array of n */
	size_t n;
	char *buf; /* owned; the tokens' texts */
};

/* Tokenizes script[0..len). Returns 0 and fills *ret (to be cleared with tj_sh_lex_clear);
 * -EINVAL for a quote, substitution or (( that does not end (the shell refuses such a
 * script too); -E2BIG past the limits; -ENOMEM. *ret is written only on success. */
int tj_sh_lex(const char *script, size_t len, struct tj_sh_lex *ret);

/* Frees what tj_sh_lex filled; accepts a zeroed struct. */
void tj_sh_lex_clear(struct tj_sh_lex *lex);

/* "word", ";", "&&", ... (for messages and tests). */
const char *tj_sh_kind_name(enum tj_sh_kind kind);
