#include "reconcilers/failure_rules.h"

#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "reconcilers/json.h"

static bool has_string(const cJSON *list, const char *s)
{
	const cJSON *el;

	cJSON_ArrayForEach(el, list) if (cJSON_IsString(el) &&
	                                 strcmp(el->valuestring, s) == 0) return true;
	return false;
}

static bool has_code(const cJSON *values, int code)
{
	const cJSON *el;

	cJSON_ArrayForEach(el,
	                   values) if (cJSON_IsNumber(el) && el->valuedouble == code) return true;
	return false;
}

/* onExitCodes as Kubernetes matches it: a container that exited 0 matches no rule. */
static bool exit_codes_match(const cJSON *req, int exit_code)
{
	const char *op = tj_json_string(req, "operator");
	const cJSON *values = tj_json_path(req, "values");

	if (exit_code <= 0 || !op)
		return false;
	if (strcmp(op, "In") == 0)
		return has_code(values, exit_code);
	return strcmp(op, "NotIn") == 0 && !has_code(values, exit_code);
}

const char *tj_failure_job_reason(const char *pod_rules, int exit_code)
{
	const char *reason = TJ_JOB_REASON_BACKOFF_LIMIT;
	cJSON *rules;
	const cJSON *rule;

	if (!pod_rules || tj_json_parse(pod_rules, &rules) < 0)
		return reason;
	cJSON_ArrayForEach(rule, rules)
	{
		if (!exit_codes_match(tj_json_path(rule, "onExitCodes"), exit_code))
			continue;
		if (strcmp(tj_or(tj_json_string(rule, "action"), ""), "FailJob") == 0)
			reason = TJ_JOB_REASON_POD_FAILURE_POLICY;
		break; /* the first rule that matches decides; Count keeps the default */
	}
	cJSON_Delete(rules);
	return reason;
}

bool tj_failure_rules_fail(const char *jobset_rules, const char *step, const char *job_reason,
                           char *why, size_t size)
{
	cJSON *rules;
	const cJSON *rule;
	bool fail = false;
	int i = 0;

	if (!jobset_rules || tj_json_parse(jobset_rules, &rules) < 0)
		return false;
	cJSON_ArrayForEach(rule, rules)
	{
		const cJSON *reasons = tj_json_path(rule, "onJobFailureReasons");
		const cJSON *targets = tj_json_path(rule, "targetReplicatedJobs");
		const char *action = tj_or(tj_json_string(rule, "action"), "");

		if ((cJSON_GetArraySize(reasons) == 0 || has_string(reasons, job_reason)) &&
		    (cJSON_GetArraySize(targets) == 0 || has_string(targets, step))) {
			fail = strcmp(action, "FailJobSet") == 0;
			if (fail)
				snprintf(why, size,
				         "failurePolicy rule %d (%s): FailJobSet on a Job of %s "
				         "failed "
				         "with reason %s",
				         i, tj_or(tj_json_string(rule, "name"), ""), step,
				         job_reason);
			break;
		}
		i++;
	}
	cJSON_Delete(rules);
	return fail;
}
