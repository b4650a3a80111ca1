#include "reconcilers/policy/shell_lex.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct heredoc {
	size_t token; /* the delimiter's word */
	bool strip_tabs;
};

struct lexer {
	const char *s;
	size_t len, i;
	char *out; /* the buffer the words' texts go to */
	size_t o;
	struct tj_sh_token *tokens; /* owned until moved into the result */
	size_t n, cap;
	struct heredoc heredocs[TJ_SH_MAX_HEREDOCS];
	size_t n_heredocs;
	int delimiter_next; /* 0: none; 1: <<; 2: <<- (the next word is a delimiter) */
};

static const char *const kind_names[] = {
	[TJ_SH_WORD] = "word", [TJ_SH_ARITH] = "((", [TJ_SH_NEWLINE] = "newline",
	[TJ_SH_SEMI] = ";",    [TJ_SH_AMP] = "&",    [TJ_SH_AND] = "&&",
	[TJ_SH_OR] = "||",     [TJ_SH_PIPE] = "|",   [TJ_SH_CASE_END] = ";;",
	[TJ_SH_LPAREN] = "(",  [TJ_SH_RPAREN] = ")", [TJ_SH_REDIRECT] = "redirection",
};

const char *tj_sh_kind_name(enum tj_sh_kind kind)
{
	return kind_names[kind];
}

static struct tj_sh_token *push(struct lexer *l, enum tj_sh_kind kind, const char *text)
{
	struct tj_sh_token *t;

	if (l->n == TJ_SH_MAX_TOKENS)
		return NULL;
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		struct tj_sh_token *tokens = realloc(l->tokens, cap * sizeof(*tokens));

		if (!tokens)
			return NULL;
		l->tokens = tokens;
		l->cap = cap;
	}
	t = &l->tokens[l->n++];
	*t = (struct tj_sh_token){ .kind = kind, .text = text };
	return t;
}

/* A failed push is -E2BIG at the token limit, else -ENOMEM. */
static int push_error(const struct lexer *l)
{
	return l->n == TJ_SH_MAX_TOKENS ? -E2BIG : -ENOMEM;
}

static bool at(const struct lexer *l, size_t i, char c)
{
	return i < l->len && l->s[i] == c;
}

static bool ends_word(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || (c != '\0' && strchr(";&|()<>", c));
}

/* Copies s[from..to) into the word being built. */
static void emit(struct lexer *l, size_t from, size_t to)
{
	memcpy(l->out + l->o, l->s + from, to - from);
	l->o += to - from;
}

/* The end (one past) of a '...' or "..." string starting at i, or 0 if it does not end. */
static size_t skip_quoted(const struct lexer *l, size_t i)
{
	char q = l->s[i];

	for (i++; i < l->len; i++) {
		if (q == '"' && l->s[i] == '\\') {
			i++;
			continue;
		}
		if (l->s[i] == q)
			return i + 1;
	}
	return 0;
}

/* The end (one past) of a substitution whose opening bracket (open) is at i: $(...), ${...}
 * or $((...)), with quotes and escapes inside; or of `...` when open is '`'. 0 if it does
 * not end. */
static size_t skip_substitution(const struct lexer *l, size_t i, char open)
{
	char close = open == '(' ? ')' : open == '{' ? '}' : '`';
	size_t depth = 1;

	for (i++; i < l->len; i++) {
		char c = l->s[i];

		if (c == '\\') {
			i++;
		} else if (open == '`') {
			if (c == '`')
				return i + 1;
		} else if (c == '\'' || c == '"') {
			size_t end = skip_quoted(l, i);

			if (!end)
				return 0;
			i = end - 1;
		} else if (c == open) {
			depth++;
		} else if (c == close && --depth == 0) {
			return i + 1;
		}
	}
	return 0;
}

/* A word: quotes removed, substitutions kept verbatim. */
static int lex_word(struct lexer *l)
{
	const char *text = l->out + l->o;
	struct tj_sh_token *t;
	bool quoted = false, expands = false;

	while (l->i < l->len && !ends_word(l->s[l->i])) {
		size_t i = l->i, end;
		char c = l->s[i];

		if (c == '\\') {
			quoted = true;
			if (i + 1 < l->len && l->s[i + 1] != '\n')
				emit(l, i + 1, i + 2);
			l->i = i + 2 < l->len ? i + 2 : l->len;
		} else if (c == '\'') {
			const char *close = memchr(l->s + i + 1, '\'', l->len - i - 1);

			if (!close)
				return -EINVAL;
			end = (size_t)(close - l->s);
			quoted = true;
			emit(l, i + 1, end);
			l->i = end + 1;
		} else if (c == '$' && at(l, i + 1, '\'')) {
			/* bash's $'...': a backslash escapes the quote; the other escapes stay. */
			for (end = i + 2; end < l->len && l->s[end] != '\''; end++)
				if (l->s[end] == '\\')
					end++;
			if (end >= l->len)
				return -EINVAL;
			quoted = true;
			emit(l, i + 2, end);
			l->i = end + 1;
		} else if (c == '"') {
			quoted = true;
			for (i++; i < l->len && l->s[i] != '"'; i++) {
				if (l->s[i] == '\\' && i + 1 < l->len && l->s[i + 1] != '\0' &&
				    strchr("$`\"\\\n", l->s[i + 1])) {
					if (l->s[i + 1] != '\n')
						emit(l, i + 1, i + 2);
					i++;
				} else if ((l->s[i] == '$' &&
				            (at(l, i + 1, '(') || at(l, i + 1, '{'))) ||
				           l->s[i] == '`') {
					size_t from = i;

					end = skip_substitution(l, l->s[i] == '`' ? i : i + 1,
					                        l->s[i] == '`' ? '`' : l->s[i + 1]);
					if (!end)
						return -EINVAL;
					expands = true;
					emit(l, from, end);
					i = end - 1;
				} else {
					expands |= l->s[i] == '$' && i + 1 < l->len &&
					           l->s[i + 1] != '"';
					emit(l, i, i + 1);
				}
			}
			if (i >= l->len)
				return -EINVAL;
			l->i = i + 1;
		} else if ((c == '$' && (at(l, i + 1, '(') || at(l, i + 1, '{'))) || c == '`') {
			end = skip_substitution(l, c == '`' ? i : i + 1,
			                        c == '`' ? '`' : l->s[i + 1]);
			if (!end)
				return -EINVAL;
			expands = true;
			emit(l, i, end);
			l->i = end;
		} else {
			expands |= c == '$' && i + 1 < l->len && !ends_word(l->s[i + 1]);
			emit(l, i, i + 1);
			l->i = i + 1;
		}
	}
	l->out[l->o++] = '\0';
	t = push(l, TJ_SH_WORD, text);
	if (!t)
		return push_error(l);
	t->quoted = quoted;
	t->expands = expands;
	if (l->delimiter_next && l->n_heredocs < TJ_SH_MAX_HEREDOCS)
		l->heredocs[l->n_heredocs++] =
		        (struct heredoc){ .token = l->n - 1, .strip_tabs = l->delimiter_next == 2 };
	l->delimiter_next = 0;
	return 0;
}

/* After a newline: the bodies of the here-documents opened on the line before, each up to
 * its delimiter's line (or the end of the script, as the shell allows). */
static void skip_heredocs(struct lexer *l)
{
	for (size_t h = 0; h < l->n_heredocs; h++) {
		const char *delim = l->tokens[l->heredocs[h].token].text;
		size_t dlen = strlen(delim);

		while (l->i < l->len) {
			const char *nl = memchr(l->s + l->i, '\n', l->len - l->i);
			size_t eol = nl ? (size_t)(nl - l->s) : l->len, start = l->i;

			if (l->heredocs[h].strip_tabs)
				while (start < eol && l->s[start] == '\t')
					start++;
			l->i = eol < l->len ? eol + 1 : l->len;
			if (eol - start == dlen && memcmp(l->s + start, delim, dlen) == 0)
				break;
		}
	}
	l->n_heredocs = 0;
}

/* (( expression )): up to the )) that closes it, parentheses inside balanced. */
static int lex_arith(struct lexer *l)
{
	size_t depth = 0, i;
	const char *text = l->out + l->o;

	for (i = l->i + 2; i < l->len; i++) {
		if (l->s[i] == '(') {
			depth++;
		} else if (l->s[i] == ')') {
			if (depth == 0)
				break;
			depth--;
		}
	}
	if (i + 1 >= l->len || l->s[i + 1] != ')')
		return -EINVAL;
	emit(l, l->i + 2, i);
	l->out[l->o++] = '\0';
	l->i = i + 2;
	return push(l, TJ_SH_ARITH, text) ? 0 : push_error(l);
}

/* An operator at l->i; returns its kind and text, and how long it is. */
static size_t operator_at(const struct lexer *l, enum tj_sh_kind *kind, const char **text)
{
	static const struct {
		const char *op;
		enum tj_sh_kind kind;
		const char *text;
	} ops[] = {
		/* Longest first. */
		{ ";;&", TJ_SH_CASE_END, ";;" }, { "&>>", TJ_SH_REDIRECT, ">" },
		{ "<<<", TJ_SH_REDIRECT, "<" },  { "<<-", TJ_SH_REDIRECT, "<<-" },
		{ "&&", TJ_SH_AND, "&&" },       { "||", TJ_SH_OR, "||" },
		{ "|&", TJ_SH_PIPE, "|" },       { ";;", TJ_SH_CASE_END, ";;" },
		{ ";&", TJ_SH_CASE_END, ";;" },  { "&>", TJ_SH_REDIRECT, ">" },
		{ "<<", TJ_SH_REDIRECT, "<<" },  { "<>", TJ_SH_REDIRECT, "<" },
		{ "<&", TJ_SH_REDIRECT, "<" },   { ">>", TJ_SH_REDIRECT, ">" },
		{ ">|", TJ_SH_REDIRECT, ">" },   { ">&", TJ_SH_REDIRECT, ">" },
		{ ";", TJ_SH_SEMI, ";" },        { "&", TJ_SH_AMP, "&" },
		{ "|", TJ_SH_PIPE, "|" },        { "(", TJ_SH_LPAREN, "(" },
		{ ")", TJ_SH_RPAREN, ")" },      { "<", TJ_SH_REDIRECT, "<" },
		{ ">", TJ_SH_REDIRECT, ">" },
	};

	for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++) {
		size_t n = strlen(ops[k].op);

		if (n <= l->len - l->i && memcmp(l->s + l->i, ops[k].op, n) == 0) {
			*kind = ops[k].kind;
			*text = ops[k].text;
			return n;
		}
	}
	return 0;
}

static int lex_all(struct lexer *l)
{
	while (l->i < l->len) {
		char c = l->s[l->i];
		enum tj_sh_kind kind;
		const char *text;
		size_t n, j;
		int r;

		if (c == ' ' || c == '\t') {
			l->i++;
		} else if (c == '\\' && at(l, l->i + 1, '\n')) {
			l->i += 2;
		} else if (c == '\n') {
			if (!push(l, TJ_SH_NEWLINE, "\n"))
				return push_error(l);
			l->i++;
			skip_heredocs(l);
		} else if (c == '#') {
			while (l->i < l->len && l->s[l->i] != '\n')
				l->i++;
		} else if (c == '(' && at(l, l->i + 1, '(')) {
			if ((r = lex_arith(l)) < 0)
				return r;
		} else if ((n = operator_at(l, &kind, &text)) > 0) {
			if (!push(l, kind, text))
				return push_error(l);
			l->i += n;
			if (kind == TJ_SH_REDIRECT && text[1] == '<')
				l->delimiter_next = text[2] == '-' ? 2 : 1;
		} else {
			/* A file descriptor number right before a redirection belongs to it. */
			for (j = l->i; j < l->len && l->s[j] >= '0' && l->s[j] <= '9'; j++)
				;
			if (j > l->i && (at(l, j, '<') || at(l, j, '>'))) {
				l->i = j;
				continue;
			}
			if ((r = lex_word(l)) < 0)
				return r;
		}
	}
	return 0;
}

int tj_sh_lex(const char *script, size_t len, struct tj_sh_lex *ret)
{
	struct lexer l = { .s = script, .len = len };
	int r;

	if (len > TJ_SH_MAX_SCRIPT)
		return -E2BIG;
	/* A word's text is at most the bytes it was read from, plus its NUL. */
	l.out = malloc(2 * len + 1);
	if (!l.out)
		return -ENOMEM;
	r = lex_all(&l);
	if (r < 0) {
		free(l.tokens);
		free(l.out);
		return r;
	}
	*ret = (struct tj_sh_lex){ .tokens = l.tokens, .n = l.n, .buf = l.out };
	return 0;
}

void tj_sh_lex_clear(struct tj_sh_lex *lex)
{
	free(lex->tokens);
	free(lex->buf);
	*lex = (struct tj_sh_lex){ 0 };
}
