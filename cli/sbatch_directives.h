/* Slurm batch directives: the #SBATCH lines of a batch script and sbatch's command-line
 * options, parsed into one set of options by the same code, so that a directive means the
 * same in both places. Pure: text in, options, notes and errors out.
 *
 * As sbatch reads them: #SBATCH must start the line; the directives end at the first line
 * that is neither blank nor a comment (later #SBATCH lines are ignored, with a note); a line
 * may hold several options, quoted with ' or ", and ends at an unquoted '#'. An option given
 * again replaces the earlier one, so the command line, parsed last, wins. Options that
 * ask for the same thing in different units (--mem, --mem-per-gpu, --mem-per-cpu; and
 * --gpus-per-node, --gres, -G) replace each other. --image is the command line's alone. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "reconcilers/trainjob.h"

#define TJ_SBATCH_MAX_SCRIPT  (256 * 1024) /* a batch script's bytes */
#define TJ_SBATCH_MAX_LINE    4096         /* one #SBATCH line */
#define TJ_SBATCH_MAX_TOKENS  64           /* options on one #SBATCH line */
#define TJ_SBATCH_MAX_ARRAY   256          /* tasks of one --array */
#define TJ_SBATCH_MAX_INDEX   99999        /* the largest array index */
#define TJ_SBATCH_MAX_EXPORTS 64
#define TJ_SBATCH_MAX_MOUNTS  16
#define TJ_SBATCH_MAX_NOTES   24
#define TJ_SBATCH_NOTE_MAX    256
#define TJ_SBATCH_VALUE_MAX   1024 /* a path, an image, an environment value */
#define TJ_SBATCH_WORD_MAX    64   /* a partition, a GPU type, a signal name */

/* Where an option was given: a line of the script (1, 2, ...), or the command line. */
#define TJ_SBATCH_UNSET        0
#define TJ_SBATCH_COMMAND_LINE (-1)

/* The one-line notes of what happens instead of a directive that has no TrainJob
 * counterpart (--output: kubectl logs, ...), each printed once on stderr. */
struct tj_sbatch_notes {
	char text[TJ_SBATCH_MAX_NOTES][TJ_SBATCH_NOTE_MAX];
	size_t n;
};

/* Adds a note unless the same text is there already (or the list is full). */
void tj_sbatch_note(struct tj_sbatch_notes *notes, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

struct tj_sbatch_export {
	char name[128];
	char value[TJ_SBATCH_VALUE_MAX];
	bool from_env; /* VAR without a value: its value in the submitting shell */
};

struct tj_sbatch_mount {
	char claim[TJ_NAME_MAX];            /* the PersistentVolumeClaim */
	char sub_path[TJ_SBATCH_VALUE_MAX]; /* inside the claim; "" for all of it */
	char path[TJ_SBATCH_VALUE_MAX];     /* the mount path in the container */
	bool read_only;
};

/* Time limits: seconds, or this for UNLIMITED (and for 0, which Slurm reads the same). */
#define TJ_SBATCH_UNLIMITED (-1)

/* The options of one submission. A field whose where_* is TJ_SBATCH_UNSET was not given. */
struct tj_sbatch_opts {
	char job_name[TJ_SBATCH_VALUE_MAX]; /* -J */
	int where_job_name;
	int nodes; /* -N */
	int where_nodes;
	int ntasks_per_node; /* --ntasks-per-node */
	int where_ntasks_per_node;
	int cpus_per_task; /* -c */
	int where_cpus_per_task;

	/* GPUs: per node (--gpus-per-node, --gres=gpu:N) or in total (-G); one of them. */
	int gpus;                             /* the count as given */
	bool gpus_total;                      /* -G: over all nodes */
	char gpu_type[TJ_SBATCH_WORD_MAX];    /* gpu:TYPE:N; "" if none */
	char gpu_option[TJ_SBATCH_VALUE_MAX]; /* the option as written, for messages */
	int where_gpus;

	/* Memory in MiB: per node (--mem), per GPU or per CPU; one of them. 0 with --mem=0:
	 * the whole node's memory, which is no limit. */
	int64_t mem_mib;
	enum {
		TJ_SBATCH_MEM_NODE,
		TJ_SBATCH_MEM_PER_GPU,
		TJ_SBATCH_MEM_PER_CPU
	} mem_per;
	int where_mem;

	int64_t time_seconds; /* -t: seconds, or TJ_SBATCH_UNLIMITED */
	int where_time;
	char partition[TJ_SBATCH_WORD_MAX]; /* -p */
	int where_partition;
	char qos[TJ_SBATCH_WORD_MAX]; /* -q: the QOS tier (reconcilers/policy/qos.h) */
	int where_qos;
	char dependency[TJ_SBATCH_VALUE_MAX]; /* -d: Slurm's syntax (reconcilers/plan/dependency.h)
	                                       */
	int where_dependency;
	int signal_seconds;              /* --signal=[B:]SIG@SECONDS */
	char signal[TJ_SBATCH_WORD_MAX]; /* the signal as written */
	int where_signal;
	char chdir[TJ_SBATCH_VALUE_MAX]; /* -D, --container-workdir: an absolute path */
	int where_chdir;

	bool export_none; /* --export=NONE (ALL, the default, gives the pods the image's own) */
	struct tj_sbatch_export exports[TJ_SBATCH_MAX_EXPORTS];
	size_t n_exports;
	int where_export;

	char image[TJ_SBATCH_VALUE_MAX]; /* --container-image, --image: a registry reference */
	int where_image;
	struct tj_sbatch_mount mounts[TJ_SBATCH_MAX_MOUNTS]; /* --container-mounts */
	size_t n_mounts;
	int where_mounts;
	bool exclusive; /* --exclusive */
	int where_exclusive;
	bool hold; /* -H: submitted held (kubectl scontrol release lets it queue) */
	int where_hold;
	char constraint[TJ_SBATCH_WORD_MAX]; /* -C: a GPU class */
	int where_constraint;

	int array[TJ_SBATCH_MAX_ARRAY]; /* --array: the task indexes, ascending, distinct */
	size_t n_array;
	char array_spec[TJ_SBATCH_VALUE_MAX];
	int where_array;
};

/* Sets every field to "not given". */
void tj_sbatch_opts_init(struct tj_sbatch_opts *opts);

/* Parses one option as given on the command line (where = TJ_SBATCH_COMMAND_LINE) or on a
 * line of the script: arg, and next as its value when it takes one and arg holds none.
 * Returns the number of arguments used (1 or 2); 0 if arg is not a directive that sbatch
 * has (the caller says so); or -EINVAL with "ARG: why" in err, for a directive that is not
 * supported or whose value is wrong. */
int tj_sbatch_parse_option(struct tj_sbatch_opts *opts, struct tj_sbatch_notes *notes,
                           const char *arg, const char *next, int where, char *err, size_t errlen);

/* Parses the #SBATCH lines of a script of len bytes (at most TJ_SBATCH_MAX_SCRIPT, else
 * -E2BIG). Returns 0, or -EINVAL with "line N: DIRECTIVE: why" in err. */
int tj_sbatch_parse_script(const char *script, size_t len, struct tj_sbatch_opts *opts,
                           struct tj_sbatch_notes *notes, char *err, size_t errlen);

/* A Slurm time limit ("M", "M:S", "H:M:S", "D-H", "D-H:M", "D-H:M:S", "UNLIMITED") in
 * seconds, or TJ_SBATCH_UNLIMITED (also for 0, as Slurm reads it). -EINVAL otherwise. */
int tj_sbatch_parse_time(const char *text, int64_t *ret);

/* A Slurm memory size ("4096", "500M", "64G", "1T"; no suffix: megabytes) in MiB, a
 * kilobyte count rounded up. -EINVAL otherwise. */
int tj_sbatch_parse_memory(const char *text, int64_t *ret_mib);
