#include "reconcilers/usage/gpu_seconds.h"

#include <string.h>

#include "base/number.h"

int64_t tj_gpu_seconds_of_pod(const struct tj_pod *pod, const char *resource, int64_t from,
                              int64_t to)
{
	int64_t gpus = tj_pod_resources_extended(
	        &pod->requests, resource ? resource : TJ_GPU_SECONDS_DEFAULT_RESOURCE);
	int64_t start = pod->start_time, stop = to;

	if (gpus <= 0 || start <= 0)
		return 0;
	if (pod->held_seconds >= 0 && start + pod->held_seconds < stop)
		stop = start + pod->held_seconds;
	if (start < from)
		start = from;
	if (stop <= start)
		return 0;
	/* Requests are bounded by what a node has; a product beyond int64 is no real pod. */
	return gpus > INT64_MAX / (stop - start) ? INT64_MAX : gpus * (stop - start);
}

/* What the pods held between the old status's mark and now. */
struct window {
	int64_t held;
	/* The part held by pods of an attempt before `attempt` (under Gang, of attempts that
	 * failed). */
	int64_t earlier_attempts;
	bool deleting; /* a pod being deleted held some of it */
	bool deletes;  /* a pod the plan deletes did */
};

static void window(const struct tj_gpu_seconds_input *in, int attempt, struct window *w)
{
	*w = (struct window){ 0 };
	for (size_t i = 0; i < in->n_pods; i++) {
		const struct tj_pod *pod = in->pods[i];
		int64_t s = tj_gpu_seconds_of_pod(pod, in->resource, in->old->gpu_seconds_until,
		                                  in->now);

		w->held = tj_add_capped(w->held, s);
		if (pod->attempt >= 0 && pod->attempt < attempt)
			w->earlier_attempts = tj_add_capped(w->earlier_attempts, s);
		if (s > 0 && pod->deletion_time)
			w->deleting = true;
		if (s > 0 && in->deletes && in->deletes[i])
			w->deletes = true;
	}
}

static const struct tj_pod *pod_named(const struct tj_gpu_seconds_input *in, const char *name)
{
	for (size_t i = 0; i < in->n_pods; i++)
		if (strcmp(in->pods[i]->name, name) == 0)
			return in->pods[i];
	return NULL;
}

bool tj_gpu_seconds_count(const struct tj_gpu_seconds_input *in, struct tj_trainjob_status *st)
{
	const struct tj_trainjob_status *old = in->old;
	struct window w;
	bool changed;
	int64_t total, wasted = old->wasted_gpu_seconds;

	window(in, st->restart_count, &w);
	total = tj_add_capped(old->gpu_seconds, w.held);

	/* Whether the plan writes the status anyway, judged without the counts. */
	st->gpu_seconds = old->gpu_seconds;
	st->wasted_gpu_seconds = old->wasted_gpu_seconds;
	st->gpu_seconds_until = old->gpu_seconds_until;
	changed = !tj_trainjob_status_equal(st, old);
	if (!changed && !w.deleting && !w.deletes)
		return false;
	if (st->state == TJ_STATE_FAILED) {
		wasted = total;
	} else if (st->restart_count > old->restart_count) {
		const struct tj_pod *failed = pod_named(in, st->last_failure.pod);

		if (in->gang)
			wasted = total;
		else if (failed)
			wasted = tj_add_capped(
			        wasted, tj_gpu_seconds_of_pod(failed, in->resource, 0, in->now));
	} else if (in->gang) {
		/* The pods of a failed attempt, still stopping after its restart. */
		wasted = tj_add_capped(wasted, w.earlier_attempts);
	}
	st->gpu_seconds = total;
	st->wasted_gpu_seconds = wasted < total ? wasted : total;
	/* The mark moves only when something was counted, so that a job that never held a
	 * GPU has none of these fields. */
	if (w.held > 0)
		st->gpu_seconds_until = in->now;
	return w.deletes;
}

void tj_gpu_seconds_outcomes(const struct tj_trainjob_status *old,
                             const struct tj_trainjob_status *new_status,
                             struct tj_gpu_seconds_outcomes *ret)
{
	int64_t wasted = new_status->wasted_gpu_seconds - old->wasted_gpu_seconds;

	ret->wasted = wasted > 0 ? wasted : 0;
	ret->succeeded = 0;
	if (new_status->state == TJ_STATE_COMPLETE) {
		int64_t now = new_status->gpu_seconds - new_status->wasted_gpu_seconds;
		int64_t before = old->state == TJ_STATE_COMPLETE
		                         ? old->gpu_seconds - old->wasted_gpu_seconds
		                         : 0;

		ret->succeeded = now > before ? now - before : 0;
	}
}

int64_t tj_gpu_seconds_cancelled(const struct tj_gpu_seconds_input *in)
{
	const struct tj_trainjob_status *old = in->old;
	struct window w;
	int64_t total;

	if (old->state == TJ_STATE_COMPLETE || old->state == TJ_STATE_FAILED)
		return 0;
	window(in, old->restart_count, &w);
	total = tj_add_capped(old->gpu_seconds, w.held);
	return total > old->wasted_gpu_seconds ? total - old->wasted_gpu_seconds : 0;
}
