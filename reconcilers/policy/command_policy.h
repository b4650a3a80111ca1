/* The command policy (DESIGN.md section 4, "Policy"): a job must exit by itself when its work
 * is done, so a container whose command never exits is refused before any pod exists
 * (PolicyViolation). It catches the idioms that hold GPUs for ever, not every program that
 * could: what runs inside python or a script file is not read.
 *
 * Refused, anywhere the container's command line, or the script it gives to sh -c, bash -c
 * (and -lc, -ec, ...), may run it in the foreground, including after && or || and in a
 * pipeline, an if or a case (commands started with & only when the script then waits for
 * them):
 * - sleep infinity (sleep inf, or any duration that adds up to infinity);
 * - sleep N when N is as long as the walltime or longer (when the job has one);
 * - tail -f / -F / --follow (without --pid) of /dev/null or of standard input, or of any
 *   file when its output goes nowhere that can stop it (not into a pipe);
 * - cat with no input: no file operand (or only "-"), no redirection, not fed by a pipe;
 * - a loop whose condition is constant (while true, while :, while ((1)), until false) and
 *   whose body has no break out of it and no exit, return or exec. A loop that does work
 *   but never ends is refused too: it holds its GPUs as long as sleep infinity does; one
 *   with `|| break` or an exit has a way out and passes;
 * - sshd -D (any option cluster holding D) in a step that no success policy stops (MPI
 *   workers are stopped when the launcher completes, so their sshd passes).
 * Words whose value is known only when the shell runs ($VAR, $(...)) are not guessed at:
 * `sleep $T` passes. A container without command and args runs its image's default, which
 * is not read either; args without a command are read as the command line, as an image
 * without ENTRYPOINT (or with one that execs its arguments) runs them. A script the shell
 * itself would refuse (an unterminated quote) passes: it fails at once. A script too long
 * or too deeply nested to read (shell_lex.h's limits, 64 levels) is refused, since it
 * cannot be checked. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "reconcilers/runtime.h"
#include "reconcilers/settings.h"
#include "reconcilers/trainjob.h"

#define TJ_REASON_POLICY_VIOLATION "PolicyViolation"

#define TJ_COMMAND_PART_MAX        160 /* the offending part quoted in a finding, with its NUL */

struct tj_command_rules {
	int64_t walltime; /* seconds the job may run (its effective deadline); 0: none */
	/* The step's pods are stopped when the runtime's success policy is met by other steps
	 * (MPI workers, when the launcher completes): sshd -D there ends with the job. */
	bool ended_by_success_policy;
};

enum tj_command_verdict {
	TJ_COMMAND_OK,
	TJ_COMMAND_SLEEPS_FOREVER,
	TJ_COMMAND_SLEEPS_PAST_WALLTIME,
	TJ_COMMAND_FOLLOWS,
	TJ_COMMAND_READS_STDIN,
	TJ_COMMAND_LOOPS,
	TJ_COMMAND_SSHD,
	TJ_COMMAND_WAITS, /* waits for a background command that never exits */
	TJ_COMMAND_UNREADABLE,
};

struct tj_command_finding {
	enum tj_command_verdict verdict;
	/* The offending part as written, words joined by spaces, control characters as spaces,
	 * cut (at a UTF-8 boundary, with "...") to fit: "tail -f /dev/null". */
	char part[TJ_COMMAND_PART_MAX];
	/* A sentence that says what is wrong with it: "'tail -f /dev/null' never exits (it
	 * follows /dev/null or standard input for ever)". */
	char text[TJ_MESSAGE_MAX / 2];
};

/* Judges a container's command line (its command followed by its args, as the kubelet runs
 * them). Returns 0 when it may run, -EPERM when it never exits (*ret written), -ENOMEM. */
int tj_command_check(const char *const *argv, size_t argc, const struct tj_command_rules *rules,
                     struct tj_command_finding *ret);

/* Judges every container of a rendered pod of step: its init containers (except sidecars,
 * restartPolicy Always, which Kubernetes stops when the others are done) and its
 * containers. Returns 0, or -EPERM with reason PolicyViolation and a message naming the
 * container, the step and the offending part; -ENOMEM. */
int tj_command_check_pod(const cJSON *pod, const char *step, const struct tj_command_rules *rules,
                         struct tj_problem *why);

/* Whether the command policy leaves a job alone: its runtime is a ClusterTrainingRuntime
 * labelled TJ_LABEL_ALLOW_LONG_RUNNING "true", or its namespace is one of the config's
 * commandPolicy.exemptNamespaces. */
bool tj_command_exempt(const struct tj_config *config, const struct tj_runtime *runtime,
                       const char *namespace);
