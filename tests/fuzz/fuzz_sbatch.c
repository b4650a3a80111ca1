/* libFuzzer target: a batch script's #SBATCH lines, and the conversion of what they parse to
 * into TrainJobs, as kubectl sbatch reads a script anyone may have written. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "cli/sbatch_job.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *no_env(const char *name)
{
	return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tj_sbatch_opts *opts = calloc(1, sizeof(*opts));
	struct tj_sbatch_notes *notes = calloc(1, sizeof(*notes));
	char err[512];
	cJSON **jobs = NULL;
	size_t n = 0;

	if (!opts || !notes)
		goto out;
	tj_sbatch_opts_init(opts);
	if (tj_sbatch_parse_script((const char *)data, size, opts, notes, err, sizeof(err)) < 0)
		goto out;
	struct tj_sbatch_input in = {
		.script = (const char *)data,
		.script_len = size,
		.script_name = "fuzz.sh",
		.opts = opts,
		.namespace = "default",
		.user = "fuzz",
		.config = tj_config_builtin(),
		.lookup_env = no_env,
	};
	if (tj_sbatch_convert(&in, notes, &jobs, &n, err, sizeof(err)) == 0)
		tj_sbatch_jobs_free(jobs, n);
out:
	free(notes);
	free(opts);
	return 0;
}
