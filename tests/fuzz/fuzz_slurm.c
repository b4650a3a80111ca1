/* libFuzzer target: what kubectl squeue and sacct parse from their command line (-S times,
 * --format lists, -t state lists) and the host lists they print, on arbitrary text. The
 * first byte chooses the parser. Invariants: a refused -t list leaves the states as they
 * were; an accepted --format prints a header of exactly its fields; a host list always ends
 * within its buffer. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/sacct_table.h"
#include "cli/slurm_text.h"
#include "cli/squeue_table.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_format(const char *text)
{
	struct tj_sacct_format f;
	struct tj_slurm_jobs none = { 0 };
	char err[512], *out = NULL;
	size_t len = 0, bars = 0;
	FILE *mem;

	if (tj_sacct_parse_format(text, &f, err, sizeof(err)) < 0)
		return;
	if (f.n < 1 || f.n > TJ_SACCT_MAX_FIELDS)
		abort();
	mem = open_memstream(&out, &len);
	if (!mem)
		return;
	if (tj_sacct_print(mem, &none, &f, true, 0, 0) < 0)
		abort();
	fclose(mem);
	for (size_t i = 0; i < len; i++)
		bars += out[i] == '|';
	if (bars != f.n - 1 || len == 0 || out[len - 1] != '\n')
		abort();
	free(out);
}

static void fuzz_states(const char *text)
{
	struct tj_squeue_options o, before;
	char err[256];

	tj_squeue_default_states(&o);
	before = o;
	if (tj_squeue_parse_states(text, &o, err, sizeof(err)) < 0 &&
	    memcmp(&o, &before, sizeof(o)) != 0)
		abort();
}

static void fuzz_hostlist(char *text)
{
	const char *names[64];
	size_t n = 0;
	char buf[40];

	for (char *tok = strtok(text, ","); tok && n < 64; tok = strtok(NULL, ","))
		names[n++] = tok;
	buf[sizeof(buf) - 1] = 'x';
	tj_slurm_hostlist(names, n, buf, sizeof(buf) - 1);
	if (buf[sizeof(buf) - 1] != 'x' || !memchr(buf, '\0', sizeof(buf) - 1))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text;
	int64_t t;

	if (size < 1)
		return 0;
	text = malloc(size);
	if (!text)
		return 0;
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	switch (data[0] % 4) {
	case 0:
		tj_slurm_parse_time(text, 1795953600, &t);
		break;
	case 1:
		fuzz_format(text);
		break;
	case 2:
		fuzz_states(text);
		break;
	default:
		fuzz_hostlist(text);
		break;
	}
	free(text);
	return 0;
}
