#include "reconcilers/admission/capacity.h"

#include <stddef.h>
#include <string.h>

#include "base/number.h"

void tj_hold_of(const struct tj_pod *pod, int64_t job_deadline, struct tj_hold *ret)
{
	struct tj_hold h = { TJ_HOLD_NONE, NULL, 0 };

	if (!tj_pod_terminal(pod)) {
		if (pod->node_name)
			h = (struct tj_hold){ TJ_HOLD_BOUND, pod->node_name, 0 };
		else if (pod->pinned_node)
			h = (struct tj_hold){ TJ_HOLD_PINNED, pod->pinned_node, 0 };
		else if (pod->nominated_node)
			h = (struct tj_hold){ TJ_HOLD_NOMINATED, pod->nominated_node, 0 };
	}
	if (h.kind != TJ_HOLD_NONE) {
		if (pod->deletion_time > 0)
			h.end = pod->deletion_time;
		else if (job_deadline > 0)
			h.end = tj_add_capped(job_deadline, pod->termination_grace > 0
			                                            ? pod->termination_grace
			                                            : 0);
	}
	*ret = h;
}

bool tj_gang_ending_pod(const struct tj_pod *pod, const char *job_uid, int attempt)
{
	return pod->phase == TJ_POD_SUCCEEDED && pod->rank >= 0 && pod->attempt == attempt &&
	       !pod->kept && pod->owner_uid && job_uid && strcmp(pod->owner_uid, job_uid) == 0;
}

const char *tj_hold_kind_name(enum tj_hold_kind kind)
{
	switch (kind) {
	case TJ_HOLD_BOUND:
		return "bound";
	case TJ_HOLD_PINNED:
		return "pinned";
	case TJ_HOLD_NOMINATED:
		return "nominated";
	case TJ_HOLD_NONE:
		break;
	}
	return "none";
}
