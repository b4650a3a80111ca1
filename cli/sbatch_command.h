/* `kubectl sbatch`: a batch script submitted as TrainJobs. Reads the script, applies its
 * #SBATCH lines and then the command line's options (which win), converts
 * (cli/sbatch_job.h), and either prints the TrainJobs as YAML (--dry-run: nothing is
 * contacted) or creates them and prints their names, as sbatch prints a job id. */
#pragma once

#include <stdio.h>

/* The environment of one run, passed in so that tests run it without a process's. */
struct tj_sbatch_env {
	const char *(*lookup_env)(const char *name); /* getenv: for --export=VAR */
};

/* Runs the command; returns the process's exit code (cli/plugin.h: 0, 1 or 2). */
int tj_sbatch_main(int argc, char *const argv[], const struct tj_sbatch_env *env, FILE *out,
                   FILE *err);
