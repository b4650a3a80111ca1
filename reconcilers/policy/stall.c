#include "reconcilers/policy/stall.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/number.h"
#include "reconcilers/json.h"
#include "reconcilers/policy/walltime.h"

#define DURATION_HINT "a duration such as 30m, 1h30m or 600s (1 s to 366 d), or 0 for none"

/* A timeout as walltimes are written, or "0": none. */
static bool parse_timeout(const char *s, int64_t *ret)
{
	long long v;

	if (strcmp(s, "0") == 0) {
		*ret = 0;
		return true;
	}
	if (tj_walltime_parse(s, &v) < 0)
		return false;
	*ret = v;
	return true;
}

int tj_stall_timeout(const struct tj_trainjob *job, const struct tj_runtime *rt, int64_t *ret,
                     struct tj_problem *why)
{
	if (job->stall_timeout) {
		if (!parse_timeout(job->stall_timeout, ret))
			return tj_problem_set(
			        why, "InvalidSpec",
			        "metadata.annotations[%s]: '%.80s' is not " DURATION_HINT,
			        TJ_ANNOTATION_STALL_TIMEOUT, job->stall_timeout);
		return 0;
	}
	if (!rt || !rt->stall_timeout) {
		*ret = 0;
		return 0;
	}
	if (!parse_timeout(rt->stall_timeout, ret))
		return tj_problem_set(why, "InvalidRuntime",
		                      "%s %s: %s '%.80s' is not " DURATION_HINT,
		                      tj_runtime_kind_name(rt->kind), rt->name,
		                      TJ_ANNOTATION_STALL_TIMEOUT, rt->stall_timeout);
	return 0;
}

void tj_stall_judge(const struct tj_stall_input *in, struct tj_stall_verdict *ret)
{
	struct tj_stall_verdict v = { 0 };
	int64_t end;

	if (in->timeout > 0 && in->reported && in->running_since > 0 && in->progress_seen > 0) {
		v.from_start = in->running_since > in->progress_seen;
		v.since = v.from_start ? in->running_since : in->progress_seen;
		end = tj_add_capped(v.since, in->timeout);
		if (in->now >= end)
			v.stalled = true;
		else
			v.check_at = end;
	}
	*ret = v;
}

void tj_stall_describe(const struct tj_stall_input *in, const struct tj_stall_verdict *v,
                       int percent, char *buf, size_t size)
{
	char reported[16] = "", since[21], timeout[32];

	if (percent >= 0)
		snprintf(reported, sizeof(reported), " (%d%%)", percent);
	tj_time_format(v->since, since);
	tj_walltime_format(in->timeout, timeout);
	snprintf(buf, size,
	         "the progress it reports%s has not changed since %s%s, longer than its stall "
	         "timeout of %s",
	         reported, v->from_start ? "its pods started at " : "", since, timeout);
}
