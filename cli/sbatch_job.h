/* A batch script and its options turned into TrainJobs: what `kubectl sbatch` submits.
 * Pure: the script, the options and the settings in; TrainJob objects, notes or an error
 * out.
 *
 * - The script runs on every node as the container's command: its shebang's shell with -c
 *   (bash when it has none), the script intact after a short prelude that defines `srun`
 *   (it runs its command once, dropping srun's options: the script already runs once per
 *   node) and moves into -D's directory. $0 is the script's name, $1... its arguments.
 * - Nodes, tasks per node (numProcPerNode), GPUs, CPUs and memory per node (resourcesPerNode),
 *   the time limit (activeDeadlineSeconds), the partition (the runtime torch-<partition>, or
 *   the one the partition map names), the warning before the deadline (an annotation the
 *   controller reads), mounts of PersistentVolumeClaims and the image.
 * - The SLURM_* variables scripts read, beside the torchrun ones the controller sets;
 *   SLURM_NODEID and SLURM_PROCID come from the pod's completion-index annotation through
 *   the downward API, so each node reads its own.
 * - --array gives one TrainJob per index, named NAME-<index>, with SLURM_ARRAY_TASK_ID. */
#pragma once

#include <stddef.h>

#include <cjson/cJSON.h>

#include "cli/sbatch_directives.h"
#include "reconcilers/settings.h"

/* The longest TrainJob name: the pod hostnames <name>-node-0-<rank> fit in 63 characters
 * (the CRD's own limit). */
#define TJ_SBATCH_NAME_MAX       51

#define TJ_SBATCH_MAX_PARTITIONS 32

/* --partition-map: a partition that runs on a runtime not named torch-<partition>. */
struct tj_sbatch_partition {
	const char *partition;
	const char *runtime;
};

struct tj_sbatch_input {
	const char *script; /* the whole file, shebang included */
	size_t script_len;
	const char *script_name; /* the file's name without folders: $0, the default name */
	const char *const *args; /* the script's arguments */
	size_t n_args;
	const struct tj_sbatch_opts *opts;
	const char *namespace;
	const char *user; /* who submits (the submitted-by annotation); NULL: not known */
	const struct tj_sbatch_partition *partitions;
	size_t n_partitions;
	/* The GPU classes: the first is the default partition (as Slurm's Default=YES), and a
	 * class names the GPU resource of its partition. */
	const struct tj_config *config;
	/* The submitting shell's environment, for --export=VAR without a value. */
	const char *(*lookup_env)(const char *name);
};

/* Converts. On success *ret is an owned array of *ret_n owned TrainJob objects (one, or one
 * per array index). -EINVAL with a one-line message in err for what cannot run (a GPU count
 * that does not divide over the nodes, an interpreter that is not a shell, ...); -ENOMEM.
 * Notes (what happens instead of a directive) are added to notes. */
int tj_sbatch_convert(const struct tj_sbatch_input *in, struct tj_sbatch_notes *notes, cJSON ***ret,
                      size_t *ret_n, char *err, size_t errlen);

/* Frees an array from tj_sbatch_convert. Accepts NULL; returns NULL. */
cJSON **tj_sbatch_jobs_free(cJSON **jobs, size_t n);
