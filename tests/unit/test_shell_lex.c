#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "reconcilers/policy/shell_lex.h"

/* A script and its tokens: words as [text], followed by q when they had quotes and $ when
 * they expand; operators by their kind's name (newline as \n, a redirection as its text). */
struct lex_case {
	const char *script;
	int want_rc;
	const char *want;
};

static const struct lex_case cases[] = {
	{ "", 0, "" },
	{ "sleep infinity", 0, "[sleep] [infinity]" },
	{ "  python train.py;sleep 5 ", 0, "[python] [train.py] ; [sleep] [5]" },
	{ "a&&b||c|d|&e&", 0, "[a] && [b] || [c] | [d] | [e] &" },
	{ "a\nb\n", 0, "[a] \\n [b] \\n" },
	{ "echo 'a b' \"c d\" e\\ f", 0, "[echo] [a b]q [c d]q [e f]q" },
	{ "echo 'it''s' \"a\\\"b\" \"\\$x\" '\\n'", 0, "[echo] [its]q [a\"b]q [$x]q [\\n]q" },
	{ "echo $HOME \"$x\" '$y' ${z:-1} $(date) `id` $((1+2)) $", 0,
	  "[echo] [$HOME]$ [$x]q$ [$y]q [${z:-1}]$ [$(date)]$ [`id`]$ [$((1+2))]$ [$]" },
	{ "echo $(echo \")\" ; ls) next", 0, "[echo] [$(echo \")\" ; ls)]$ [next]" },
	{ "echo $'a\\'b'", 0, "[echo] [a\\'b]q" },
	{ "python train.py # sleep infinity\nsleep 5", 0, "[python] [train.py] \\n [sleep] [5]" },
	{ "echo a#b", 0, "[echo] [a#b]" },
	{ "# only a comment", 0, "" },
	{ "long \\\n  line", 0, "[long] [line]" },
	{ "cmd >out 2>&1 <in >>log &>all 2>/dev/null", 0,
	  "[cmd] > [out] > [1] < [in] > [log] > [all] > [/dev/null]" },
	{ "cat <<EOF\nsleep infinity\nEOF\necho after", 0, "[cat] << [EOF] \\n [echo] [after]" },
	{ "cat <<-'END' | wc\n\tbody\n\tEND\nx", 0, "[cat] <<- [END]q | [wc] \\n [x]" },
	{ "cat <<A <<B\na\nA\nb\nB\ndone", 0, "[cat] << [A] << [B] \\n [done]" },
	{ "cat <<EOF\nnever ends", 0, "[cat] << [EOF] \\n" },
	{ "tr a b <<< 'x'", 0, "[tr] [a] [b] < [x]q" },
	{ "case $x in a) b;; c) d;& e) f;;& esac", 0,
	  "[case] [$x]$ [in] [a] ) [b] ;; [c] ) [d] ;; [e] ) [f] ;; [esac]" },
	{ "(cd x && make) ; { a; }", 0, "( [cd] [x] && [make] ) ; [{] [a] ; [}]" },
	{ "while (( i < 10 )); do i=$((i+1)); done", 0,
	  "[while] (( i < 10 )) ; [do] [i=$((i+1))]$ ; [done]" },
	{ "a=(1 2 3)", 0, "[a=] ( [1] [2] [3] )" },
	{ "echo 'unterminated", -EINVAL, NULL },
	{ "echo \"unterminated", -EINVAL, NULL },
	{ "echo $(unterminated", -EINVAL, NULL },
	{ "echo `unterminated", -EINVAL, NULL },
	{ "(( 1 + 2 )", -EINVAL, NULL },
	{ "trailing backslash \\", 0, "[trailing] [backslash] []q" },
};

static void dump(const struct tj_sh_lex *lex, char *buf, size_t size)
{
	FILE *f = fmemopen(buf, size, "w");

	assert_non_null(f);
	for (size_t i = 0; i < lex->n; i++) {
		const struct tj_sh_token *t = &lex->tokens[i];

		if (i > 0)
			fputc(' ', f);
		if (t->kind == TJ_SH_WORD)
			fprintf(f, "[%s]%s%s", t->text, t->quoted ? "q" : "",
			        t->expands ? "$" : "");
		else if (t->kind == TJ_SH_ARITH)
			fprintf(f, "((%s))", t->text);
		else if (t->kind == TJ_SH_NEWLINE)
			fputs("\\n", f);
		else if (t->kind == TJ_SH_REDIRECT)
			fputs(t->text, f);
		else
			fputs(tj_sh_kind_name(t->kind), f);
	}
	fclose(f);
}

static void test_lex_table(void **state)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct lex_case *c = &cases[i];
		struct tj_sh_lex lex = { 0 };
		char got[1024] = "";
		int rc;

		print_message("# case %zu\n", i);
		rc = tj_sh_lex(c->script, strlen(c->script), &lex);
		assert_int_equal(rc, c->want_rc);
		if (rc == 0) {
			dump(&lex, got, sizeof(got));
			assert_string_equal(got, c->want);
		} else {
			assert_null(lex.tokens);
		}
		tj_sh_lex_clear(&lex);
	}
}

/* A script at the limit is read; one byte more is refused, as are too many tokens. */
static void test_lex_limits(void **state)
{
	char *s = malloc(TJ_SH_MAX_SCRIPT + 2);
	struct tj_sh_lex lex = { 0 };

	assert_non_null(s);
	memset(s, 'a', TJ_SH_MAX_SCRIPT + 1);
	s[TJ_SH_MAX_SCRIPT + 1] = '\0';
	assert_int_equal(tj_sh_lex(s, TJ_SH_MAX_SCRIPT + 1, &lex), -E2BIG);
	assert_int_equal(tj_sh_lex(s, TJ_SH_MAX_SCRIPT, &lex), 0);
	assert_int_equal(lex.n, 1);
	assert_int_equal(strlen(lex.tokens[0].text), TJ_SH_MAX_SCRIPT);
	tj_sh_lex_clear(&lex);
	/* ";;;;..." is TJ_SH_MAX_SCRIPT / 2 tokens of ;; : more than the limit. */
	memset(s, ';', TJ_SH_MAX_SCRIPT);
	assert_int_equal(tj_sh_lex(s, TJ_SH_MAX_SCRIPT, &lex), -E2BIG);
	assert_null(lex.tokens);
	/* Exactly the limit of tokens is read. */
	memset(s, ' ', TJ_SH_MAX_SCRIPT);
	for (size_t i = 0; i < TJ_SH_MAX_TOKENS; i++)
		s[2 * i] = ';';
	assert_int_equal(tj_sh_lex(s, 2 * TJ_SH_MAX_TOKENS, &lex), 0);
	assert_int_equal(lex.n, TJ_SH_MAX_TOKENS);
	tj_sh_lex_clear(&lex);
	free(s);
}

/* NUL bytes and other binary do not stop the tokenizer or make it loop. */
static void test_lex_binary(void **state)
{
	static const char s[] = { 'a', '\0', 'b', ' ', '"', '\0', '"', '\xff', ';' };
	struct tj_sh_lex lex = { 0 };

	assert_int_equal(tj_sh_lex(s, sizeof(s), &lex), 0);
	assert_int_equal(lex.n, 3);
	assert_int_equal(lex.tokens[0].kind, TJ_SH_WORD);
	assert_int_equal(lex.tokens[1].kind, TJ_SH_WORD);
	assert_true(lex.tokens[1].quoted);
	assert_int_equal(lex.tokens[2].kind, TJ_SH_SEMI);
	tj_sh_lex_clear(&lex);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lex_table),
		cmocka_unit_test(test_lex_limits),
		cmocka_unit_test(test_lex_binary),
	};
	return cmocka_run_group_tests_name("shell_lex", tests, NULL, NULL);
}
