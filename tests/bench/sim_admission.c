/* The admission policy on a trace, without a cluster: a discrete-event simulation in which
 * tj_admit itself decides, cycle after cycle, which jobs start on which nodes, as the
 * admitter does on every job end. It measures what the policy gives (utilisation, makespan,
 * wait), apart from what the API server, the scheduler and the machine add to it, for FIFO
 * and backfill on the same trace.
 *
 *   sim_admission NODES < trace
 *
 * The trace is one job a line, "nodes walltime run" (seconds), all submitted at 0 in that
 * order, each pod of 4 GPUs on nodes of 4 GPUs: tests/bench/bench_admission.py's trace,
 * printed by its make_trace (the README has the command). Prints one line per way and a
 * final JSON line. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reconcilers/admission.h"

#define GPUS_PER_NODE 4
#define MAX_JOBS      100000
#define MAX_NODES     10000

/* What each pod of the trace asks, and so holds on its node: the whole node's GPUs. */
static const struct tj_adm_resources pod_request = { GPUS_PER_NODE, 1000, 1LL << 30, 1 };

struct sim_job {
	int nodes;
	int64_t walltime, run;
	int64_t start, end; /* -1 until started */
	size_t *on;         /* owned; the node of each pod once started */
	char key[32];
};

struct outcome {
	int64_t makespan;
	double utilisation, mean_wait;
	size_t backfilled, cycles;
};

static int read_trace(struct sim_job **ret, size_t *ret_n)
{
	struct sim_job *jobs = calloc(MAX_JOBS, sizeof(*jobs));
	size_t n = 0;
	int nodes;
	long long wall, run;

	if (!jobs)
		return -1;
	while (n < MAX_JOBS && scanf("%d %lld %lld", &nodes, &wall, &run) == 3) {
		if (nodes < 1 || nodes > MAX_NODES || wall < 1 || run < 1 || run > wall) {
			fprintf(stderr, "sim_admission: line %zu: bad job %d %lld %lld\n", n + 1,
			        nodes, wall, run);
			free(jobs);
			return -1;
		}
		jobs[n] = (struct sim_job){ .nodes = nodes, .walltime = wall, .run = run };
		snprintf(jobs[n].key, sizeof(jobs[n].key), "sim/j%05zu", n);
		n++;
	}
	*ret = jobs;
	*ret_n = n;
	return 0;
}

/* Runs the trace through tj_admit with backfill on or off. */
static int simulate(struct sim_job *jobs, size_t n_jobs, size_t n_nodes, bool backfill,
                    struct outcome *ret)
{
	static const char *const classes[] = { "gh200" };
	const struct tj_adm_config config = { .backfill = backfill,
		                              .defer_waiting_messages = true };
	struct tj_adm_node *nodes = calloc(n_nodes, sizeof(*nodes));
	char(*names)[32] = calloc(n_nodes, sizeof(*names));
	struct tj_adm_job *queue = calloc(n_jobs, sizeof(*queue));
	size_t *queued = calloc(n_jobs, sizeof(*queued));
	struct tj_adm_release *releases = calloc(n_nodes, sizeof(*releases));
	size_t done = 0, n_releases;
	int64_t now = 0, busy = 0, waits = 0;
	int rc = -1;

	if (!nodes || !names || !queue || !queued || !releases)
		goto out;
	*ret = (struct outcome){ 0 };
	for (size_t i = 0; i < n_nodes; i++) {
		snprintf(names[i], sizeof(names[i]), "gh-%05zu", i);
		nodes[i] = (struct tj_adm_node){
			.name = names[i],
			.schedulable = true,
			.allocatable = { GPUS_PER_NODE, 72000, 480LL << 30, 110 },
		};
	}
	for (size_t j = 0; j < n_jobs; j++) {
		jobs[j].start = jobs[j].end = -1;
		free(jobs[j].on);
		jobs[j].on = NULL;
	}
	while (done < n_jobs) {
		struct tj_adm_result *res = NULL;
		size_t n_queue = 0;
		int64_t next = INT64_MAX;

		/* The cluster now: who runs where, and when each running job's walltime ends. */
		for (size_t i = 0; i < n_nodes; i++)
			nodes[i].used = (struct tj_adm_resources){ 0 };
		n_releases = 0;
		for (size_t j = 0; j < n_jobs; j++) {
			struct sim_job *job = &jobs[j];

			if (job->start < 0) {
				queue[n_queue] = (struct tj_adm_job){
					.key = job->key,
					.namespace = "sim",
					.num_nodes = job->nodes,
					.num_pods = job->nodes,
					.request = pod_request,
					.creation_time = 1,
					.walltime = job->walltime,
				};
				queued[n_queue++] = j;
				continue;
			}
			if (job->end <= now)
				continue;
			for (int p = 0; p < job->nodes; p++) {
				nodes[job->on[p]].used = pod_request;
				releases[n_releases++] = (struct tj_adm_release){
					.node = job->on[p],
					.at = job->start + job->walltime,
					.resources = pod_request,
				};
			}
		}
		if (n_queue > 0) {
			const struct tj_adm_input in = {
				.config = &config,
				.class_names = classes,
				.n_classes = 1,
				.nodes = nodes,
				.n_nodes = n_nodes,
				.releases = releases,
				.n_releases = n_releases,
				.jobs = queue,
				.n_jobs = n_queue,
				.now = now,
			};

			if (tj_admit(&in, &res) < 0)
				goto out;
			ret->cycles++;
			for (size_t q = 0; q < n_queue; q++) {
				const struct tj_adm_decision *d = &res->decisions[q];
				struct sim_job *job = &jobs[queued[q]];

				if (d->verdict == TJ_ADM_NEVER_FITS) {
					fprintf(stderr, "sim_admission: %s never fits: %s\n",
					        job->key, d->message);
					tj_adm_result_free(res);
					goto out;
				}
				if (d->verdict != TJ_ADM_ADMITTED)
					continue;
				job->on = malloc(job->nodes * sizeof(*job->on));
				if (!job->on) {
					tj_adm_result_free(res);
					goto out;
				}
				memcpy(job->on, d->nodes, job->nodes * sizeof(*job->on));
				job->start = now;
				job->end = now + job->run;
				busy += (int64_t)job->nodes * job->run;
				waits += now;
				ret->backfilled += d->backfilled;
			}
			tj_adm_result_free(res);
		}
		/* The next event: the first end after now. */
		for (size_t j = 0; j < n_jobs; j++)
			if (jobs[j].start >= 0 && jobs[j].end > now && jobs[j].end < next)
				next = jobs[j].end;
		if (next == INT64_MAX) {
			fprintf(stderr,
			        "sim_admission: nothing runs and nothing starts at %" PRId64 " s\n",
			        now);
			goto out;
		}
		now = next;
		done = 0;
		for (size_t j = 0; j < n_jobs; j++)
			done += jobs[j].start >= 0 && jobs[j].end <= now;
	}
	ret->makespan = now;
	ret->utilisation = (double)busy / ((double)n_nodes * (double)now);
	ret->mean_wait = (double)waits / (double)n_jobs;
	rc = 0;
out:
	free(nodes);
	free(names);
	free(queue);
	free(queued);
	free(releases);
	return rc;
}

int main(int argc, char **argv)
{
	struct sim_job *jobs;
	struct outcome fifo, backfill;
	size_t n_jobs, n_nodes = argc > 1 ? strtoul(argv[1], NULL, 10) : 0;
	int64_t work = 0;
	int rc = 1;

	if (argc != 2 || n_nodes < 1 || n_nodes > MAX_NODES) {
		fprintf(stderr, "usage: sim_admission NODES < trace (lines: nodes walltime run)\n");
		return 2;
	}
	if (read_trace(&jobs, &n_jobs) < 0)
		return 1;
	if (n_jobs == 0) {
		fprintf(stderr, "sim_admission: the trace is empty\n");
		goto out;
	}
	for (size_t j = 0; j < n_jobs; j++)
		work += (int64_t)jobs[j].nodes * jobs[j].run;
	if (simulate(jobs, n_jobs, n_nodes, false, &fifo) < 0 ||
	    simulate(jobs, n_jobs, n_nodes, true, &backfill) < 0)
		goto out;
	printf("%zu jobs on %zu nodes, lower bound on the makespan %" PRId64 " s\n", n_jobs,
	       n_nodes, (work + (int64_t)n_nodes - 1) / (int64_t)n_nodes);
	printf("fifo:     makespan %" PRId64 " s, utilisation %.1f %%, wait mean %.0f s\n",
	       fifo.makespan, 100 * fifo.utilisation, fifo.mean_wait);
	printf("backfill: makespan %" PRId64 " s, utilisation %.1f %%, wait mean %.0f s, "
	       "%zu backfilled\n",
	       backfill.makespan, 100 * backfill.utilisation, backfill.mean_wait,
	       backfill.backfilled);
	printf("{\"jobs\": %zu, \"nodes\": %zu, \"fifo_makespan_s\": %" PRId64
	       ", \"fifo_utilisation\": %.4f, \"fifo_wait_mean_s\": %.1f, "
	       "\"backfill_makespan_s\": %" PRId64 ", \"backfill_utilisation\": %.4f, "
	       "\"backfill_wait_mean_s\": %.1f, \"backfilled\": %zu}\n",
	       n_jobs, n_nodes, fifo.makespan, fifo.utilisation, fifo.mean_wait, backfill.makespan,
	       backfill.utilisation, backfill.mean_wait, backfill.backfilled);
	rc = 0;
out:
	for (size_t j = 0; j < n_jobs; j++)
		free(jobs[j].on);
	free(jobs);
	return rc;
}
