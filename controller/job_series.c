#include "controller/job_series.h"

#include <errno.h>
#include <stdlib.h>

#include "informers/informers.h"

int tj_controller_job_series(const struct tj_controller *c, struct tj_job_series **ret,
                             size_t *ret_n)
{
	const struct tj_store *jobs = tj_reflector_store(tj_controller_informers(c)->trainjobs);
	size_t n = 0, cap = tj_store_len(jobs);
	struct tj_job_series *out = malloc((cap ? cap : 1) * sizeof(*out));
	struct tj_store_iter it;
	const struct tj_trainjob *job;

	if (!out)
		return -ENOMEM;
	tj_store_iter_init(jobs, &it);
	while (n < cap && (job = tj_store_iter_next(&it))) {
		const struct tj_gpu_class *cls = tj_controller_job_gpu_class(c, job);

		out[n++] = (struct tj_job_series){
			.namespace = job->namespace,
			.gpu_class = cls ? cls->name : "",
			.state = job->status.state,
			.reason = job->status.reason,
			.name = job->name,
			.progress_percent =
			        job->status.has_progress ? job->status.progress_percent : -1,
			.eta_seconds = job->status.has_eta ? job->status.eta_seconds : -1,
		};
	}
	*ret = out;
	*ret_n = n;
	return 0;
}
