/* libFuzzer target: the TrainJob and runtime projections (what any user who may create a
 * TrainJob or a TrainingRuntime sends), the spec's validation and the stall timeout of both
 * (reconcilers/policy/stall.h), the status's round trip, and the rendering of a pinned pod,
 * of a pod of every other step of the runtime's graph (with the check that each initializer
 * has its step, and its failure rules at an exit code), of its PVCs and of the MPI hostfile;
 * the runtime's snapshot ConfigMap and its reading back. The input is one object, tried as
 * both (and as a snapshot ConfigMap), or an array of a TrainJob and a runtime (or a snapshot
 * ConfigMap), rendered together. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "reconcilers/failure_rules.h"
#include "reconcilers/mpi.h"
#include "reconcilers/policy/stall.h"
#include "reconcilers/render/render.h"
#include "reconcilers/render/render_step.h"
#include "reconcilers/runtime.h"
#include "reconcilers/runtime_snapshot.h"
#include "reconcilers/settings.h"
#include "reconcilers/trainjob.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The failure rules of every step; every step but node, slot 0, with the claims mounted;
 * the PVCs; the hostfile of an MPI runtime over the graph's steps. */
static void render_steps(const struct tj_trainjob *job, const struct tj_runtime *rt)
{
	struct tj_mpi_step steps[16];
	size_t n = 0;
	struct tj_problem why;
	char *hostfile = NULL, rule[256];
	cJSON *out = NULL;

	for (size_t i = 0; i < rt->graph.n; i++) {
		const struct tj_step *step = &rt->graph.steps[i];

		tj_failure_rules_fail(rt->failure_rules, step->name,
		                      tj_failure_job_reason(step->pod_failure_rules, 1), rule,
		                      sizeof(rule));
		if (n < sizeof(steps) / sizeof(steps[0]))
			steps[n++] = (struct tj_mpi_step){ step->name, step->replicas,
				                           tj_step_pods(&rt->graph, i, 1) };
		if (strcmp(step->name, "node") == 0 ||
		    tj_render_step_pod(job, step, 0, 0, &out, &why) < 0)
			continue;
		tj_render_mount_claims(out, rt->graph.claim_templates, job->name);
		tj_mpi_apply_pod(out, step->name, &rt->mpi, job->name, 1);
		cJSON_Delete(out);
		out = NULL;
	}
	tj_render_check_initializers(job, &rt->graph, &why);
	if (tj_render_claims(job, rt->graph.claim_templates, &out, &why) == 0)
		cJSON_Delete(out);
	if (tj_mpi_hostfile(&rt->mpi, job->name, job->name, steps, n, 1, &hostfile) == 0)
		free(hostfile);
}

static void render(const struct tj_trainjob *job, const struct tj_runtime *rt)
{
	const struct tj_config *config = tj_config_builtin();
	const struct tj_gpu_class *cls = NULL;
	struct tj_problem why;
	struct tj_render *r = NULL;
	cJSON *pod = NULL;

	if (tj_trainjob_validate(job, &why) < 0 || tj_runtime_gpu_class(rt, config, &cls, &why) < 0)
		return;
	if (tj_render_prepare(
	            &(struct tj_render_input){ .job = job, .runtime = rt, .gpu_class = cls }, &r,
	            &why) < 0)
		return;
	if (tj_render_pod(r, 0, 0, &pod) == 0)
		tj_render_pin(pod, "node-a");
	cJSON_Delete(pod);
	tj_render_free(r);
}

/* The snapshot ConfigMap of job's runtime, read back as the informer reads it; and obj read
 * as a snapshot ConfigMap of job. */
static void snapshots(const struct tj_trainjob *job, const struct tj_runtime *rt, const cJSON *obj)
{
	struct tj_runtime_snapshot *s = NULL;
	const struct tj_runtime *picked;
	struct tj_problem why;
	cJSON *cm = NULL;

	if (rt && tj_runtime_snapshot_config_map(job, rt, &cm) == 0 &&
	    tj_runtime_snapshot_from_json(cm, &s) == 0) {
		tj_runtime_snapshot_pick(job, s, &picked, &why);
		s = tj_runtime_snapshot_free(s);
	}
	cJSON_Delete(cm);
	if (tj_runtime_snapshot_from_json(obj, &s) == 0) {
		tj_runtime_snapshot_pick(job, s, &picked, &why);
		tj_runtime_snapshot_free(s);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cJSON *obj = cJSON_ParseWithLength((const char *)data, size);
	struct tj_trainjob *job = NULL;
	struct tj_runtime *rt = NULL;

	if (!obj)
		return 0;
	const cJSON *first = cJSON_IsArray(obj) ? cJSON_GetArrayItem(obj, 0) : obj;
	const cJSON *second = cJSON_IsArray(obj) ? cJSON_GetArrayItem(obj, 1) : obj;

	if (tj_trainjob_from_json(first, &job) == 0) {
		struct tj_problem why;
		struct tj_trainjob_status back;
		cJSON *status = tj_trainjob_status_to_json(&job->status);

		tj_trainjob_validate(job, &why);
		if (status) {
			tj_trainjob_status_from_json(status, &back);
			cJSON_Delete(status);
		}
	}
	if (tj_runtime_from_json(second, &rt) == 0 && job) {
		struct tj_problem why;
		int64_t timeout;

		tj_stall_timeout(job, rt, &timeout, &why);
		render(job, rt);
		render_steps(job, rt);
	}
	if (job)
		snapshots(job, rt, second);
	tj_runtime_free(rt);
	tj_trainjob_free(job);
	cJSON_Delete(obj);
	return 0;
}
