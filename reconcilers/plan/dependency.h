/* Job dependencies, as Slurm's sbatch --dependency has them: the annotation
 * trainjob.flame.dev/dependency holds a list such as "afterok:prep", "afterany:a:b",
 * "after:warmup+10,singleton" or "afterok:a?afterok:b", and a TrainJob waits until that list
 * is met. Two pure functions: the parser compiles the text into a bounded expression, the
 * evaluator reads the other TrainJobs of the namespace through callbacks and says whether the
 * expression is met, may still be, or never will be. What to do with the verdict (hold the
 * job, fail it) is the caller's.
 *
 * The syntax, Slurm's, with TrainJob names of the same namespace where Slurm has job ids:
 * - after:NAME[+MINUTES]  NAME has started (or ended without starting: Slurm's "cancelled"),
 *                         and MINUTES more have passed since (0 to TJ_DEPENDENCY_MAX_MINUTES)
 * - afterany:NAME         NAME has ended: Complete or Failed
 * - afterok:NAME          NAME is Complete
 * - afternotok:NAME       NAME is Failed
 * - singleton             no other TrainJob of the job's singleton group holds it (below)
 * A type takes one or more names separated by ':' ("afterok:a:b"), each its own term. Terms
 * are separated by ',' (all must be met) or '?' (any one suffices), never both in one list,
 * as Slurm refuses that mix; as in Slurm, the separator applies to every term, including those
 * of one type ("afterok:a:b?after:c" is met by any of a, b, c). Type names are lower case. A
 * delay (+MINUTES) is taken only by after, as in Slurm. Slurm's aftercorr (array tasks),
 * afterburstbuffer and "after" without a name are refused with a message that says why.
 *
 * Decisions where Slurm and Kubernetes differ:
 * - The singleton group. Slurm's is the jobs of the same job name and user. Here it is the
 *   TrainJobs of the same namespace whose group (tj_dependency_singleton_group) is the same:
 *   the annotation trainjob.flame.dev/job-name when the job has one, else the job's own name.
 *   One rule: kubectl sbatch names a TrainJob after -J, so jobs submitted as -J train share a
 *   group with the TrainJob named train. A member holds the group, as in Slurm, when it has
 *   not ended and it has started or was created before the dependent job (the same second:
 *   the smaller name first), so two waiting singletons never wait for each other.
 * - A name that no TrainJob of the namespace has: never met (Slurm refuses an unknown job id
 *   at submission). The verdict says so; whether that fails the job at once or after a
 *   grace period (the referenced job may be created next) is the caller's.
 * - Started means status.startTime is set or the state is Running or Restarting; ended means
 *   Complete or Failed. A job that was deleted is absent: its record is gone.
 * - A term that names the dependent job itself is never met (Slurm refuses it). A cycle
 *   through other jobs (a waits for b, b for a) is not seen here: each of them waits. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "reconcilers/trainjob.h"

/* On a TrainJob: its dependency list. */
#define TJ_ANNOTATION_DEPENDENCY TJ_LABEL_PREFIX "dependency"
/* On a TrainJob: its job name in Slurm's sense, which names its singleton group. */
#define TJ_ANNOTATION_JOB_NAME TJ_LABEL_PREFIX "job-name"

/* The reasons of a job its dependency holds (Queued) or fails (Failed), Slurm's words. */
#define TJ_REASON_DEPENDENCY       "Dependency"
#define TJ_REASON_DEPENDENCY_NEVER "DependencyNeverSatisfied"
/* The reason of a job its owner holds (Queued), Slurm's word. */
#define TJ_REASON_HELD            "JobHeldUser"

#define TJ_DEPENDENCY_MAX_TERMS   32
#define TJ_DEPENDENCY_MAX_LENGTH  4096   /* characters of the annotation */
#define TJ_DEPENDENCY_MAX_MINUTES 527040 /* after:NAME+MINUTES: 366 days */

enum tj_dependency_type {
	TJ_DEPENDENCY_AFTER,
	TJ_DEPENDENCY_AFTERANY,
	TJ_DEPENDENCY_AFTEROK,
	TJ_DEPENDENCY_AFTERNOTOK,
	TJ_DEPENDENCY_SINGLETON,
};

/* One term: a type and, except for singleton, the TrainJob it names. */
struct tj_dependency_term {
	enum tj_dependency_type type;
	char name[TJ_NAME_MAX]; /* "" for singleton */
	int minutes;            /* after's delay; 0 for the other types */
};

/* A compiled list. Fixed size, so that it is copied by value. */
struct tj_dependency {
	struct tj_dependency_term terms[TJ_DEPENDENCY_MAX_TERMS];
	size_t n_terms; /* 1 to TJ_DEPENDENCY_MAX_TERMS */
	bool any;       /* '?': one term suffices; else (',', or a single term) all are needed */
};

/* Compiles text. Returns 0, or -EINVAL with reason InvalidSpec and a message that names the
 * annotation, the character (from 1) where the text goes wrong and what was expected there;
 * *ret is written only on success. */
int tj_dependency_parse(const char *text, struct tj_dependency *ret, struct tj_problem *why);

/* "afterok", ...; "singleton". */
const char *tj_dependency_type_name(enum tj_dependency_type type);

/* The singleton group of a TrainJob: its trainjob.flame.dev/job-name annotation (job_name;
 * NULL or "" when absent), else its name. */
const char *tj_dependency_singleton_group(const char *job_name, const char *name);

/* What the evaluation reads of a TrainJob of the namespace. */
struct tj_dependency_job {
	enum tj_state state;
	int64_t creation_time;   /* unix seconds */
	int64_t start_time;      /* status.startTime, unix seconds; 0 if unset */
	int64_t completion_time; /* when it ended, unix seconds; 0 if unset or not ended */
};

/* The namespace as the evaluation sees it. The callbacks must not fail and must answer
 * the same way for the whole evaluation; names they return are borrowed until it returns. */
struct tj_dependency_lookup {
	/* Fills *ret with the TrainJob named name; false if the namespace has none. */
	bool (*find)(void *userdata, const char *name, struct tj_dependency_job *ret);
	/* The i-th TrainJob (from 0) of the dependent job's singleton group, in any order (the
	 * dependent job itself may be among them: it is skipped by name): fills *ret and
	 * returns its name, or returns NULL past the last. NULL as a callback: no member. */
	const char *(*group_member)(void *userdata, size_t i, struct tj_dependency_job *ret);
	void *userdata;
};

/* The dependent TrainJob and the moment of the evaluation. */
struct tj_dependency_subject {
	const char *name;
	const char *group; /* tj_dependency_singleton_group of it */
	int64_t creation_time;
	int64_t now; /* unix seconds */
};

enum tj_dependency_outcome {
	TJ_DEPENDENCY_SATISFIED,
	TJ_DEPENDENCY_WAITING,
	TJ_DEPENDENCY_NEVER,
};

struct tj_dependency_verdict {
	enum tj_dependency_outcome outcome;
	/* While WAITING on a delay (after:NAME+MINUTES) that has begun to run, NAME having
	 * started or ended: the earliest such delay's end, when the verdict may change without
	 * any job changing, so the caller looks again then; else 0. */
	int64_t wake_at;
	/* "" when SATISFIED. WAITING: "waits for prep to complete (afterok:prep)"; NEVER:
	 * "afterok:prep can never be met: prep failed". Several terms are joined, and those
	 * that do not fit are counted ("; and 3 more"). */
	char message[TJ_MESSAGE_MAX];
};

/* The verdict on dep for subject. With ',' (all): NEVER if a term is never met, SATISFIED
 * if every term is, else WAITING. With '?' (any): SATISFIED if a term is, NEVER if every term
 * is never met, else WAITING. */
void tj_dependency_evaluate(const struct tj_dependency *dep,
                            const struct tj_dependency_subject *subject,
                            const struct tj_dependency_lookup *lookup,
                            struct tj_dependency_verdict *ret);
