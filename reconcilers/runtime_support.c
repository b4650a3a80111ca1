#include "reconcilers/runtime_support.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/number.h"
#include "reconcilers/failure_rules.h"
#include "reconcilers/fields.h"
#include "reconcilers/json.h"
#include "reconcilers/steps.h"

#define FAILURE_POLICY "spec.template.spec.failurePolicy"

static bool is_one_of(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(s, *list) == 0)
			return true;
	return false;
}

/* A member of obj whose name is not in known: the first, or NULL. */
static const cJSON *unknown_member(const cJSON *obj, const char *const *known)
{
	const cJSON *el;

	cJSON_ArrayForEach(el, obj) if (!el->string || !is_one_of(el->string, known)) return el;
	return NULL;
}

static int refuse(struct tj_problem *why, const char *field, const char *because)
{
	tj_problem_set(why, TJ_REASON_UNSUPPORTED_RUNTIME,
	               "%s is not supported by this controller: %s; remove it from the runtime "
	               "(crds/README.md lists what is supported)",
	               field, because);
	return -EOPNOTSUPP;
}

static bool non_empty_list(const cJSON *item)
{
	return cJSON_IsArray(item) && cJSON_GetArraySize(item) > 0;
}

/* failurePolicy.rules, each decided as JobSet decides it (reconcilers/failure_rules.h):
 * the reasons a step's Job fails with here (PodFailurePolicy, BackoffLimitExceeded), the
 * replicated jobs of the runtime, the actions FailJobSet and RestartJobSet. */
static int check_rules(const cJSON *rules, const cJSON *jobs, struct tj_problem *why)
{
	static const char *const reasons[] = { TJ_JOB_REASON_POD_FAILURE_POLICY,
		                               TJ_JOB_REASON_BACKOFF_LIMIT, NULL };
	const cJSON *rule, *el;
	char field[128];
	int i = 0;

	cJSON_ArrayForEach(rule, rules)
	{
		const char *action = tj_json_string(rule, "action");

		snprintf(field, sizeof(field), FAILURE_POLICY ".rules[%d]", i++);
		if (non_empty_list(tj_json_path(rule, "onJobFailureMessagePatterns")))
			return refuse(why, field,
			              "its onJobFailureMessagePatterns match the messages of Jobs, "
			              "and there are no Jobs here");
		cJSON_ArrayForEach(el, tj_json_path(rule, "onJobFailureReasons"))
		{
			if (!cJSON_IsString(el) || !is_one_of(el->valuestring, reasons))
				return refuse(
				        why, field,
				        "of onJobFailureReasons only PodFailurePolicy (a "
				        "podFailurePolicy rule FailJob matched) and "
				        "BackoffLimitExceeded (any other failed pod) happen here");
		}
		cJSON_ArrayForEach(el, tj_json_path(rule, "targetReplicatedJobs"))
		{
			if (!cJSON_IsString(el) || !tj_json_find_by(jobs, "name", el->valuestring))
				return refuse(
				        why, field,
				        "its targetReplicatedJobs must name replicated jobs of the "
				        "runtime");
		}
		if (!action ||
		    (strcmp(action, "FailJobSet") != 0 && strcmp(action, "RestartJobSet") != 0))
			return refuse(
			        why, field,
			        "only the actions FailJobSet and RestartJobSet are implemented");
	}
	return 0;
}

static int check_failure_policy(const cJSON *fp, const cJSON *jobs, struct tj_problem *why)
{
	static const char *const strategies[] = { "Recreate", "BlockingRecreate", NULL };
	const char *strategy = tj_json_string(fp, "restartStrategy");
	const cJSON *max = tj_json_path(fp, "maxRestarts");
	int64_t n;

	if (max && !cJSON_IsNull(max) &&
	    !(cJSON_IsNumber(max) && tj_double_to_int64(max->valuedouble, 0, 1000, &n)))
		return refuse(why, FAILURE_POLICY ".maxRestarts",
		              "a restart budget is a whole number from 0 to 1000 (the config's "
		              "failurePolicy.maxRestarts is never put in its place)");
	if (strategy && !is_one_of(strategy, strategies))
		return refuse(why, FAILURE_POLICY ".restartStrategy",
		              "a restart replaces every pod of the job (Recreate, "
		              "BlockingRecreate)");
	return check_rules(tj_json_path(fp, "rules"), jobs, why);
}

/* Of network, which the table has refused every other field of, enableDNSHostnames and
 * publishNotReadyAddresses true only. */
static int check_network(const cJSON *net, struct tj_problem *why)
{
	const cJSON *el;
	char field[128];

	cJSON_ArrayForEach(el, net) if (cJSON_IsFalse(el))
	{
		snprintf(field, sizeof(field), "spec.template.spec.network.%s: false", el->string);
		return refuse(why, field,
		              "the pods always get DNS names through a headless Service that "
		              "publishes them before they are ready");
	}
	return 0;
}

#define ENV_INJECTION      "spec.mlPolicy.torch.envInjection"
#define ENV_TARGETS_MAX    16
#define ENV_CONTAINERS_MAX 8

/* The container or init container named name of the pod template of replicated job `job`
 * of the runtime, or NULL. */
static const cJSON *step_container(const cJSON *runtime, const char *job, const char *name)
{
	const cJSON *rj = tj_json_find_by(
	        tj_json_path(runtime, "spec.template.spec.replicatedJobs"), "name", job);
	return tj_json_find_container(tj_json_path(rj, "template.spec.template.spec"), name);
}

/* Whether an earlier target than the n-th of targets names job. */
static bool named_before(const cJSON *targets, int n, const char *job)
{
	const cJSON *t;
	int i = 0;

	cJSON_ArrayForEach(t, targets)
	{
		const char *other = tj_json_string(t, "jobName");

		if (i++ >= n)
			break;
		if (other && strcmp(other, job) == 0)
			return true;
	}
	return false;
}

static int bad_target(struct tj_problem *why, const char *field, const char *what)
{
	tj_problem_set(why, TJ_REASON_UNSUPPORTED_RUNTIME, "%s: %s", field, what);
	return -EOPNOTSUPP;
}

/* mlPolicy.torch.envInjection (Kubeflow v2.3): targets [{jobName, containerNames}], each
 * container one of that replicated job's containers or init containers, never node (which
 * has the variables anyway); at most 16 targets of 1 to 8 containers, no job named twice. */
static int check_env_injection(const cJSON *runtime, struct tj_problem *why)
{
	static const char *const target_known[] = { "jobName", "containerNames", NULL };
	const cJSON *inj = tj_json_path(runtime, ENV_INJECTION);
	const cJSON *targets = tj_json_path(inj, "targets"), *t, *el;
	char field[160];
	int i = 0;

	if (!inj || cJSON_IsNull(inj))
		return 0;
	if (cJSON_GetArraySize(targets) > ENV_TARGETS_MAX)
		return bad_target(why, ENV_INJECTION ".targets", "at most 16 targets");
	cJSON_ArrayForEach(t, targets)
	{
		const char *job = tj_json_string(t, "jobName");
		const cJSON *names = tj_json_path(t, "containerNames"), *n;
		int k = 0;

		snprintf(field, sizeof(field), ENV_INJECTION ".targets[%d]", i);
		if ((el = unknown_member(t, target_known))) {
			snprintf(field + strlen(field), sizeof(field) - strlen(field), ".%s",
			         el->string ? el->string : "");
			return refuse(why, field, "a target has only jobName and containerNames");
		}
		if (!job || !*job || named_before(targets, i, job))
			return bad_target(
			        why, field,
			        "jobName names a replicated job, each in one target only");
		if (cJSON_GetArraySize(names) < 1 || cJSON_GetArraySize(names) > ENV_CONTAINERS_MAX)
			return bad_target(why, field, "containerNames lists 1 to 8 containers");
		cJSON_ArrayForEach(n, names)
		{
			const char *c = cJSON_GetStringValue(n);

			snprintf(field, sizeof(field),
			         ENV_INJECTION ".targets[%d].containerNames[%d]", i, k++);
			if (c && strcmp(c, "node") == 0)
				return bad_target(why, field,
				                  "node has the PET_* variables anyway; name other "
				                  "containers");
			if (!c || !step_container(runtime, job, c))
				return bad_target(why, field,
				                  "not a container or init container of that "
				                  "replicated job");
		}
		i++;
	}
	return 0;
}

/* The Job fields of a replicated job whose values the controller implements, for a
 * runtime's Job template and a TrainJob's runtimePatches alike (the same field has the same
 * fate in both): a failed pod fails its step at once (backoffLimit 0), whose failure the
 * JobSet failurePolicy then decides; every pod has its completion index (Indexed); a
 * replacement pod is created once the pod it replaces is gone (Failed). */
int tj_runtime_job_field_check(const cJSON *el, const char *field, const char *reason,
                               struct tj_problem *why)
{
	static const struct {
		const char *name, *value, *because;
	} rules[] = {
		{ "completionMode", "Indexed",
		  "every pod of a step has its completion index, as in JobSet's default Indexed "
		  "Jobs" },
		{ "podReplacementPolicy", "Failed",
		  "a pod is replaced once the pod it replaces is gone (Failed)" },
	};

	if (strcmp(el->string, "backoffLimit") == 0) {
		if (cJSON_IsNumber(el) && el->valuedouble == 0)
			return 0;
		tj_problem_set(why, reason,
		               "%s: only 0 is supported by this controller: a step's failed pod "
		               "is not retried by itself, it fails the step at once and the "
		               "JobSet failurePolicy decides the restart (maxRestarts, or "
		               "trainjob.flame.dev/max-restarts); set backoffLimit to 0 or remove "
		               "it (crds/README.md lists what is supported)",
		               field);
		return -EOPNOTSUPP;
	}
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		if (strcmp(el->string, rules[i].name) != 0)
			continue;
		if (cJSON_IsString(el) && strcmp(el->valuestring, rules[i].value) == 0)
			return 0;
		tj_problem_set(why, reason,
		               "%s: only %s is supported by this controller: %s; set it to %s or "
		               "remove it (crds/README.md lists what is supported)",
		               field, rules[i].value, rules[i].because, rules[i].value);
		return -EOPNOTSUPP;
	}
	return -ENOENT;
}

/* A Job template's podFailurePolicy (reconcilers/failure_rules.h): rules FailJob or Count on
 * onExitCodes In or NotIn, for a step whose pod has one container and no init container, the
 * exit code the controller reads. */
static int check_pod_failure_policy(const cJSON *rj, const char *path, struct tj_problem *why)
{
	static const char *const actions[] = { "FailJob", "Count", NULL };
	static const char *const operators[] = { "In", "NotIn", NULL };
	const cJSON *pod = tj_json_path(rj, "template.spec.template.spec");
	const cJSON *containers = tj_json_path(pod, "containers");
	const char *only = tj_json_string(cJSON_GetArrayItem(containers, 0), "name");
	const cJSON *rule, *el;
	char field[200];
	int i = 0;

	if (cJSON_GetArraySize(containers) != 1 ||
	    non_empty_list(tj_json_path(pod, "initContainers")))
		return refuse(why, path,
		              "its exit codes are matched here only for a step whose pod has one "
		              "container and no init container");
	cJSON_ArrayForEach(rule, tj_json_path(rj, "template.spec.podFailurePolicy.rules"))
	{
		const char *action = tj_json_string(rule, "action");
		const char *op = tj_json_string(rule, "onExitCodes.operator");
		const char *container = tj_json_string(rule, "onExitCodes.containerName");
		const cJSON *values = tj_json_path(rule, "onExitCodes.values");

		snprintf(field, sizeof(field), "%s.rules[%d]", path, i++);
		if (non_empty_list(tj_json_path(rule, "onPodConditions")))
			return refuse(
			        why, field,
			        "onPodConditions are not read; a rule here matches onExitCodes");
		if (!action || !is_one_of(action, actions))
			return refuse(
			        why, field,
			        "only the actions FailJob and Count are implemented (a failed pod "
			        "is not replaced by itself, so Ignore and FailIndex have no "
			        "meaning here)");
		if (!op || !is_one_of(op, operators) || !non_empty_list(values) ||
		    cJSON_GetArraySize(values) > 255 ||
		    (container && (!only || strcmp(container, only) != 0)))
			return refuse(
			        why, field,
			        "onExitCodes needs the operator In or NotIn, 1 to 255 values, "
			        "and no containerName but the pod's container");
		cJSON_ArrayForEach(el, values)
		{
			if (!cJSON_IsNumber(el) || el->valuedouble != (int)el->valuedouble ||
			    (el->valuedouble == 0 && strcmp(op, "In") == 0))
				return refuse(why, field,
				              "onExitCodes values are exit codes, 0 not with In");
		}
	}
	return 0;
}

/* The limited fields of each replicated job's Job template: the Job fields above, and
 * activeDeadlineSeconds only on the node step, where it is the walltime. */
static int check_steps(const cJSON *spec, struct tj_problem *why)
{
	const cJSON *rj, *el;
	char field[160];
	int i = 0;

	cJSON_ArrayForEach(rj, tj_json_path(spec, "replicatedJobs"))
	{
		const char *name = tj_or(tj_json_string(rj, "name"), "");

		cJSON_ArrayForEach(el, tj_json_path(rj, "template.spec"))
		{
			snprintf(field, sizeof(field),
			         "spec.template.spec.replicatedJobs[%d].template.spec.%s", i,
			         el->string ? el->string : "");
			if (!el->string || cJSON_IsNull(el))
				continue;
			if (strcmp(el->string, "activeDeadlineSeconds") == 0 &&
			    strcmp(name, TJ_STEP_NODE) != 0)
				return refuse(
				        why, field,
				        "the walltime is the node step's; a deadline of another "
				        "step is not enforced");
			if (strcmp(el->string, "podFailurePolicy") == 0 &&
			    check_pod_failure_policy(rj, field, why) < 0)
				return -EOPNOTSUPP;
			if (tj_runtime_job_field_check(el, field, TJ_REASON_UNSUPPORTED_RUNTIME,
			                               why) == -EOPNOTSUPP)
				return -EOPNOTSUPP;
		}
		i++;
	}
	return 0;
}

/* volumeClaimPolicies[].retentionPolicy.whenDeleted: Delete (the PVCs go with the
 * TrainJob, JobSet's default) or Retain (they outlive it). */
static int check_claim_policies(const cJSON *spec, struct tj_problem *why)
{
	static const char *const retention[] = { "Delete", "Retain", NULL };
	const cJSON *pol;
	char field[128];
	int i = 0;

	cJSON_ArrayForEach(pol, tj_json_path(spec, "volumeClaimPolicies"))
	{
		const cJSON *when = tj_json_path(pol, "retentionPolicy.whenDeleted");

		snprintf(field, sizeof(field),
		         "spec.template.spec.volumeClaimPolicies[%d].retentionPolicy.whenDeleted",
		         i++);
		if (when && !cJSON_IsNull(when) &&
		    !(cJSON_IsString(when) && is_one_of(when->valuestring, retention)))
			return refuse(why, field, "its values are Delete and Retain");
	}
	return 0;
}

int tj_runtime_support_check(const cJSON *runtime, struct tj_problem *why)
{
	const cJSON *spec = tj_json_path(runtime, "spec.template.spec");
	const cJSON *pgp = tj_json_path(runtime, "spec.podGroupPolicy");
	const cJSON *el;
	char field[128];

	if (pgp && !cJSON_IsNull(pgp)) {
		el = cJSON_IsObject(pgp) && pgp->child ? pgp->child : NULL;
		snprintf(field, sizeof(field), "spec.podGroupPolicy%s%s", el ? "." : "",
		         el && el->string ? el->string : "");
		return refuse(why, field,
		              "the controller's own admission creates a job's pods only when all "
		              "of them fit, without another scheduler's PodGroups");
	}
	if (tj_json_path(runtime, "spec.mlPolicy.flux")) {
		tj_problem_set(
		        why, TJ_REASON_UNSUPPORTED_RUNTIME,
		        "spec.mlPolicy.flux is not supported by this controller: it does not build "
		        "Flux's broker (the flux-installer init container, the ConfigMap "
		        "<job>-flux-entrypoint that wraps the command in flux run, the CURVE "
		        "certificate Secret <job>-flux-curve); run the program with mpirun on an "
		        "MPI runtime (spec.mlPolicy.mpi, as Kubeflow's deepspeed-distributed) "
		        "instead (crds/README.md lists what is supported)");
		return -EOPNOTSUPP;
	}
	/* The fields the table refuses (reconcilers/fields.h), then the values of the limited
	 * ones. */
	if (tj_field_check(TJ_FIELD_RUNTIME, tj_json_path(runtime, "spec"),
	                   TJ_REASON_UNSUPPORTED_RUNTIME, why) < 0 ||
	    check_env_injection(runtime, why) < 0)
		return -EOPNOTSUPP;
	if (cJSON_IsObject(tj_json_path(spec, "network")) &&
	    check_network(tj_json_path(spec, "network"), why) < 0)
		return -EOPNOTSUPP;
	if (cJSON_IsObject(tj_json_path(spec, "failurePolicy")) &&
	    check_failure_policy(tj_json_path(spec, "failurePolicy"),
	                         tj_json_path(spec, "replicatedJobs"), why) < 0)
		return -EOPNOTSUPP;
	if (check_steps(spec, why) < 0 || check_claim_policies(spec, why) < 0)
		return -EOPNOTSUPP;
	return 0;
}

int tj_runtime_failure_budget(const cJSON *runtime)
{
	const cJSON *fp = tj_json_path(runtime, FAILURE_POLICY);
	const cJSON *rules = tj_json_path(fp, "rules");
	const cJSON *max = tj_json_path(fp, "maxRestarts");
	int64_t n;
	const cJSON *first = cJSON_IsArray(rules) ? rules->child : NULL;

	if (first && strcmp(tj_or(tj_json_string(first, "action"), ""), "FailJobSet") == 0 &&
	    !non_empty_list(tj_json_path(first, "onJobFailureReasons")) &&
	    !non_empty_list(tj_json_path(first, "onJobFailureMessagePatterns")) &&
	    !non_empty_list(tj_json_path(first, "targetReplicatedJobs")))
		return 0;
	if (!cJSON_IsObject(fp))
		return -1;
	/* JobSet's maxRestarts defaults to 0: a failurePolicy without it restarts nothing. */
	if (cJSON_IsNumber(max) && tj_double_to_int64(max->valuedouble, 0, 1000, &n))
		return (int)n;
	return max ? -1 : 0;
}
