/* libFuzzer target: a YAML stream read into JSON trees, as `render -f` and the kubectl
 * plugins read the manifests a user hands them (libfyaml parses, cJSON reads what it
 * emits). */
#include <stddef.h>
#include <stdint.h>

#include "cli/yaml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cJSON **docs = NULL;
	size_t n = 0;
	char err[512];

	if (tj_yaml_parse((const char *)data, size, "fuzz.yaml", &docs, &n, err, sizeof(err)) == 0)
		tj_yaml_docs_free(docs, n);
	return 0;
}
