/* libFuzzer target: the controller's config file (gpuClasses, failurePolicy, admission), as
 * a reload reads it from a ConfigMap anyone with access to the namespace may edit. */
#include <stddef.h>
#include <stdint.h>

#include "controller/config/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tj_config *config = NULL;
	char err[512];

	if (tj_config_parse((const char *)data, size, "fuzz.yaml", &config, err, sizeof(err)) ==
	    0) {
		/* What the planner and the admitter read of it. */
		tj_config_failure_policy(config);
		tj_config_admission(config);
		tj_config_find_class(config, "gh200");
		tj_config_free(config);
	}
	return 0;
}
