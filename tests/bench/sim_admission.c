/* The admission policy on a trace, without a cluster: a discrete-event simulation in which
 * tj_admit itself decides, cycle after cycle, which jobs start on which nodes, as the
 * admitter does on every job end. It measures what the policy gives (utilisation, makespan,
 * wait), apart from what the API server, the scheduler and the machine add to it, for FIFO
 * and backfill on the same trace.
 *
 *   sim_admission NODES [--overhead SECONDS] [--jobs] [--shares A:B:...] [--depth N] < trace
 *
 * The trace is one job a line, "nodes walltime run [namespace]" (seconds; the namespace a
 * number from 0, 0 when absent), all submitted at 0 in that order, each pod of 4 GPUs on
 * nodes of 4 GPUs: tests/bench/bench_admission.py's trace, printed by its make_trace (the
 * README has the command). The queue is the controller's: backfill depth 8 (--depth), and fair
 * share between the namespaces (reconcilers/fair_share.h) with the shares of --shares (1 each
 * unless given; usage is the GPU-seconds each namespace's jobs ran, the run being far
 * shorter than the half-life). With more than one namespace it also prints each one's part
 * of the GPU-seconds over the busy period (until a namespace has no job left waiting)
 * against its share. Prints one line per way and a
 * final JSON line; with --jobs, first a line per job and way, "way index start end
 * backfilled" (seconds), to set beside a cluster's timeline of the same trace.
 *
 * --overhead adds that many seconds (to a tenth) between a gang's admission and the start
 * of its run, during which it holds its nodes without running: what a cluster adds to each
 * start (the creates, the binding, the kubelet). The walltime counts from the admission, as
 * on the cluster, and cuts a run that the overhead pushes past it. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reconcilers/admission.h"
#include "reconcilers/fair_share.h"

#define GPUS_PER_NODE 4
#define MAX_JOBS      100000
#define MAX_NODES     10000
/* The simulation's clock ticks ten times a second, so that an overhead may be a fraction of
 * a second; tj_admit only compares its times, so the unit does not matter to it. */
#define TICKS          10
#define MAX_NAMESPACES 16

/* What each pod of the trace asks, and so holds on its node: the whole node's GPUs. */
static const struct tj_adm_resources pod_request = { GPUS_PER_NODE, 1000, 1LL << 30, 1 };

struct sim_job {
	int nodes;
	int ns; /* the namespace, 0 .. MAX_NAMESPACES - 1 */
	int64_t walltime, run;
	int64_t start, end; /* -1 until started */
	bool backfilled;
	size_t *on; /* owned; the node of each pod once started */
	char key[32];
};

struct outcome {
	double makespan;
	double utilisation, mean_wait;
	size_t backfilled, cycles;
	/* Each namespace's node-ticks run until the busy period ends (busy_until: the first
	 * time a namespace has no job left waiting). */
	int64_t busy_until;
	double ns_part[MAX_NAMESPACES];
};

static size_t n_namespaces = 1;
static int depth = 8; /* the backfill depth (admission.backfillDepth) */
static double shares[MAX_NAMESPACES] = { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 };
static const char *const ns_names[MAX_NAMESPACES] = { "ns0",  "ns1",  "ns2",  "ns3", "ns4",  "ns5",
	                                              "ns6",  "ns7",  "ns8",  "ns9", "ns10", "ns11",
	                                              "ns12", "ns13", "ns14", "ns15" };

/* The node-ticks a job ran from its start until t. */
static int64_t ran_until(const struct sim_job *job, int64_t t)
{
	int64_t end = job->end < t ? job->end : t;

	return job->start >= 0 && end > job->start ? (int64_t)job->nodes * (end - job->start) : 0;
}

/* The fair-share points of each namespace at now, from what its jobs ran so far. */
static void fair_points(const struct sim_job *jobs, size_t n_jobs, int64_t now,
                        int points[MAX_NAMESPACES])
{
	struct tj_fair_share_account a[MAX_NAMESPACES];

	for (size_t k = 0; k < n_namespaces; k++)
		a[k] = (struct tj_fair_share_account){ .namespace = ns_names[k],
			                               .share = shares[k] };
	for (size_t j = 0; j < n_jobs; j++)
		a[jobs[j].ns].usage += (double)ran_until(&jobs[j], now);
	tj_fair_share_factors(a, n_namespaces);
	for (size_t k = 0; k < n_namespaces; k++)
		points[k] = a[k].points;
}

static int read_trace(struct sim_job **ret, size_t *ret_n)
{
	struct sim_job *jobs = calloc(MAX_JOBS, sizeof(*jobs));
	size_t n = 0;
	int nodes, ns, got;
	long long wall, run;
	char line[256];

	if (!jobs)
		return -1;
	while (n < MAX_JOBS && fgets(line, sizeof(line), stdin)) {
		ns = 0;
		got = sscanf(line, "%d %lld %lld %d", &nodes, &wall, &run, &ns);
		if (got < 3 || nodes < 1 || nodes > MAX_NODES || wall < 1 || run < 1 ||
		    run > wall || ns < 0 || ns >= MAX_NAMESPACES) {
			fprintf(stderr, "sim_admission: line %zu: bad job %d %lld %lld\n", n + 1,
			        nodes, wall, run);
			free(jobs);
			return -1;
		}
		jobs[n] = (struct sim_job){
			.nodes = nodes, .ns = ns, .walltime = wall * TICKS, .run = run * TICKS
		};
		if ((size_t)ns >= n_namespaces)
			n_namespaces = (size_t)ns + 1;
		snprintf(jobs[n].key, sizeof(jobs[n].key), "sim/j%05zu", n);
		n++;
	}
	*ret = jobs;
	*ret_n = n;
	return 0;
}

/* Runs the trace through tj_admit with backfill on or off. */
static int simulate(struct sim_job *jobs, size_t n_jobs, size_t n_nodes, bool backfill,
                    int64_t overhead, struct outcome *ret)
{
	static const char *const classes[] = { "gh200" };
	const struct tj_adm_config config = { .backfill = backfill,
		                              .defer_waiting_messages = true,
		                              .reservations = depth };
	int points[MAX_NAMESPACES];
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
		jobs[j].backfilled = false;
		free(jobs[j].on);
		jobs[j].on = NULL;
	}
	while (done < n_jobs) {
		struct tj_adm_result *res = NULL;
		size_t n_queue = 0;
		int64_t next = INT64_MAX;

		/* The cluster now: who runs where, and when each running job's walltime ends. */
		fair_points(jobs, n_jobs, now, points);
		for (size_t i = 0; i < n_nodes; i++)
			nodes[i].used = (struct tj_adm_resources){ 0 };
		n_releases = 0;
		for (size_t j = 0; j < n_jobs; j++) {
			struct sim_job *job = &jobs[j];

			if (job->start < 0) {
				queue[n_queue] = (struct tj_adm_job){
					.key = job->key,
					.namespace = ns_names[job->ns],
					.fair_share = points[job->ns],
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
		/* The busy period ends when a namespace has no job left waiting. */
		if (!ret->busy_until) {
			bool has[MAX_NAMESPACES] = { false };
			size_t waiting = 0;

			for (size_t q = 0; q < n_queue; q++)
				has[jobs[queued[q]].ns] = true;
			for (size_t k = 0; k < n_namespaces; k++)
				waiting += has[k];
			if (waiting < n_namespaces)
				ret->busy_until = now;
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
				job->end = now + (overhead + job->run < job->walltime
				                          ? overhead + job->run
				                          : job->walltime);
				busy += (int64_t)job->nodes * (job->end - now - overhead);
				waits += now;
				job->backfilled = d->backfilled;
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
			        "sim_admission: nothing runs and nothing starts at %.1f s\n",
			        (double)now / TICKS);
			goto out;
		}
		now = next;
		done = 0;
		for (size_t j = 0; j < n_jobs; j++)
			done += jobs[j].start >= 0 && jobs[j].end <= now;
	}
	if (!ret->busy_until)
		ret->busy_until = now;
	double total = 0;

	for (size_t j = 0; j < n_jobs; j++)
		total += (double)ran_until(&jobs[j], ret->busy_until);
	for (size_t j = 0; j < n_jobs && total > 0; j++)
		ret->ns_part[jobs[j].ns] += (double)ran_until(&jobs[j], ret->busy_until) / total;
	ret->makespan = (double)now / TICKS;
	ret->utilisation = (double)busy / ((double)n_nodes * (double)now);
	ret->mean_wait = (double)waits / TICKS / (double)n_jobs;
	rc = 0;
out:
	free(nodes);
	free(names);
	free(queue);
	free(queued);
	free(releases);
	return rc;
}

static void print_jobs(const char *way, const struct sim_job *jobs, size_t n_jobs)
{
	for (size_t j = 0; j < n_jobs; j++)
		printf("%s %zu %.1f %.1f %d\n", way, j, (double)jobs[j].start / TICKS,
		       (double)jobs[j].end / TICKS, jobs[j].backfilled);
}

static int usage(void)
{
	fprintf(stderr, "usage: sim_admission NODES [--overhead SECONDS] [--jobs] "
	                "[--shares A:B:...] [--depth N] < trace (lines: nodes walltime run "
	                "[namespace])\n");
	return 2;
}

/* "2:1:1": the shares of namespaces 0, 1, 2. */
static int parse_shares(const char *s)
{
	for (size_t k = 0; k < MAX_NAMESPACES && *s; k++) {
		char *end;
		double v = strtod(s, &end);

		if (end == s || !(v > 0 && v <= TJ_FAIR_SHARE_MAX_SHARE) || (*end && *end != ':'))
			return -1;
		shares[k] = v;
		s = *end ? end + 1 : end;
	}
	return *s ? -1 : 0;
}

/* Each namespace's part of the GPU-seconds over the busy period against its share, and the
 * largest relative gap between the two. */
static double print_parts(const char *way, const struct outcome *o)
{
	double sum = 0, worst = 0;

	for (size_t k = 0; k < n_namespaces; k++)
		sum += shares[k];
	printf("%s: over the busy period (%.0f s)", way, (double)o->busy_until / TICKS);
	for (size_t k = 0; k < n_namespaces; k++) {
		double want = shares[k] / sum, gap = (o->ns_part[k] - want) / want;

		printf("%s ns%zu %.1f %% (share %.1f %%)", k ? "," : "", k, 100 * o->ns_part[k],
		       100 * want);
		if (gap < 0)
			gap = -gap;
		if (gap > worst)
			worst = gap;
	}
	printf("; largest gap %.1f %% of a share\n", 100 * worst);
	return worst;
}

int main(int argc, char **argv)
{
	struct sim_job *jobs;
	struct outcome fifo, backfill;
	size_t n_jobs, n_nodes = argc > 1 ? strtoul(argv[1], NULL, 10) : 0;
	int64_t work = 0, overhead = 0;
	bool per_job = false;
	int rc = 1;

	if (n_nodes < 1 || n_nodes > MAX_NODES)
		return usage();
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--jobs") == 0) {
			per_job = true;
		} else if (strcmp(argv[i], "--depth") == 0 && i + 1 < argc) {
			depth = atoi(argv[++i]);
			if (depth < 1 || depth > 1000)
				return usage();
		} else if (strcmp(argv[i], "--shares") == 0 && i + 1 < argc) {
			if (parse_shares(argv[++i]) < 0)
				return usage();
		} else if (strcmp(argv[i], "--overhead") == 0 && i + 1 < argc) {
			char *end;
			double seconds = strtod(argv[++i], &end);

			if (*end || !(seconds >= 0 && seconds <= 3600))
				return usage();
			overhead = (int64_t)(seconds * TICKS + 0.5);
		} else {
			return usage();
		}
	}
	if (read_trace(&jobs, &n_jobs) < 0)
		return 1;
	if (n_jobs == 0) {
		fprintf(stderr, "sim_admission: the trace is empty\n");
		goto out;
	}
	for (size_t j = 0; j < n_jobs; j++)
		work += (int64_t)jobs[j].nodes * jobs[j].run;
	if (simulate(jobs, n_jobs, n_nodes, false, overhead, &fifo) < 0)
		goto out;
	if (per_job)
		print_jobs("fifo", jobs, n_jobs);
	if (simulate(jobs, n_jobs, n_nodes, true, overhead, &backfill) < 0)
		goto out;
	if (per_job)
		print_jobs("backfill", jobs, n_jobs);
	printf("%zu jobs on %zu nodes, lower bound on the makespan %.0f s, overhead %.1f s a "
	       "start\n",
	       n_jobs, n_nodes, (double)work / TICKS / (double)n_nodes, (double)overhead / TICKS);
	printf("fifo:     makespan %.1f s, utilisation %.1f %%, wait mean %.0f s\n", fifo.makespan,
	       100 * fifo.utilisation, fifo.mean_wait);
	printf("backfill: makespan %.1f s, utilisation %.1f %%, wait mean %.0f s, "
	       "%zu backfilled\n",
	       backfill.makespan, 100 * backfill.utilisation, backfill.mean_wait,
	       backfill.backfilled);
	double fifo_gap = n_namespaces > 1 ? print_parts("fifo", &fifo) : 0;
	double backfill_gap = n_namespaces > 1 ? print_parts("backfill", &backfill) : 0;

	printf("{\"jobs\": %zu, \"nodes\": %zu, \"overhead_s\": %.1f, \"fifo_makespan_s\": %.1f, "
	       "\"fifo_utilisation\": %.4f, \"fifo_wait_mean_s\": %.1f, "
	       "\"backfill_makespan_s\": %.1f, \"backfill_utilisation\": %.4f, "
	       "\"backfill_wait_mean_s\": %.1f, \"backfilled\": %zu, \"namespaces\": %zu, "
	       "\"fifo_share_gap\": %.4f, \"backfill_share_gap\": %.4f}\n",
	       n_jobs, n_nodes, (double)overhead / TICKS, fifo.makespan, fifo.utilisation,
	       fifo.mean_wait, backfill.makespan, backfill.utilisation, backfill.mean_wait,
	       backfill.backfilled, n_namespaces, fifo_gap, backfill_gap);
	rc = 0;
out:
	for (size_t j = 0; j < n_jobs; j++)
		free(jobs[j].on);
	free(jobs);
	return rc;
}
