/* libFuzzer target: the shell tokenizer and the command policy on arbitrary scripts, and
 * their invariants: the tokenizer stays within its limits and every word's text lies in its
 * buffer; the policy says 0 or -EPERM, and a refusal names a verdict and quotes a part
 * that fits and is UTF-8. The input is also split at NUL bytes into a command line. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"
#include "reconcilers/policy/command_policy.h"
#include "reconcilers/policy/shell_lex.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const char *const *argv, size_t argc, int64_t walltime)
{
	const struct tj_command_rules rules = { .walltime = walltime,
		                                .ended_by_success_policy = walltime % 2 };
	struct tj_command_finding f;
	int r = tj_command_check(argv, argc, &rules, &f);

	if (r == -ENOMEM)
		return;
	if (r != 0 && r != -EPERM)
		abort();
	if (r == 0)
		return;
	if (f.verdict == TJ_COMMAND_OK || !f.text[0] || strlen(f.part) >= sizeof(f.part) ||
	    tj_utf8_invalid_at(f.part, strlen(f.part)) != strlen(f.part))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	const char *argv[16];
	struct tj_sh_lex lex = { 0 };
	size_t argc = 0;
	int r;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	r = tj_sh_lex(text, size, &lex);
	if (r == 0) {
		if (lex.n > TJ_SH_MAX_TOKENS)
			abort();
		for (size_t i = 0; i < lex.n; i++) {
			const char *t = lex.tokens[i].text;

			if (!t)
				abort();
			if ((lex.tokens[i].kind == TJ_SH_WORD ||
			     lex.tokens[i].kind == TJ_SH_ARITH) &&
			    (t < lex.buf || t + strlen(t) > lex.buf + 2 * size))
				abort();
		}
		tj_sh_lex_clear(&lex);
	} else if (r != -EINVAL && r != -E2BIG && r != -ENOMEM) {
		abort();
	}
	argv[0] = "sh";
	argv[1] = "-c";
	argv[2] = text;
	check(argv, 3, (int64_t)(size * 7));
	for (size_t i = 0; i < size && argc < 16; i += strlen(text + i) + 1)
		argv[argc++] = text + i;
	check(argv, argc, 0);
	free(text);
	return 0;
}
