/* The admission policy on a trace, without a cluster: a discrete-event simulation in which
 * tj_admit itself decides, cycle after cycle, which jobs start on which nodes, as the
 * admitter does on every job end. It measures what the policy gives (utilisation, makespan,
 * wait), apart from what the API server, the scheduler and the machine add to it, for FIFO
 * and backfill on the same trace.
 *
 *   sim_admission NODES [--overhead SECONDS] [--jobs] [--shares A:B:...] [--depth N]
 *                 [--scavenge RUN [--grace S] [--scavenge-walltime S] [--trace-grace S]
 *                  [--checkpoint S]] < trace
 *
 * The trace is one job a line, "nodes walltime run [namespace]" (seconds; the namespace a
 * number from 0, 0 when absent), all submitted at 0 in that order, each pod of 4 GPUs on
 * nodes of 4 GPUs: tests/bench/bench_admission.py's trace, printed by its make_trace (the
 * docs show the command). The queue is the controller's: backfill depth 8 (--depth), and fair
 * share between the namespaces (reconcilers/admission/fair_share.h) with the shares of --shares (1
 * each unless given; usage is the GPU-seconds each namespace's jobs ran, the run being far shorter
 * than the half-life). With more than one namespace it also prints each one's part of the
 * GPU-seconds over the busy period (until a namespace has no job left waiting) against its share.
 * Prints one line per way and a final JSON line; with --jobs, first a line per job and way, "way
 * index start end backfilled" (seconds), to set beside a cluster's timeline of the same trace.
 *
 * --overhead adds that many seconds (to a tenth) between a gang's admission and the start
 * of its run, during which it holds its nodes without running: what a cluster adds to each
 * start (the creates, the binding, the kubelet). The walltime counts from the admission, as
 * on the cluster, and cuts a run that the overhead pushes past it.
 *
 * --scavenge RUN adds a backlog of one-node jobs of the tier low that run RUN seconds (walltime
 * --scavenge-walltime, twice RUN unless given), in a namespace of their own, preempted by the
 * trace's jobs; their pods stop --grace seconds after they are told (30 unless given). The
 * queue counts a job's grace as the controller does (controller/admission/admitter_queue.c):
 * each job's nodes come back that long after its walltime ends, and a job backfilled must end,
 * grace included, before the reservations on its nodes start. The trace's own pods have
 * --trace-grace seconds (0 unless given; pods that do not set terminationGracePeriodSeconds,
 * as the benchmark's runtime, have the Kubernetes default, 30). The scavenge line gives, beside
 * the utilisation, the share of the trace's makespan the nodes were held by no job, neither
 * running nor in their overhead: what the policy leaves idle. --checkpoint S (to a tenth):
 * the low jobs' pods save their state and exit S seconds after they are told, which stops
 * them then (the queue counts their nodes back at the grace's end until then), and their
 * tier has backfillReservedNodes: bench_admission.py's --checkpoint.
 *
 * --share-period S computes the fair-share points again only when S seconds have passed
 * since they were last computed, as the controller reads the usage again every
 * TJ_ADMITTER_SHARES_PERIOD_S (controller/admission/admitter_share.h); 0, the default, at every
 * cycle. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reconcilers/admission/admission.h"
#include "reconcilers/admission/fair_share.h"

#define GPUS_PER_NODE 4
#define MAX_JOBS      100000
#define MAX_NODES     10000
/* The simulation's clock ticks ten times a second, so that an overhead may be a fraction of
 * a second; tj_admit only compares its times, so the unit does not matter to it. */
#define TICKS          10
#define MAX_NAMESPACES 16

/* What each pod of the trace asks, and so holds on its node: the whole node's GPUs. */
static const struct tj_admission_resources pod_request = { GPUS_PER_NODE, 1000, 1LL << 30, 1 };

struct sim_job {
	int nodes;
	int ns; /* the namespace, 0 .. MAX_NAMESPACES - 1 */
	int64_t walltime, run;
	int64_t start, end; /* -1 until started */
	bool backfilled;
	size_t *on; /* owned; the node of each pod once started */
	char key[32];
	/* --scavenge: of the tier low, preempted by the others (reconcilers/admission/admission.h);
	 * its stop once preempted (-1: not), the job that preempts it, and how often it was. */
	bool low;
	int64_t stop;
	int64_t stop_told; /* the stop its pods were told: the queue counts its nodes back then */
	size_t by;
	int preemptions;
	/* A job that preempts: the nodes it chose then (owned; NULL: none), as the admitter
	 * keeps them in its victims' records. */
	size_t *claimed;
	size_t n_claimed;
};

/* A stretch of time a job's pods held their nodes, for the utilisation over a window: from
 * its admission (admitted), running from `from` (after the overhead) until `to`. */
struct held {
	int nodes;
	int64_t admitted, from, to;
};

struct outcome {
	double makespan;
	double utilisation, mean_wait;
	size_t backfilled, cycles;
	/* --scavenge: the makespan of the jobs of the trace, the utilisation over it (the low
	 * jobs' runs too, preempted ones included), the share of it the nodes were held by no job
	 * (neither running nor starting: what the policy leaves idle), their mean wait, and the
	 * preemptions. */
	double trace_makespan, trace_utilisation, trace_idle, trace_wait;
	size_t preemptions;
	/* Each namespace's node-ticks run until the busy period ends (busy_until: the first
	 * time a namespace has no job left waiting). */
	int64_t busy_until;
	double ns_part[MAX_NAMESPACES];
};

static size_t n_namespaces = 1;
static int64_t grace = 30 * TICKS; /* --grace: a preempted job's pods stop that much later */
/* --trace-grace: the grace of the trace's own pods, which the queue counts after their
 * walltime (the cluster's runtime leaves the Kubernetes default, 30 s); 0 unless given */
static int64_t trace_grace;
/* --checkpoint: a preempted job's pods exit that long after they are told; -1: at the stop */
static int64_t checkpoint = -1;
/* --share-period: the fair-share points are computed again at most that often (the
 * controller's TJ_ADMITTER_SHARES_PERIOD_S); 0: at every cycle */
static int64_t share_period;
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

/* The node-ticks of the stretches within [0, until], from their runs' start, or from their
 * admission (since_admitted). */
static int64_t held_until(const struct held *h, size_t n, int64_t until, bool since_admitted)
{
	int64_t sum = 0;

	for (size_t i = 0; i < n; i++) {
		int64_t to = h[i].to < until ? h[i].to : until;
		int64_t from = since_admitted ? h[i].admitted : h[i].from;

		if (to > from)
			sum += (int64_t)h[i].nodes * (to - from);
	}
	return sum;
}

/* Records the stretch of each run that ends after from and no later than to, each once, busy
 * after its overhead; *trace_end the last end of a job of the trace. 0 or -1 (no memory). */
static int record_runs(const struct sim_job *jobs, size_t n_jobs, int64_t from, int64_t to,
                       int64_t overhead, struct held **held, size_t *n_held, size_t *cap,
                       int64_t *trace_end)
{
	for (size_t j = 0; j < n_jobs; j++) {
		const struct sim_job *job = &jobs[j];

		if (job->start < 0 || job->end > to || job->end <= from)
			continue;
		if (*n_held == *cap) {
			void *p = realloc(*held, (*cap *= 2) * sizeof(**held));

			if (!p)
				return -1;
			*held = p;
		}
		(*held)[(*n_held)++] =
		        (struct held){ job->nodes, job->start, job->start + overhead, job->end };
		if (!job->low && job->end > *trace_end)
			*trace_end = job->end;
	}
	return 0;
}

/* Runs the trace through tj_admit with backfill on or off; the low jobs (--scavenge) fill
 * what is idle, preempted by the others. */
static int simulate(struct sim_job *jobs, size_t n_jobs, size_t n_nodes, bool backfill,
                    int64_t overhead, struct outcome *ret)
{
	static const char *const classes[] = { "gh200" };
	const struct tj_admission_config config = { .backfill = backfill,
		                                    .defer_waiting_messages = true,
		                                    .reservations = depth };
	int points[MAX_NAMESPACES];
	int64_t points_at = 0;
	bool points_at_set = false;
	struct tj_admission_node *nodes = calloc(n_nodes, sizeof(*nodes));
	char(*names)[32] = calloc(n_nodes, sizeof(*names));
	struct tj_admission_job *queue = calloc(n_jobs, sizeof(*queue));
	size_t *queued = calloc(n_jobs, sizeof(*queued));
	struct tj_admission_release *releases = calloc(n_nodes, sizeof(*releases));
	struct tj_admission_running *running = calloc(n_jobs, sizeof(*running));
	size_t *running_job = calloc(n_jobs, sizeof(*running_job));
	struct tj_admission_hold *holds = calloc(n_nodes, sizeof(*holds));
	size_t held_cap = n_jobs * 2 + 16, n_held = 0;
	struct held *held = calloc(held_cap, sizeof(*held));
	bool *stopping_for = calloc(n_jobs, sizeof(*stopping_for));
	size_t done = 0, n_releases, n_trace = 0;
	int64_t now = 0, waits = 0, trace_end = 0;
	int rc = -1;

	if (!nodes || !names || !queue || !queued || !releases || !running || !running_job ||
	    !holds || !held || !stopping_for)
		goto out;
	*ret = (struct outcome){ 0 };
	for (size_t i = 0; i < n_nodes; i++) {
		snprintf(names[i], sizeof(names[i]), "gh-%05zu", i);
		nodes[i] = (struct tj_admission_node){
			.name = names[i],
			.schedulable = true,
			.allocatable = { GPUS_PER_NODE, 72000, 480LL << 30, 110 },
		};
	}
	for (size_t j = 0; j < n_jobs; j++) {
		jobs[j].start = jobs[j].end = jobs[j].stop = -1;
		jobs[j].backfilled = false;
		jobs[j].preemptions = 0;
		free(jobs[j].on);
		jobs[j].on = NULL;
		free(jobs[j].claimed);
		jobs[j].claimed = NULL;
		jobs[j].n_claimed = 0;
		n_trace += !jobs[j].low;
	}
	/* Until every job of the trace has ended: the low ones fill what is idle meanwhile. */
	while (done < n_trace) {
		struct tj_admission_result *res = NULL;
		size_t n_queue = 0, n_running = 0, n_holds = 0;
		int64_t next = INT64_MAX;

		/* The preempted jobs whose stop has come go back to the queue. */
		for (size_t j = 0; j < n_jobs; j++) {
			struct sim_job *job = &jobs[j];

			if (job->stop >= 0 && job->stop <= now) {
				job->start = job->end = job->stop = -1;
				free(job->on);
				job->on = NULL;
			}
		}
		/* The jobs whose victims are still stopping. */
		memset(stopping_for, 0, n_jobs * sizeof(*stopping_for));
		for (size_t v = 0; v < n_jobs; v++)
			if (jobs[v].stop > now)
				stopping_for[jobs[v].by] = true;
		/* The cluster now: who runs where, and when each running job's walltime ends. */
		if (!points_at_set || now - points_at >= share_period) {
			fair_points(jobs, n_jobs, now, points);
			points_at = now;
			points_at_set = true;
		}
		for (size_t i = 0; i < n_nodes; i++)
			nodes[i].used = (struct tj_admission_resources){ 0 };
		n_releases = 0;
		for (size_t j = 0; j < n_jobs; j++) {
			struct sim_job *job = &jobs[j];

			if (job->start < 0) {
				bool preempting = !job->low && stopping_for[j];

				queue[n_queue] = (struct tj_admission_job){
					.key = job->key,
					.namespace = ns_names[job->ns],
					.fair_share = points[job->ns],
					.num_nodes = job->nodes,
					.num_pods = job->nodes,
					.request = pod_request,
					.creation_time = 1,
					.walltime = job->walltime,
					.grace = job->low ? grace : trace_grace,
					.tier = job->low ? -1000 : 0,
					.preempts = job->low ? 0 : 1u << 1,
					.preempting = preempting,
					.backfill_reserved_nodes = job->low && checkpoint >= 0,
					.claimed = preempting ? job->claimed : NULL,
					.n_claimed = preempting ? job->n_claimed : 0,
				};
				queued[n_queue++] = j;
				continue;
			}
			if (job->end <= now)
				continue;
			if (job->low && job->stop < 0) {
				running[n_running] = (struct tj_admission_running){
					.key = job->key,
					.tier = -1000,
					.qos = 1,
					.start = job->start,
					.grace = grace,
					.holds = &holds[n_holds],
					.n_holds = (size_t)job->nodes,
				};
				running_job[n_running++] = j;
			}
			for (int p = 0; p < job->nodes; p++) {
				nodes[job->on[p]].used = pod_request;
				if (job->low && job->stop < 0)
					holds[n_holds++] =
					        (struct tj_admission_hold){ job->on[p],
						                            pod_request };
				releases[n_releases++] = (struct tj_admission_release){
					.node = job->on[p],
					.at = job->stop >= 0
					              ? job->stop_told
					              : job->start + job->walltime +
					                        (job->low ? grace : trace_grace),
					.resources = pod_request,
				};
			}
		}
		/* The busy period ends when a namespace has no job left waiting. */
		if (!ret->busy_until) {
			bool has[MAX_NAMESPACES] = { false };
			size_t waiting = 0;

			for (size_t q = 0; q < n_queue; q++)
				if (!jobs[queued[q]].low)
					has[jobs[queued[q]].ns] = true;
			for (size_t k = 0; k < n_namespaces; k++)
				waiting += has[k];
			if (waiting < n_namespaces)
				ret->busy_until = now;
		}
		if (n_queue > 0) {
			const struct tj_admission_input in = {
				.config = &config,
				.class_names = classes,
				.n_classes = 1,
				.nodes = nodes,
				.n_nodes = n_nodes,
				.releases = releases,
				.n_releases = n_releases,
				.jobs = queue,
				.n_jobs = n_queue,
				.running = running,
				.n_running = n_running,
				.now = now,
			};

			if (tj_admit(&in, &res) < 0)
				goto out;
			ret->cycles++;
			for (size_t q = 0; q < n_queue; q++) {
				const struct tj_admission_decision *d = &res->decisions[q];
				struct sim_job *job = &jobs[queued[q]];

				if (d->n_claimed) {
					free(job->claimed);
					job->claimed = malloc(d->n_claimed * sizeof(*job->claimed));
					if (!job->claimed) {
						tj_admission_result_free(res);
						goto out;
					}
					memcpy(job->claimed, d->claimed,
					       d->n_claimed * sizeof(*job->claimed));
					job->n_claimed = d->n_claimed;
				}
				for (size_t v = 0; v < d->n_victims; v++) {
					struct sim_job *victim = &jobs[running_job[d->victims[v]]];

					victim->stop = victim->stop_told = now + grace;
					if (checkpoint >= 0 && checkpoint < grace)
						victim->stop = now + checkpoint;
					victim->by = queued[q];
					victim->preemptions++;
					ret->preemptions++;
					if (victim->end > victim->stop)
						victim->end = victim->stop;
				}
				if (d->verdict == TJ_ADMISSION_NEVER_FITS) {
					fprintf(stderr, "sim_admission: %s never fits: %s\n",
					        job->key, d->message);
					tj_admission_result_free(res);
					goto out;
				}
				if (d->verdict != TJ_ADMISSION_ADMITTED)
					continue;
				job->on = malloc(job->nodes * sizeof(*job->on));
				if (!job->on) {
					tj_admission_result_free(res);
					goto out;
				}
				memcpy(job->on, d->nodes, job->nodes * sizeof(*job->on));
				job->start = now;
				job->end = now + (overhead + job->run < job->walltime
				                          ? overhead + job->run
				                          : job->walltime);
				if (!job->low)
					waits += now;
				job->backfilled = d->backfilled;
				ret->backfilled += d->backfilled;
			}
			tj_admission_result_free(res);
		}
		/* The next event: the first end (a preempted job's stop among them) after now. */
		for (size_t j = 0; j < n_jobs; j++)
			if (jobs[j].start >= 0 && jobs[j].end > now && jobs[j].end < next)
				next = jobs[j].end;
		if (next == INT64_MAX) {
			fprintf(stderr,
			        "sim_admission: nothing runs and nothing starts at %.1f s\n",
			        (double)now / TICKS);
			goto out;
		}
		/* The runs that end by then. */
		if (record_runs(jobs, n_jobs, now, next, overhead, &held, &n_held, &held_cap,
		                &trace_end) < 0)
			goto out;
		now = next;
		done = 0;
		for (size_t j = 0; j < n_jobs; j++)
			done += !jobs[j].low && jobs[j].start >= 0 && jobs[j].end <= now;
	}
	/* The low jobs that still run when the last of the trace ends. */
	if (record_runs(jobs, n_jobs, now, INT64_MAX, overhead, &held, &n_held, &held_cap,
	                &trace_end) < 0)
		goto out;
	if (!ret->busy_until)
		ret->busy_until = now;
	double total = 0;

	for (size_t j = 0; j < n_jobs; j++)
		if (!jobs[j].low)
			total += (double)ran_until(&jobs[j], ret->busy_until);
	for (size_t j = 0; j < n_jobs && total > 0; j++)
		if (!jobs[j].low)
			ret->ns_part[jobs[j].ns] +=
			        (double)ran_until(&jobs[j], ret->busy_until) / total;
	ret->makespan = (double)now / TICKS;
	ret->utilisation =
	        (double)held_until(held, n_held, now, false) / ((double)n_nodes * (double)now);
	ret->mean_wait = (double)waits / TICKS / (double)n_trace;
	ret->trace_makespan = (double)trace_end / TICKS;
	if (trace_end) {
		double capacity = (double)n_nodes * (double)trace_end;

		ret->trace_utilisation =
		        (double)held_until(held, n_held, trace_end, false) / capacity;
		ret->trace_idle = 1 - (double)held_until(held, n_held, trace_end, true) / capacity;
	}
	ret->trace_wait = ret->mean_wait;
	rc = 0;
out:
	free(nodes);
	free(names);
	free(queue);
	free(queued);
	free(releases);
	free(running);
	free(running_job);
	free(holds);
	free(held);
	free(stopping_for);
	return rc;
}

/* Seconds to a tenth, 0 to 3600, as ticks: whether arg is such a number. */
static bool parse_tenths(const char *arg, int64_t *ret)
{
	char *end;
	double seconds = strtod(arg, &end);

	if (end == arg || *end || !(seconds >= 0 && seconds <= 3600))
		return false;
	*ret = (int64_t)(seconds * TICKS + 0.5);
	return true;
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
	                "[--shares A:B:...] [--share-period S] [--depth N] [--scavenge RUN "
	                "[--grace SECONDS] [--trace-grace SECONDS] "
	                "[--scavenge-walltime SECONDS] [--checkpoint SECONDS]] < "
	                "trace (lines: nodes walltime run [namespace])\n");
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
	struct outcome fifo, backfill, scavenge = { 0 };
	size_t n_jobs, n_nodes = argc > 1 ? strtoul(argv[1], NULL, 10) : 0;
	/* The low jobs' walltime: twice their run unless --scavenge-walltime (bench_admission.py's
	 * are their run plus 5 s). */
	int64_t work = 0, overhead = 0, scavenge_run = 0, scavenge_walltime = 0;
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
		} else if (strcmp(argv[i], "--scavenge") == 0 && i + 1 < argc) {
			scavenge_run = atoll(argv[++i]) * TICKS;
			if (scavenge_run < TICKS || scavenge_run > 86400LL * TICKS)
				return usage();
		} else if (strcmp(argv[i], "--scavenge-walltime") == 0 && i + 1 < argc) {
			scavenge_walltime = atoll(argv[++i]) * TICKS;
			if (scavenge_walltime < TICKS || scavenge_walltime > 86400LL * TICKS)
				return usage();
		} else if (strcmp(argv[i], "--share-period") == 0 && i + 1 < argc) {
			share_period = atoll(argv[++i]) * TICKS;
			if (share_period < 0 || share_period > 86400LL * TICKS)
				return usage();
		} else if (strcmp(argv[i], "--trace-grace") == 0 && i + 1 < argc) {
			trace_grace = atoll(argv[++i]) * TICKS;
			if (trace_grace < 0 || trace_grace > 3600LL * TICKS)
				return usage();
		} else if (strcmp(argv[i], "--grace") == 0 && i + 1 < argc) {
			grace = atoll(argv[++i]) * TICKS;
			if (grace < 0 || grace > 3600LL * TICKS)
				return usage();
		} else if (strcmp(argv[i], "--checkpoint") == 0 && i + 1 < argc) {
			if (!parse_tenths(argv[++i], &checkpoint))
				return usage();
		} else if (strcmp(argv[i], "--overhead") == 0 && i + 1 < argc) {
			if (!parse_tenths(argv[++i], &overhead))
				return usage();
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

	/* The scavengers: a backlog of one-node jobs of the tier low, in a namespace of their
	 * own, enough to keep every node busy one and a half times the backfill's makespan. */
	if (scavenge_run) {
		size_t n_low = (size_t)((double)n_nodes * backfill.makespan * TICKS * 1.5 /
		                        (double)scavenge_run) +
		               1;

		if (n_jobs + n_low > MAX_JOBS || n_namespaces >= MAX_NAMESPACES) {
			fprintf(stderr, "sim_admission: too many scavengers (%zu)\n", n_low);
			goto out;
		}
		for (size_t k = 0; k < n_low; k++) {
			struct sim_job *low = &jobs[n_jobs + k];

			*low = (struct sim_job){ .nodes = 1,
				                 .ns = (int)n_namespaces,
				                 .walltime = scavenge_walltime ? scavenge_walltime
				                                               : 2 * scavenge_run,
				                 .run = scavenge_run,
				                 .low = true };
			snprintf(low->key, sizeof(low->key), "sim/low%05zu", k);
		}
		n_namespaces++; /* for the fair share; the parts count the trace's alone */
		if (simulate(jobs, n_jobs + n_low, n_nodes, true, overhead, &scavenge) < 0)
			goto out;
		n_namespaces--;
		for (size_t k = 0; k < n_low; k++)
			free(jobs[n_jobs + k].on);
		printf("scavenge: %zu low jobs of %.0f s (grace %.0f s): the trace's makespan "
		       "%.1f s, utilisation %.1f %% over it (nodes held by no job %.1f %%), the "
		       "trace's wait mean %.0f s (%+.0f s against backfill), %zu preemptions\n",
		       n_low, (double)scavenge_run / TICKS, (double)grace / TICKS,
		       scavenge.trace_makespan, 100 * scavenge.trace_utilisation,
		       100 * scavenge.trace_idle, scavenge.trace_wait,
		       scavenge.trace_wait - backfill.mean_wait, scavenge.preemptions);
	}

	printf("{\"jobs\": %zu, \"nodes\": %zu, \"overhead_s\": %.1f, \"fifo_makespan_s\": %.1f, "
	       "\"fifo_utilisation\": %.4f, \"fifo_wait_mean_s\": %.1f, "
	       "\"backfill_makespan_s\": %.1f, \"backfill_utilisation\": %.4f, "
	       "\"backfill_wait_mean_s\": %.1f, \"backfilled\": %zu, \"namespaces\": %zu, "
	       "\"fifo_share_gap\": %.4f, \"backfill_share_gap\": %.4f, "
	       "\"scavenge_utilisation\": %.4f, \"scavenge_idle\": %.4f, "
	       "\"scavenge_wait_mean_s\": %.1f, "
	       "\"preemptions\": %zu}\n",
	       n_jobs, n_nodes, (double)overhead / TICKS, fifo.makespan, fifo.utilisation,
	       fifo.mean_wait, backfill.makespan, backfill.utilisation, backfill.mean_wait,
	       backfill.backfilled, n_namespaces, fifo_gap, backfill_gap,
	       scavenge.trace_utilisation, scavenge.trace_idle, scavenge.trace_wait,
	       scavenge.preemptions);
	rc = 0;
out:
	for (size_t j = 0; j < n_jobs; j++) {
		free(jobs[j].on);
		free(jobs[j].claimed);
	}
	free(jobs);
	return rc;
}
