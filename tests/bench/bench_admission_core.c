/* The admission decision at scale, at the unit level: a synthetic queue of 5,000 TrainJobs
 * on 2,000 GH200 nodes of 4 GPUs in racks of 32 (the topology label), decided again and
 * again as the controller does after every capacity change. Reports the time per run (the
 * mean, the median and the 99th percentile) and the decisions per second (jobs decided per
 * run / time per run).
 *
 *   build/tests/bench/bench_admission_core [runs] [jobs] [nodes] [SHAPE|all] [depth] [tries]
 *
 * SHAPE is busy, empty, steady, distinct, classes or classes-settled (below).
 * depth is the backfill depth (admission.backfillDepth: how many blocked jobs get a
 * reservation), 8 as shipped; tries the bound of tries per class (admission.backfillMaxJobTest),
 * 500 as shipped, 0 for none. Each run resumes its tries where the last one's stopped, as the
 * admitter's cycles do.
 * The shapes of the cluster: "busy", 90 % of the nodes in use by running jobs whose
 * walltimes end over the next hour (the steady state: a few gangs start, the head gets a
 * reservation, the rest backfill or wait), and "empty", every node free (a restarted
 * controller facing a full queue: thousands of gangs start in one run). Jobs: 1 to 8 nodes
 * of 1, 2 or 4 GPUs, three priorities, walltimes of 20 s to 1 h or none, ten namespaces.
 * A third, "steady", is bench_admission.py's scale run: every node runs a whole-node rank
 * of a 30-minute walltime but one gang's worth, and the queue holds gangs of 4 whole nodes.
 * A fourth, "distinct", is "busy" with every job's pods asking a memory of their own (a MiB
 * more than the job before): a queue of as many shapes as jobs, where no job is decided from
 * what the look at another's shape counted. "classes" deals the nodes and the jobs between
 * two classes: every node with 1 to 3 of its 4 GPUs in use, jobs of whole-node pods of
 * shapes of their own, none of which fits now; each run, a release of the first class moves
 * by a second, so that only the first class's input changes. "classes-settled" is the same,
 * each run given the last one's digests, so that the second class is settled. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "reconcilers/admission/admission.h"

#define NOW       1795946400
#define RACK      32
#define GIB       (1024LL * 1024 * 1024)
#define LABEL_MAX 32

/* The backfill depth of every run (argv[5]), and the bound of tries (argv[6]). */
static int depth = 8;
static int tries = 500;

/* A fixed sequence, so that every run of the benchmark decides the same queue. */
static uint64_t next_random(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}

static int64_t pick(uint64_t *state, int64_t lo, int64_t hi)
{
	return lo + (int64_t)(next_random(state) % (uint64_t)(hi - lo + 1));
}

struct synthetic {
	struct tj_admission_config config;
	struct tj_admission_node *nodes;
	struct tj_admission_release *releases;
	struct tj_admission_job *jobs;
	char (*names)[LABEL_MAX];
	char (*keys)[LABEL_MAX];
	char (*racks)[LABEL_MAX];
	struct tj_admission_input in;
};

static const char *const namespaces[] = { "team-0", "team-1", "team-2", "team-3", "team-4",
	                                  "team-5", "team-6", "team-7", "team-8", "team-9" };
static const char *const class_names[] = { "gh200", "h100" };

/* A shape of cluster and queue (main's table). */
struct shape {
	const char *name;
	int busy_percent; /* -1: steady */
	bool distinct;    /* every job a shape of its own */
	bool classes;     /* two classes, the nodes and jobs dealt between them */
	bool settle;      /* each run given the last one's digests (settled classes) */
};

static void synthetic_free(struct synthetic *s)
{
	free(s->nodes);
	free(s->releases);
	free(s->jobs);
	free(s->names);
	free(s->keys);
	free(s->racks);
}

static int synthetic_build(struct synthetic *s, size_t n_jobs, size_t n_nodes,
                           const struct shape *sh)
{
	uint64_t seed = 0x9e3779b97f4a7c15ULL;
	int busy_percent = sh->busy_percent;
	bool distinct = sh->distinct;

	memset(s, 0, sizeof(*s));
	s->nodes = calloc(n_nodes, sizeof(*s->nodes));
	s->releases = calloc(n_nodes, sizeof(*s->releases));
	s->jobs = calloc(n_jobs, sizeof(*s->jobs));
	s->names = calloc(n_nodes, sizeof(*s->names));
	s->racks = calloc(n_nodes / RACK + 1, sizeof(*s->racks));
	s->keys = calloc(n_jobs, sizeof(*s->keys));
	if (!s->nodes || !s->releases || !s->jobs || !s->names || !s->racks || !s->keys)
		return -ENOMEM;
	/* steady as the admitter decides: the waiting jobs' messages left to the few it tells */
	s->config = (struct tj_admission_config){ .backfill = true,
		                                  .defer_waiting_messages = busy_percent < 0,
		                                  .reservations = depth,
		                                  .max_tries = tries };
	for (size_t i = 0; i < n_nodes; i++) {
		struct tj_admission_node *node = &s->nodes[i];

		snprintf(s->names[i], LABEL_MAX, "gh200-%05zu", i);
		snprintf(s->racks[i / RACK], LABEL_MAX, "rack-%03zu", i / RACK);
		*node = (struct tj_admission_node){
			.name = s->names[i],
			.class_index = sh->classes ? (int)(i % 2) : 0,
			.domain = s->racks[i / RACK],
			.schedulable = i % 200 != 7, /* a few cordoned */
			.allocatable = { 4, 72000, 480 * GIB },
		};
		if (busy_percent < 0) {
			/* steady: every node but a gang's worth runs a whole-node rank (with two
			 * classes, every node) */
			if ((i < 4 && !sh->classes) || i % 200 == 7)
				continue;
			node->used = node->allocatable;
			s->releases[s->in.n_releases++] =
			        (struct tj_admission_release){ .node = i,
				                               .at = NOW + pick(&seed, 60, 1800),
				                               .resources = node->used };
		} else if (pick(&seed, 1, 100) <= busy_percent) {
			/* with two classes, no node is whole: 1 to 3 GPUs in use on each */
			int64_t gpus = pick(&seed, 1, sh->classes ? 3 : 4);

			node->used = (struct tj_admission_resources){ gpus, gpus * 16000,
				                                      gpus * 100 * GIB, 0 };
			s->releases[s->in.n_releases++] =
			        (struct tj_admission_release){ .node = i,
				                               .at = NOW + pick(&seed, 10, 3600),
				                               .resources = node->used };
		}
	}
	for (size_t i = 0; i < n_jobs; i++) {
		static const int64_t gpus[] = { 1, 2, 4, 4 };
		static const int32_t priorities[] = { 0, 0, 0, 100, 1000 };
		/* with two classes, whole-node pods, which no node holds now */
		int64_t g = sh->classes ? 4 : gpus[pick(&seed, 0, 3)],
		        walltime = pick(&seed, 0, 4) ? pick(&seed, 20, 3600) : 0;
		const char *ns = namespaces[pick(&seed, 0, 9)];

		snprintf(s->keys[i], LABEL_MAX, "%s/job-%05zu", ns, i);
		s->jobs[i] = (struct tj_admission_job){
			.key = s->keys[i],
			.namespace = ns,
			.num_nodes = (int)pick(&seed, 1, 8),
			.request = { g, g * 16000,
			             g * 100 * GIB + (distinct ? (int64_t)i * 1024 * 1024 : 0) },
			.priority = priorities[pick(&seed, 0, 4)],
			.creation_time = NOW - pick(&seed, 0, 86400),
			.walltime = walltime,
			.restart = pick(&seed, 0, 99) == 0,
		};
		if (busy_percent < 0) /* steady: the scale run's queue of whole-node gangs */
			s->jobs[i] = (struct tj_admission_job){ .key = s->keys[i],
				                                .namespace = ns,
				                                .num_nodes = 4,
				                                .request = { 4, 72000, 480 * GIB },
				                                .creation_time =
				                                        NOW - 86400 + (int64_t)i,
				                                .walltime = 1800 };
		s->jobs[i].num_pods = s->jobs[i].num_nodes;
		s->jobs[i].class_index = sh->classes ? (int)(i % 2) : 0;
	}
	s->in = (struct tj_admission_input){
		.config = &s->config,
		.class_names = class_names,
		.n_classes = sh->classes ? 2 : 1,
		.nodes = s->nodes,
		.n_nodes = n_nodes,
		.releases = s->releases,
		.n_releases = s->in.n_releases,
		.jobs = s->jobs,
		.n_jobs = n_jobs,
		.now = NOW,
	};
	return 0;
}

/* CPU time of the process: the machine the benchmark runs on may be shared, and the
 * decision runs on one thread without waiting for anything. */
static double seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int reorder(struct synthetic *s, const struct tj_admission_result *res)
{
	struct tj_admission_job *jobs = calloc(s->in.n_jobs + 1, sizeof(*jobs));

	if (!jobs)
		return -ENOMEM;
	for (size_t i = 0; i < s->in.n_jobs; i++)
		jobs[res->decisions[i].rank] = s->jobs[i];
	memcpy(s->jobs, jobs, s->in.n_jobs * sizeof(*jobs));
	free(jobs);
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The q-quantile of the n times of t, sorted in place: the nearest rank. */
static double quantile(double *t, int n, double q)
{
	qsort(t, (size_t)n, sizeof(*t), cmp_double);
	return t[(int)(q * (n - 1) + 0.5)];
}

static int bench(const struct shape *sh, int runs, size_t n_jobs, size_t n_nodes)
{
	struct synthetic s;
	struct tj_admission_result *res = NULL;
	double start, worst = 0, total = 0, *times = calloc((size_t)runs, sizeof(*times));
	int err = times ? synthetic_build(&s, n_jobs, n_nodes, sh) : -ENOMEM;
	size_t cursor[3] = { 0 }, untried = 0, settled = 0;
	uint64_t digests[3] = { 0 };

	for (int i = 0; i < runs && err == 0; i++) {
		double t;

		/* As the admitter does: the jobs in the order of the last run's ranks, the tries
		 * from where the last run's stopped. */
		if (res && reorder(&s, res) < 0) {
			err = -ENOMEM;
			break;
		}
		if (res) {
			memcpy(cursor, res->cursors, (s.in.n_classes + 1) * sizeof(*cursor));
			memcpy(digests, res->digests, (s.in.n_classes + 1) * sizeof(*digests));
		}
		s.in.cursors = cursor;
		s.in.digests = sh->settle && res ? digests : NULL;
		/* With two classes, a release of the first moves by a second each run: the first
		 * class is decided again, the second's input stays the same. */
		if (sh->classes && s.in.n_releases)
			s.releases[0].at += i % 2 ? 1 : -1;
		res = tj_admission_result_free(res);
		start = seconds();
		err = tj_admit(&s.in, &res);
		t = seconds() - start;
		times[i] = t;
		total += t;
		untried += res ? res->untried : 0;
		settled += res ? res->settled : 0;
		worst = t > worst ? t : worst;
	}
	if (err == 0)
		printf("%-6s %zu jobs on %zu nodes: %.2f ms per run (p50 %.2f ms, p99 %.2f ms, "
		       "worst "
		       "%.2f ms), %.0f decisions/s; "
		       "%zu admitted (%zu backfilled), %zu waiting for resources, %zu for "
		       "priority; %.0f untried, %.0f settled a run\n",
		       sh->name, n_jobs, n_nodes, total / runs * 1e3,
		       quantile(times, runs, 0.5) * 1e3, quantile(times, runs, 0.99) * 1e3,
		       worst * 1e3, (double)n_jobs * runs / total, res->admitted, res->backfilled,
		       res->classes[0].waiting[0], res->classes[0].waiting[1],
		       (double)untried / runs, (double)settled / runs);
	tj_admission_result_free(res);
	if (times)
		synthetic_free(&s);
	free(times);
	return err;
}

int main(int argc, char **argv)
{
	static const struct shape shapes[] = {
		{ .name = "busy", .busy_percent = 90 },
		{ .name = "empty", .busy_percent = 0 },
		{ .name = "steady", .busy_percent = -1 },
		{ .name = "distinct", .busy_percent = 90, .distinct = true },
		{ .name = "classes", .busy_percent = 100, .distinct = true, .classes = true },
		{ .name = "classes-settled",
		  .busy_percent = 100,
		  .distinct = true,
		  .classes = true,
		  .settle = true },
	};
	int runs = argc > 1 ? atoi(argv[1]) : 20;
	size_t n_jobs = argc > 2 ? strtoul(argv[2], NULL, 10) : 5000;
	size_t n_nodes = argc > 3 ? strtoul(argv[3], NULL, 10) : 2000;
	const char *only = argc > 4 && strcmp(argv[4], "all") != 0 ? argv[4] : NULL;
	int err = 0, ran = 0;

	depth = argc > 5 ? atoi(argv[5]) : depth;
	tries = argc > 6 ? atoi(argv[6]) : tries;
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
		ran += !only || strcmp(only, shapes[i].name) == 0;
	if (runs < 1 || n_jobs < 1 || n_nodes < 1 || !ran || depth < 1 || tries < 0) {
		fprintf(stderr,
		        "usage: %s [runs] [jobs] [nodes] "
		        "[busy|empty|steady|distinct|classes|classes-settled|all] [depth] "
		        "[tries]\n",
		        argv[0]);
		return 2;
	}
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]) && err == 0; i++)
		if (!only || strcmp(only, shapes[i].name) == 0)
			err = bench(&shapes[i], runs, n_jobs, n_nodes);
	if (err < 0)
		fprintf(stderr, "tj_admit: %s\n", strerror(-err));
	return err < 0;
}
