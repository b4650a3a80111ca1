#include "reconcilers/policy/suspect.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool tj_suspect_ending(const struct tj_suspect_policy *policy, int exit_code,
                       const char *exit_reason)
{
	if (exit_reason && strcmp(exit_reason, "OOMKilled") == 0)
		return false;
	for (size_t i = 0; i < policy->n_exit_codes; i++)
		if (policy->exit_codes[i] == exit_code)
			return true;
	return false;
}

static bool copy_str(char *dst, size_t size, const char *src)
{
	int n = snprintf(dst, size, "%s", src);

	return n >= 0 && (size_t)n < size;
}

bool tj_suspect_failure_of_pod(const struct tj_suspect_policy *policy, const struct tj_pod *pod,
                               int64_t now, struct tj_node_failure *ret)
{
	struct tj_node_failure f = { .attempt = pod->attempt, .exit_code = pod->exit_code };

	if (!pod->trainjob || !pod->node_name || !*pod->node_name || pod->attempt < 0 ||
	    pod->phase != TJ_POD_FAILED || pod->deletion_time || !pod->terminated ||
	    (pod->reason && strcmp(pod->reason, "DeadlineExceeded") == 0) ||
	    !tj_suspect_ending(policy, pod->exit_code, pod->exit_reason))
		return false;
	if (!copy_str(f.node, sizeof(f.node), pod->node_name) ||
	    snprintf(f.job, sizeof(f.job), "%s/%s", pod->namespace, pod->trainjob) >=
	            (int)sizeof(f.job))
		return false;
	f.time = pod->start_time > 0 && pod->held_seconds >= 0 ? pod->start_time + pod->held_seconds
	                                                       : now;
	*ret = f;
	return true;
}

bool tj_suspect_failure_of_restart(const char *job_key, const char *failure_class,
                                   const struct tj_trainjob_status *status,
                                   struct tj_node_failure *ret)
{
	static const char *const conditions[] = { "NodeNotReady", "NodeUnreachable", "GPUUnhealthy",
		                                  "NodeCordonedForFault" };
	const struct tj_failure *lf = &status->last_failure;
	struct tj_node_failure f = { .attempt = status->restart_count - 1, .time = lf->time };
	bool node_fault = false;

	for (size_t i = 0; i < sizeof(conditions) / sizeof(conditions[0]); i++)
		node_fault |= failure_class && strcmp(failure_class, conditions[i]) == 0;
	if (!node_fault || !lf->node[0] || f.attempt < 0 ||
	    !copy_str(f.node, sizeof(f.node), lf->node) || !copy_str(f.job, sizeof(f.job), job_key))
		return false;
	*ret = f;
	return true;
}

/* ---- the annotation ---- */

/* A job key as the API server allows it: a DNS label, '/', a DNS subdomain. Nothing else
 * may pass into the text, which separates entries with ',' and fields with ':'. */
static bool valid_job(const char *s, size_t len)
{
	size_t slashes = 0;

	if (len == 0 || len >= TJ_KEY_MAX)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];

		if (c == '/')
			slashes++;
		else if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
		           c == '.'))
			return false;
	}
	return slashes == 1 && s[0] != '/' && s[len - 1] != '/';
}

/* A decimal number of at most 18 digits, the whole of [s, end). */
static bool read_number(const char *s, const char *end, long long *ret)
{
	long long v = 0;

	if (s == end || end - s > 18)
		return false;
	for (; s < end; s++) {
		if (*s < '0' || *s > '9')
			return false;
		v = v * 10 + (*s - '0');
	}
	*ret = v;
	return true;
}

/* One entry "TIME:CODE:ATTEMPT:NS/NAME" of [s, end). */
static bool parse_entry(const char *s, const char *end, struct tj_node_failure *f)
{
	long long nums[3];

	for (int i = 0; i < 3; i++) {
		const char *colon = memchr(s, ':', (size_t)(end - s));

		if (!colon || !read_number(s, colon, &nums[i]))
			return false;
		s = colon + 1;
	}
	if (nums[1] > 255 || nums[2] > 1000000 || !valid_job(s, (size_t)(end - s)))
		return false;
	f->time = nums[0];
	f->exit_code = (int)nums[1];
	f->attempt = (int)nums[2];
	memcpy(f->job, s, (size_t)(end - s));
	f->job[end - s] = '\0';
	return true;
}

/* The index of the oldest of out[0..n). */
static size_t oldest(const struct tj_node_failure *out, size_t n)
{
	size_t o = 0;

	for (size_t i = 1; i < n; i++)
		if (out[i].time < out[o].time)
			o = i;
	return o;
}

#define CLEARED "cleared:"

/* The time of an entry "cleared:TIME", or 0. */
static int64_t parse_cleared(const char *s, const char *end)
{
	long long t;

	if ((size_t)(end - s) <= strlen(CLEARED) || strncmp(s, CLEARED, strlen(CLEARED)) != 0 ||
	    !read_number(s + strlen(CLEARED), end, &t))
		return 0;
	return t;
}

size_t tj_suspect_parse(const char *node, const char *text, struct tj_node_failure *out, size_t max,
                        int64_t *ret_cleared)
{
	struct tj_node_failure f;
	int64_t cleared = 0;
	size_t n = 0;

	if (ret_cleared)
		*ret_cleared = 0;
	if (!text || strlen(text) > TJ_SUSPECT_FAILURES_MAX ||
	    !copy_str(f.node, sizeof(f.node), node))
		return 0;
	for (const char *s = text; *s;) {
		const char *end = strchr(s, ',');
		int64_t t;

		if (!end)
			end = s + strlen(s);
		t = parse_cleared(s, end);
		if (t > cleared)
			cleared = t;
		s = *end ? end + 1 : end;
	}
	while (*text) {
		const char *end = strchr(text, ',');

		if (!end)
			end = text + strlen(text);
		if (parse_entry(text, end, &f) && f.time > cleared) {
			if (n < max) {
				out[n++] = f;
			} else if (max > 0) {
				/* Full: the newest stay, in the text's order. */
				size_t o = oldest(out, n);

				if (out[o].time < f.time) {
					memmove(&out[o], &out[o + 1], (n - o - 1) * sizeof(*out));
					out[n - 1] = f;
				}
			}
		}
		text = *end ? end + 1 : end;
	}
	if (ret_cleared)
		*ret_cleared = cleared;
	return n;
}

int tj_suspect_format(int64_t cleared, const struct tj_node_failure *failures, size_t n, char *buf,
                      size_t size)
{
	size_t used = 0;
	int w;

	if (size == 0)
		return -ENOSPC;
	buf[0] = '\0';
	if (cleared > 0) {
		w = snprintf(buf, size, CLEARED "%lld", (long long)cleared);
		if (w < 0 || (size_t)w >= size) {
			buf[0] = '\0';
			return -ENOSPC;
		}
		used = (size_t)w;
	}
	for (size_t i = 0; i < n; i++) {
		const struct tj_node_failure *f = &failures[i];

		w = snprintf(buf + used, size - used, "%s%lld:%d:%d:%s", used ? "," : "",
		             (long long)f->time, f->exit_code, f->attempt, f->job);

		if (w < 0 || (size_t)w >= size - used) {
			buf[used] = '\0';
			return -ENOSPC;
		}
		used += (size_t)w;
	}
	return 0;
}

/* ---- the decision ---- */

static bool in_window(const struct tj_suspect_policy *policy, const struct tj_node_failure *f,
                      int64_t now)
{
	return f->time > now - policy->window_seconds;
}

/* The same job failed so on another node within the window, in any attempt. */
static bool fails_elsewhere(const struct tj_suspect_policy *policy,
                            const struct tj_node_failure *history, size_t n,
                            const struct tj_node_failure *f, int64_t now)
{
	for (size_t i = 0; i < n; i++) {
		const struct tj_node_failure *o = &history[i];

		if (in_window(policy, o, now) && strcmp(o->job, f->job) == 0 &&
		    strcmp(o->node, f->node) != 0)
			return true;
	}
	return false;
}

static bool blamed(const struct tj_suspect_policy *policy, const struct tj_node_failure *history,
                   size_t n, const struct tj_node_failure *f, const char *node, int64_t now)
{
	return strcmp(f->node, node) == 0 && in_window(policy, f, now) &&
	       !fails_elsewhere(policy, history, n, f, now);
}

size_t tj_suspect_keep(const struct tj_suspect_policy *policy,
                       const struct tj_node_failure *history, size_t n, const char *node,
                       int64_t now, struct tj_node_failure *out)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		const struct tj_node_failure *f = &history[i];
		size_t at;

		if (strcmp(f->node, node) != 0 || !in_window(policy, f, now))
			continue;
		if (k == TJ_SUSPECT_NODE_RECORDS) {
			size_t o = oldest(out, k);

			if (out[o].time >= f->time)
				continue;
			memmove(&out[o], &out[o + 1], (k - o - 1) * sizeof(*out));
			k--;
		}
		/* Oldest first: insert in time order. */
		for (at = k; at > 0 && out[at - 1].time > f->time; at--)
			;
		memmove(&out[at + 1], &out[at], (k - at) * sizeof(*out));
		out[at] = *f;
		k++;
	}
	return k;
}

void tj_suspect_judge(const struct tj_suspect_policy *policy, const struct tj_node_failure *history,
                      size_t n, const char *node, int64_t now, struct tj_suspect_verdict *ret)
{
	struct tj_suspect_verdict v = { 0 };
	/* The blamed failures in time order: each job is named at its first failure. */
	const struct tj_node_failure *order[TJ_SUSPECT_NODE_RECORDS * 4];
	size_t k = 0;

	for (size_t i = 0; i < n && k < sizeof(order) / sizeof(order[0]); i++) {
		size_t at;

		if (!blamed(policy, history, n, &history[i], node, now))
			continue;
		for (at = k; at > 0 && order[at - 1]->time > history[i].time; at--)
			order[at] = order[at - 1];
		order[at] = &history[i];
		k++;
	}
	for (size_t i = 0; i < k; i++) {
		bool seen = false;

		for (size_t j = 0; j < i && !seen; j++)
			seen = strcmp(order[j]->job, order[i]->job) == 0;
		if (seen)
			continue;
		if (v.n_jobs < TJ_SUSPECT_MAX_JOBS)
			memcpy(v.jobs[v.n_jobs], order[i]->job, sizeof(v.jobs[0]));
		v.n_jobs++;
	}
	if (k) {
		v.first = order[0]->time;
		v.last = order[k - 1]->time;
	}
	v.suspect = policy->jobs > 0 && v.n_jobs >= (size_t)policy->jobs;
	*ret = v;
}

bool tj_node_is_suspect(const struct tj_node *node)
{
	for (size_t i = 0; i < node->n_taints; i++)
		if (node->taints[i].key && strcmp(node->taints[i].key, TJ_TAINT_SUSPECT) == 0)
			return true;
	return false;
}

enum tj_suspect_action tj_suspect_decide(const struct tj_suspect_policy *policy, bool tainted,
                                         bool marked, const struct tj_suspect_verdict *verdict)
{
	if (marked && !tainted)
		return TJ_SUSPECT_FORGET;
	if (policy->enabled && verdict->suspect && !tainted && !marked)
		return TJ_SUSPECT_MARK;
	return TJ_SUSPECT_KEEP;
}

void tj_suspect_describe(const struct tj_suspect_policy *policy,
                         const struct tj_suspect_verdict *verdict, char *buf, size_t size)
{
	size_t named =
	        verdict->n_jobs < TJ_SUSPECT_MAX_JOBS ? verdict->n_jobs : TJ_SUSPECT_MAX_JOBS;
	size_t used;
	int w = snprintf(buf, size, "ranks of %zu TrainJobs failed on it within %lld s (",
	                 verdict->n_jobs, policy->window_seconds);

	if (w < 0 || (size_t)w >= size)
		return;
	used = (size_t)w;
	for (size_t i = 0; i < named; i++) {
		w = snprintf(buf + used, size - used, "%s%s", i ? ", " : "", verdict->jobs[i]);
		if (w < 0 || (size_t)w >= size - used)
			return;
		used += (size_t)w;
	}
	snprintf(buf + used, size - used, "%s)", verdict->n_jobs > named ? ", ..." : "");
}
