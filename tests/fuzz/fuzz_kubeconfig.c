/* libFuzzer target: kubeconfig parsing and merging. A NUL byte in the input splits it into
 * two documents, so the merge of a $KUBECONFIG list is covered too. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kube/config.h"
#include "kube/kubeconfig.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	const char *nul = memchr(text, '\0', size);
	struct tj_kube_doc docs[2] = {
		{ .origin = "/fuzz/a", .yaml = text, .len = nul ? (size_t)(nul - text) : size },
		{ .origin = "b",
		  .yaml = nul ? nul + 1 : "",
		  .len = nul ? size - (size_t)(nul - text) - 1 : 0 },
	};
	struct tj_kube_config *cfg = NULL;
	char err[256];

	if (tj_kube_config_parse(docs, nul ? 2 : 1, NULL, &cfg, err, sizeof(err)) == 0)
		tj_kube_config_free(cfg);
	/* An explicit context too: another path through the lookups. */
	if (tj_kube_config_parse(docs, nul ? 2 : 1, "ctx", &cfg, err, sizeof(err)) == 0)
		tj_kube_config_free(cfg);
	return 0;
}
