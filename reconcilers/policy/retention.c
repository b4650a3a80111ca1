#include "reconcilers/policy/retention.h"

int tj_retention_ttl(const struct tj_runtime *runtime, const struct tj_retention_policy *policy)
{
	if (runtime && runtime->ttl_seconds_after_finished >= 0)
		return runtime->ttl_seconds_after_finished;
	return policy->ttl_seconds_after_finished;
}

bool tj_retention_ttl_expired(int64_t completion_time, int ttl, int64_t now, int64_t *ret_wait)
{
	int64_t end;

	if (ttl < 0 || completion_time <= 0)
		return false;
	end = completion_time + ttl;
	if (now >= end)
		return true;
	if (ret_wait)
		*ret_wait = end - now;
	return false;
}

bool tj_retention_keepable(const struct tj_keep_input *in)
{
	return in->finished && !in->deleting && !in->node_failed;
}

bool tj_retention_stopping(const struct tj_keep_input *in)
{
	return in->stopping && !in->deleting && !in->node_failed && in->now < in->stop_until;
}

enum tj_keep_verdict tj_retention_keep(const struct tj_keep_input *in, int64_t *ret_wait)
{
	int64_t end;

	*ret_wait = 0;
	if (tj_retention_stopping(in)) {
		if (!in->kept)
			return TJ_KEEP_LABEL;
		*ret_wait = in->stop_until - in->now;
		return TJ_KEEP;
	}
	/* A pod that still runs holds its GPUs; a failed node's kubelet will never serve its
	 * logs (and the pod is force-deleted); one being deleted is going anyway. */
	if (!tj_retention_keepable(in) || in->attempt < in->newest_attempt)
		return TJ_KEEP_DELETE;
	if (!in->kept)
		return TJ_KEEP_LABEL;
	if (in->job_finished || in->running_since <= 0)
		return TJ_KEEP;
	end = in->running_since + in->keep_seconds;
	if (in->now >= end)
		return TJ_KEEP_DELETE;
	*ret_wait = end - in->now;
	return TJ_KEEP;
}
