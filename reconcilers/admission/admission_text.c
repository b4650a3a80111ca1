/* The words of the queue's messages, as a person reads them in `kubectl describe`, and when a
 * decision is worth telling again. */
#include "reconcilers/admission/admission_text.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *tj_admission_plural(int64_t n)
{
	return n == 1 ? "" : "s";
}

/* One pod's request, by what matters most: "4 GPUs", "8 CPUs", "500m CPU", "64 GiB". */
static void describe_request(char *buf, size_t size, const struct tj_admission_resources *req)
{
	const int64_t gib = 1024 * 1024 * 1024, mib = 1024 * 1024;

	if (req->gpus > 0)
		snprintf(buf, size, "%" PRId64 " GPU%s", req->gpus, tj_admission_plural(req->gpus));
	else if (req->cpu_milli > 0 && req->cpu_milli % 1000 == 0)
		snprintf(buf, size, "%" PRId64 " CPU%s", req->cpu_milli / 1000,
		         tj_admission_plural(req->cpu_milli / 1000));
	else if (req->cpu_milli > 0)
		snprintf(buf, size, "%" PRId64 "m CPU", req->cpu_milli);
	else if (req->memory > 0 && req->memory % gib == 0)
		snprintf(buf, size, "%" PRId64 " GiB", req->memory / gib);
	else if (req->memory > 0 && req->memory % mib == 0)
		snprintf(buf, size, "%" PRId64 " MiB", req->memory / mib);
	else if (req->memory > 0)
		snprintf(buf, size, "%" PRId64 " bytes", req->memory);
	else
		buf[0] = '\0';
}

/* "5 nodes x 4 GPUs" for the pods of a job; "2 of 5 nodes x 4 GPUs" when it needs only
 * some of its ranks now. */
static void describe_gang(char *buf, size_t size, const struct tj_admission_job *job, int pods)
{
	char req[64], of[32] = "";

	describe_request(req, sizeof(req), &job->request);
	if (pods != job->num_nodes)
		snprintf(of, sizeof(of), " of %d", job->num_nodes);
	int n = snprintf(buf, size, "%d%s node%s%s%s", pods, of,
	                 tj_admission_plural(job->num_nodes), req[0] ? " x " : "", req);

	if (job->launcher.pods <= 0 || n < 0 || (size_t)n >= size)
		return;
	describe_request(req, sizeof(req), &job->launcher);
	snprintf(buf + n, size - (size_t)n, " and a launcher%s%s", req[0] ? " of " : "", req);
}

/* "10:40Z" on the day of `now`, "2026-12-02T10:40Z" on another, "unknown" for 0. */
void tj_admission_describe_time(char *buf, size_t size, int64_t t, int64_t now)
{
	time_t tt = (time_t)t, tn = (time_t)now;
	struct tm at, today;

	if (t == 0 || !gmtime_r(&tt, &at) || !gmtime_r(&tn, &today)) {
		snprintf(buf, size, "unknown");
		return;
	}
	if (at.tm_year == today.tm_year && at.tm_yday == today.tm_yday)
		strftime(buf, size, "%H:%MZ", &at);
	else
		strftime(buf, size, "%Y-%m-%dT%H:%MZ", &at);
}

void tj_admission_say_waiting(struct tj_admission_decision *d, const char *class_name,
                              const struct tj_admission_job *job, int64_t now)
{
	char gang[128], start[32];

	describe_gang(gang, sizeof(gang), job, job->num_pods);
	if (d->untried) {
		snprintf(d->message, sizeof(d->message),
		         "position %d of %d in %s: needs %s; not looked at yet: the queue is tried "
		         "a part at a time (admission.backfillMaxJobTest)",
		         d->position, d->queue_length, class_name, gang);
		return;
	}
	tj_admission_describe_time(start, sizeof(start), d->expected_start, now);
	snprintf(d->message, sizeof(d->message),
	         "position %d of %d in %s: needs %s, %d such node%s free; expected start %s",
	         d->position, d->queue_length, class_name, gang, d->free_nodes,
	         tj_admission_plural(d->free_nodes), start);
}

void tj_admission_describe_node(char *buf, size_t size, const struct tj_admission_resources *alloc,
                                const struct tj_admission_resources *req)
{
	struct tj_admission_resources shape = *alloc;

	if (req->gpus > 0)
		shape.cpu_milli = shape.memory = 0;
	else if (req->cpu_milli > 0)
		shape.gpus = shape.memory = 0;
	else
		shape.gpus = shape.cpu_milli = 0;
	describe_request(buf, size, &shape);
}

void tj_admission_say_never_fits(struct tj_admission_decision *d, const char *class_name,
                                 const struct tj_admission_job *job, int64_t most, int n_nodes,
                                 const char *node_size)
{
	char gang[128], size_text[128], others[TJ_MESSAGE_MAX / 2] = "";
	bool restricted = job->eligible && job->ineligible_why && *job->ineligible_why;

	if (n_nodes && node_size[0])
		snprintf(size_text, sizeof(size_text), "%d node%s of %s", n_nodes,
		         tj_admission_plural(n_nodes), node_size);
	else if (n_nodes)
		snprintf(size_text, sizeof(size_text), "%d node%s that hold such a pod", n_nodes,
		         tj_admission_plural(n_nodes));
	else
		snprintf(size_text, sizeof(size_text), "no node that holds such a pod");
	if (restricted)
		snprintf(others, sizeof(others), "%s its pods may use (not the others: %s)",
		         n_nodes ? " that" : " among those", job->ineligible_why);
	describe_gang(gang, sizeof(gang), job, job->num_nodes);
	snprintf(d->message, sizeof(d->message),
	         "%s has %s%s: a job of %s never fits; at most %" PRId64, class_name, size_text,
	         others, gang, most);
}

/* Resources or Priority: whether the gang waits for nodes, or for the jobs ahead of it to
 * take the nodes free now. */
static bool waits_its_turn(const struct tj_admission_decision *d)
{
	return strcmp(d->reason, TJ_ADMISSION_REASON_RESOURCES) == 0 ||
	       strcmp(d->reason, TJ_ADMISSION_REASON_PRIORITY) == 0;
}

/* Both places past the first TJ_ADMISSION_POSITION_NEAR of the queue. */
static bool far_back(const struct tj_admission_decision *old, const struct tj_admission_decision *d)
{
	return old->position > TJ_ADMISSION_POSITION_NEAR &&
	       d->position > TJ_ADMISSION_POSITION_NEAR;
}

bool tj_admission_worth_telling(const struct tj_admission_decision *old,
                                const struct tj_admission_decision *d)
{
	int64_t ds = old->expected_start - d->expected_start;
	int dp = old->position - d->position;

	if (old->verdict != d->verdict || old->untried != d->untried ||
	    (strcmp(old->reason, d->reason) != 0 &&
	     !(far_back(old, d) && waits_its_turn(old) && waits_its_turn(d))))
		return true;
	if ((old->expected_start == 0) != (d->expected_start == 0) ||
	    ds > TJ_ADMISSION_EXPECTED_START_SLOP || ds < -TJ_ADMISSION_EXPECTED_START_SLOP)
		return true;
	if (dp == 0)
		return d->position == 1 &&
		       (old->queue_length != d->queue_length || old->free_nodes != d->free_nodes);
	return d->position <= TJ_ADMISSION_POSITION_NEAR ||
	       old->position <= TJ_ADMISSION_POSITION_NEAR ||
	       abs(dp) * TJ_ADMISSION_POSITION_SHARE >= d->position;
}

void tj_admission_keep_last_look(struct tj_admission_decision *d,
                                 const struct tj_admission_decision *told)
{
	if (!d->untried || told->verdict != TJ_ADMISSION_WAITING || told->untried)
		return;
	d->reason_number = told->reason_number;
	memcpy(d->reason, told->reason, sizeof(d->reason));
	memcpy(d->message, told->message, sizeof(d->message));
	d->expected_start = told->expected_start;
	d->free_nodes = told->free_nodes;
	d->untried = false;
}

void tj_admission_say_preempting(struct tj_admission_decision *d,
                                 const struct tj_admission_running *running)
{
	size_t len = strlen(d->message);
	int n;

	if (!running) {
		snprintf(d->message + len, sizeof(d->message) - len,
		         "; waiting for the jobs it preempted to stop");
		return;
	}
	n = snprintf(d->message + len, sizeof(d->message) - len,
	             "; preempting %zu job%s of lower tiers:", d->n_victims,
	             tj_admission_plural((int64_t)d->n_victims));
	for (size_t i = 0; n > 0 && i < d->n_victims; i++) {
		len = strlen(d->message);
		if (len + 1 >= sizeof(d->message))
			break;
		n = snprintf(d->message + len, sizeof(d->message) - len, "%s %s", i ? "," : "",
		             running[d->victims[i]].key ? running[d->victims[i]].key : "");
	}
}
