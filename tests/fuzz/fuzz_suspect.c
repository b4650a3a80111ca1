/* libFuzzer target: a node's failures annotation (reconcilers/policy/suspect.h), which anyone who
 * may edit the Node can write, and its invariants: what is read is written back to a text
 * that reads the same, and a judgement of it names no more jobs than it read. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "reconcilers/policy/suspect.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct tj_node_failure read[TJ_SUSPECT_NODE_RECORDS], again[TJ_SUSPECT_NODE_RECORDS];
	static char text[TJ_SUSPECT_NODE_RECORDS * (TJ_KEY_MAX + 48)];
	const struct tj_suspect_policy *policy = tj_config_suspect(NULL);
	struct tj_suspect_verdict v;
	char *input = malloc(size + 1);
	int64_t cleared, again_cleared;
	size_t n, m;

	if (!input)
		return 0;
	memcpy(input, data, size);
	input[size] = '\0';
	n = tj_suspect_parse("n1", input, read, TJ_SUSPECT_NODE_RECORDS, &cleared);
	if (n > TJ_SUSPECT_NODE_RECORDS)
		abort();
	if (tj_suspect_format(cleared, read, n, text, sizeof(text)) != 0)
		abort(); /* what was read always fits */
	m = tj_suspect_parse("n1", text, again, TJ_SUSPECT_NODE_RECORDS, &again_cleared);
	if (m != n || again_cleared != cleared)
		abort();
	for (size_t i = 0; i < n; i++)
		if (strcmp(read[i].job, again[i].job) != 0 || read[i].time != again[i].time ||
		    read[i].attempt != again[i].attempt || read[i].exit_code != again[i].exit_code)
			abort();
	tj_suspect_judge(policy, read, n, "n1", INT64_C(4000000000), &v);
	if (v.n_jobs > n || (v.suspect && v.n_jobs < (size_t)policy->jobs))
		abort();
	free(input);
	return 0;
}
