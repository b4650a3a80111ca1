/* Walltime, as Slurm partitions have it: which walltime a TrainJob gets, which it may not
 * ask for, and when its pods are warned of the end. Pure functions of the config, the job
 * and the time.
 *
 * - Limits. defaultWalltime is the walltime of a job without spec.activeDeadlineSeconds;
 *   maxWalltime refuses a job that asks for more (reason PolicyViolation). Each of the two
 *   is taken from the most specific place of the config that sets it: the job's namespace
 *   for its GPU class, that namespace for every class, the GPU class, the cluster-wide
 *   fallback. Without a defaultWalltime the maxWalltime is the default (as Slurm's
 *   DefaultTime falls back to MaxTime), and a default longer than the maximum in force is
 *   cut to it.
 * - Deadline. The start (status.startTime) plus the walltime; the planner keeps it in
 *   status.deadline, so that the queue's reservations read the same time.
 * - Warning. warning seconds before the deadline (the TrainJob's annotation
 *   trainjob.flame.dev/deadline-warning-seconds, else the config's warningSeconds, 300 by
 *   default), never before the start, the pods get the deadline in their annotation
 *   trainjob.flame.dev/deadline. Every pod mounts it through a downward-API volume as the
 *   file /etc/trainjob/deadline: empty until the warning, then the deadline as an RFC 3339
 *   time in UTC ("2026-12-01T13:00:00Z"). */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "reconcilers/settings.h"
#include "reconcilers/trainjob.h"

/* On the TrainJob, TJ_ANNOTATION_DEADLINE_WARNING (trainjob.h): seconds before the deadline
 * the pods are warned (0..604800). */
/* On the pods, from the warning on, TJ_ANNOTATION_DEADLINE (informers/pod.h) holds the
 * deadline, RFC 3339. */
/* The downward-API volume that shows that annotation to every container of a pod. */
#define TJ_DEADLINE_VOLUME      "trainjob-deadline"
#define TJ_DEADLINE_MOUNT_PATH  "/etc/trainjob"
#define TJ_DEADLINE_FILE        "deadline"

#define TJ_WALLTIME_MAX_SECONDS (366LL * 86400) /* the longest walltime a config may set */
#define TJ_WALLTIME_WARNING_MAX 604800          /* a week */

/* The walltime a job gets. */
struct tj_walltime {
	int64_t seconds;     /* 0: none (the job runs until it ends) */
	int64_t max_seconds; /* the maxWalltime in force; 0: none */
	/* seconds is the config's default (the job sets no activeDeadlineSeconds). */
	bool from_default;
	/* Where the limit that decided comes from, for messages: "the defaultWalltime of GPU
	 * class gh200", "the maxWalltime of namespace team-a for GPU class gh200", ... */
	char source[160];
};

/* Resolves the walltime of a job in namespace, of GPU class cls (NULL for none), that asks
 * for requested seconds (its activeDeadlineSeconds; 0 for none). Returns 0, or -EINVAL with
 * reason PolicyViolation and a message that names the limit when requested is past the
 * maxWalltime; *ret is written in both cases. */
int tj_walltime_resolve(const struct tj_config *config, const char *namespace,
                        const struct tj_gpu_class *cls, int64_t requested, struct tj_walltime *ret,
                        struct tj_problem *why);

/* The warning of a job: its annotation (validated by tj_walltime_validate_warning; a bad
 * value counts as absent), else the config's. */
int64_t tj_walltime_warning_seconds(const char *annotation, const struct tj_config *config);

/* Checks the annotation trainjob.flame.dev/deadline-warning-seconds (NULL: absent, fine).
 * Returns 0, or -EINVAL with reason InvalidSpec. */
int tj_walltime_validate_warning(const char *annotation, struct tj_problem *why);

/* When the pods of a job that started at start and ends at deadline are warned: warning
 * seconds before the deadline, but not before the start. */
int64_t tj_walltime_warning_at(int64_t start, int64_t deadline, int64_t warning);

/* Parses a walltime of the config file: a number of seconds ("3600"), or amounts of d, h,
 * m, s in that order ("90s", "1h30m", "2d"). 1 s to TJ_WALLTIME_MAX_SECONDS. 0, or -EINVAL. */
int tj_walltime_parse(const char *s, long long *ret);

/* Writes seconds in the units of tj_walltime_parse ("1h30m", "45s", "2d"). */
void tj_walltime_format(long long seconds, char buf[static 32]);

/* Gives a pod spec the downward-API volume of the deadline file, mounted in every container
 * (initContainers too) at TJ_DEADLINE_MOUNT_PATH; a volume or mount the template already has
 * at that name or path is replaced, since the controller owns them. -ENOMEM. */
int tj_walltime_add_volume(cJSON *spec);
