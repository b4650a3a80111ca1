#include "controller/leader/leader.h"
#include "controller/leader/leader_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "controller/log/log.h"
#include "kube/request.h"

/* ---- the pure part ---- */

static void format_ms(uint64_t ms, char buf[32])
{
	if (ms % 1000 == 0)
		snprintf(buf, 32, "%llus", (unsigned long long)(ms / 1000));
	else
		snprintf(buf, 32, "%llums", (unsigned long long)ms);
}

int tj_leader_timings_check(const struct tj_leader_timings *t, char *err, size_t errlen)
{
	char lease[32], renew[32], retry[32];

	format_ms(t->lease_duration_ms, lease);
	format_ms(t->renew_deadline_ms, renew);
	format_ms(t->retry_period_ms, retry);
	if (t->retry_period_ms == 0) {
		snprintf(err, errlen, "the retry period must be longer than 0");
		return -EINVAL;
	}
	if (t->lease_duration_ms % 1000 != 0) {
		snprintf(err, errlen, "the lease duration (%s) must be a whole number of seconds",
		         lease);
		return -EINVAL;
	}
	if (t->lease_duration_ms > 3600u * 1000) {
		snprintf(err, errlen, "the lease duration (%s) must not be longer than 1h", lease);
		return -EINVAL;
	}
	if (t->renew_deadline_ms >= t->lease_duration_ms) {
		snprintf(err, errlen,
		         "the renew deadline (%s) must be shorter than the lease duration (%s)",
		         renew, lease);
		return -EINVAL;
	}
	/* Compared in tenths to stay in integers: deadline > 1.2 x retry. */
	if (t->renew_deadline_ms * 10 <= t->retry_period_ms * 12) {
		snprintf(err, errlen,
		         "the renew deadline (%s) must be longer than 1.2 times the retry period "
		         "(%s)",
		         renew, retry);
		return -EINVAL;
	}
	return 0;
}

static int copy_string(const cJSON *obj, const char *key, char *dst, size_t size)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);

	dst[0] = '\0';
	if (!cJSON_IsString(item))
		return 0;
	if (strlen(item->valuestring) >= size)
		return -E2BIG;
	strcpy(dst, item->valuestring);
	return 0;
}

static int64_t read_int(const cJSON *obj, const char *key)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);

	if (!cJSON_IsNumber(item) || !(item->valuedouble >= -2147483648.0) ||
	    !(item->valuedouble <= 2147483647.0))
		return 0;
	return (int64_t)item->valuedouble;
}

int tj_lease_record_from_json(const cJSON *lease, struct tj_lease_record *ret)
{
	const cJSON *spec = cJSON_GetObjectItemCaseSensitive(lease, "spec");
	struct tj_lease_record rec;

	if (!cJSON_IsObject(lease))
		return -EINVAL;
	memset(&rec, 0, sizeof(rec));
	/* A Lease created without a spec is a Lease nobody holds. */
	if (spec && !cJSON_IsObject(spec))
		return -EINVAL;
	if (spec) {
		if (copy_string(spec, "holderIdentity", rec.holder, sizeof(rec.holder)) < 0 ||
		    copy_string(spec, "acquireTime", rec.acquire_time, sizeof(rec.acquire_time)) <
		            0 ||
		    copy_string(spec, "renewTime", rec.renew_time, sizeof(rec.renew_time)) < 0)
			return -E2BIG;
		rec.duration_s = read_int(spec, "leaseDurationSeconds");
		rec.transitions = read_int(spec, "leaseTransitions");
	}
	*ret = rec;
	return 0;
}

static int set_item(cJSON *obj, const char *key, cJSON *value)
{
	if (!value)
		return -ENOMEM;
	if (cJSON_GetObjectItemCaseSensitive(obj, key))
		return cJSON_ReplaceItemInObjectCaseSensitive(obj, key, value) ? 0 : -ENOMEM;
	return cJSON_AddItemToObject(obj, key, value) ? 0 : -ENOMEM;
}

static int set_time(cJSON *spec, const char *key, const char *value)
{
	if (!value[0]) {
		cJSON_DeleteItemFromObjectCaseSensitive(spec, key);
		return 0;
	}
	return set_item(spec, key, cJSON_CreateString(value));
}

int tj_lease_record_to_json(const struct tj_lease_record *rec, cJSON *lease)
{
	cJSON *spec = cJSON_GetObjectItemCaseSensitive(lease, "spec");

	if (!cJSON_IsObject(spec)) {
		spec = cJSON_CreateObject();
		if (set_item(lease, "spec", spec) < 0)
			return -ENOMEM;
	}
	if (set_item(spec, "holderIdentity", cJSON_CreateString(rec->holder)) < 0 ||
	    set_item(spec, "leaseDurationSeconds", cJSON_CreateNumber((double)rec->duration_s)) <
	            0 ||
	    set_time(spec, "acquireTime", rec->acquire_time) < 0 ||
	    set_time(spec, "renewTime", rec->renew_time) < 0 ||
	    set_item(spec, "leaseTransitions", cJSON_CreateNumber((double)rec->transitions)) < 0)
		return -ENOMEM;
	return 0;
}

static bool record_equal(const struct tj_lease_record *a, const struct tj_lease_record *b)
{
	return strcmp(a->holder, b->holder) == 0 && a->duration_s == b->duration_s &&
	       strcmp(a->acquire_time, b->acquire_time) == 0 &&
	       strcmp(a->renew_time, b->renew_time) == 0 && a->transitions == b->transitions;
}

void tj_leader_observe(struct tj_leader_view *v, const struct tj_lease_record *rec, uint64_t now_ms)
{
	if (v->exists && record_equal(&v->record, rec))
		return;
	v->exists = true;
	v->record = *rec;
	v->observed_ms = now_ms;
}

enum tj_leader_decision tj_leader_decide(const struct tj_leader_view *v, const char *identity,
                                         uint64_t now_ms, const struct tj_leader_timings *t)
{
	const struct tj_lease_record *r = &v->record;

	if (v->leading && now_ms - v->renewed_ms >= t->renew_deadline_ms)
		return TJ_LEADER_LOST;
	if (!v->exists)
		return TJ_LEADER_ACQUIRE;
	if (strcmp(r->holder, identity) == 0)
		return TJ_LEADER_RENEW;
	if (!r->holder[0])
		return TJ_LEADER_ACQUIRE;
	/* Someone else holds it while we think we lead: they took it after our lease expired
	 * in their eyes. Writing on would make two leaders. */
	if (v->leading)
		return TJ_LEADER_LOST;
	if (r->duration_s <= 0 || now_ms - v->observed_ms >= (uint64_t)r->duration_s * 1000)
		return TJ_LEADER_ACQUIRE;
	return TJ_LEADER_WAIT;
}

void tj_lease_record_next(const struct tj_lease_record *old, enum tj_leader_decision d,
                          const char *identity, int64_t duration_s, const char *now,
                          struct tj_lease_record *ret)
{
	struct tj_lease_record rec = { .duration_s = duration_s };

	snprintf(rec.holder, sizeof(rec.holder), "%s", identity);
	snprintf(rec.renew_time, sizeof(rec.renew_time), "%s", now);
	if (old && d == TJ_LEADER_RENEW) {
		memcpy(rec.acquire_time, old->acquire_time, sizeof(rec.acquire_time));
		rec.transitions = old->transitions;
	} else {
		snprintf(rec.acquire_time, sizeof(rec.acquire_time), "%s", now);
		rec.transitions = old ? old->transitions + 1 : 0;
	}
	*ret = rec;
}

void tj_lease_record_release(const struct tj_lease_record *old, const char *now,
                             struct tj_lease_record *ret)
{
	struct tj_lease_record rec = { .duration_s = 1, .transitions = old->transitions };

	snprintf(rec.acquire_time, sizeof(rec.acquire_time), "%s", now);
	snprintf(rec.renew_time, sizeof(rec.renew_time), "%s", now);
	*ret = rec;
}

void tj_microtime_now(char buf[static TJ_MICROTIME_LEN])
{
	struct timespec ts;
	struct tm tm;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	if (tm.tm_year > 9999 - 1900) /* keeps the string its fixed length */
		tm.tm_year = 9999 - 1900;
	strftime(buf, 20, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + 19, TJ_MICROTIME_LEN - 19, ".%06uZ",
	         (unsigned)(ts.tv_nsec / 1000) % 1000000u);
}

int tj_leader_lost_exit_status(bool stopping)
{
	return stopping ? EXIT_SUCCESS : EXIT_FAILURE;
}

int tj_leader_identity(const char *hostname, const uint8_t random[16], char *buf, size_t len)
{
	uint8_t u[16];
	int n;

	memcpy(u, random, sizeof(u));
	u[6] = (uint8_t)((u[6] & 0x0f) | 0x40); /* version 4 */
	u[8] = (uint8_t)((u[8] & 0x3f) | 0x80); /* RFC 4122 variant */
	n = snprintf(buf, len,
	             "%s_%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
	             hostname, u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10],
	             u[11], u[12], u[13], u[14], u[15]);
	if (n < 0 || (size_t)n >= len)
		return -E2BIG;
	return 0;
}

/* ---- the I/O on the loop ---- */

struct tj_leader {
	uv_loop_t *loop;
	uv_timer_t timer;
	struct tj_client *client; /* borrowed */
	char *namespace;          /* owned */
	char *name;               /* owned */
	char *identity;           /* owned */
	struct tj_leader_timings t;
	const struct tj_std_metrics *metrics; /* borrowed */
	void (*on_started_leading)(void *userdata);
	void (*on_stopped_leading)(void *userdata);
	void *userdata;

	struct tj_leader_view view;
	cJSON *lease;               /* owned; the Lease last read or written, NULL if none */
	struct tj_request *request; /* borrowed; the request in flight, freed by the client */
	uint64_t sent_ms;           /* when the write in flight was sent */
	bool fast;                  /* the write in flight renews without reading first */
	bool done;                  /* lost or released: no more attempts */
	bool logged_wait;           /* "held by another" said once per holder */
	int release_attempts;       /* release writes sent */
	void (*released)(void *userdata);
	void *released_userdata;
};

static void tick(uv_timer_t *timer);
static void get_lease(struct tj_leader *l);

static void set_status(struct tj_leader *l, double value)
{
	if (l->metrics)
		tj_metric_set(l->metrics->leader_election_master_status, TJ_LABELS(l->name), value);
}

/* event: "acquired", "lost" (no renewal in time, or another holder) or "released" (on
 * shutdown); amount 0 makes the series exist before its first event. */
static void count_event(struct tj_leader *l, const char *event, double amount)
{
	if (l->metrics)
		tj_metric_add(l->metrics->trainjob_leader_transitions_total,
		              TJ_LABELS(l->name, event), amount);
}

/* The leader renews every retry period, but checks its deadline no later than when it
 * falls due; a follower retries after a jittered period, so that the replicas do not try
 * in lockstep. */
static void schedule(struct tj_leader *l)
{
	uint64_t delay = l->t.retry_period_ms;

	if (l->done)
		return;
	if (l->view.leading) {
		uint64_t now = uv_now(l->loop), due = l->view.renewed_ms + l->t.renew_deadline_ms;

		if (due <= now)
			delay = 0;
		else if (due - now < delay)
			delay = due - now;
	} else {
		double r = (double)(uv_hrtime() % 1000) / 1000.0;

		delay += (uint64_t)((double)delay * TJ_LEADER_JITTER * r);
	}
	uv_timer_start(&l->timer, tick, delay, 0);
}

static void lose(struct tj_leader *l, const char *why)
{
	tj_log_error("leader", "lost the lease: stopping", TJ_STR("lease", l->name),
	             TJ_STR("why", why));
	tj_request_cancel(l->request);
	l->request = NULL;
	l->done = true;
	l->view.leading = false;
	uv_timer_stop(&l->timer);
	set_status(l, 0);
	count_event(l, "lost", 1);
	if (l->on_stopped_leading)
		l->on_stopped_leading(l->userdata);
}

static const char *lost_reason(const struct tj_leader *l)
{
	return strcmp(l->view.record.holder, l->identity) != 0 && l->view.record.holder[0]
	               ? "another replica holds the lease"
	               : "no renewal within the renew deadline";
}

static void write_done(struct tj_response *resp, void *userdata)
{
	struct tj_leader *l = userdata;
	struct tj_lease_record rec;
	bool fast = l->fast;

	l->request = NULL;
	if (resp->rc == 0 && tj_lease_record_from_json(resp->body, &rec) == 0) {
		bool started = !l->view.leading;

		cJSON_Delete(l->lease);
		l->lease = tj_response_take_body(resp);
		l->view.exists = true;
		l->view.record = rec;
		l->view.observed_ms = l->sent_ms;
		l->view.renewed_ms = l->sent_ms;
		l->view.leading = true;
		l->logged_wait = false;
		if (started) {
			tj_log_info("leader", "became leader", TJ_STR("lease", l->name),
			            TJ_STR("namespace", l->namespace),
			            TJ_STR("identity", l->identity));
			set_status(l, 1);
			count_event(l, "acquired", 1);
			if (l->on_started_leading)
				l->on_started_leading(l->userdata);
		}
		schedule(l);
		return;
	}
	if (resp->rc == -EREMOTEIO &&
	    (tj_status_is_conflict(&resp->status) || tj_status_is_already_exists(&resp->status))) {
		/* Another replica wrote first: what we hold is stale; read it again next time. */
		tj_log_debug("leader", "another replica wrote the lease first",
		             TJ_STR("lease", l->name));
		cJSON_Delete(l->lease);
		l->lease = NULL;
	} else {
		tj_log_warn("leader", "cannot write the lease", TJ_STR("lease", l->name),
		            TJ_STR("problem",
		                   resp->rc == 0 ? "the answer is not a Lease" : resp->error));
	}
	if (l->view.leading &&
	    tj_leader_decide(&l->view, l->identity, uv_now(l->loop), &l->t) == TJ_LEADER_LOST) {
		lose(l, lost_reason(l));
		return;
	}
	/* client-go's slow path: a leader whose optimistic renewal failed reads at once. */
	if (fast && l->view.leading) {
		get_lease(l);
		return;
	}
	schedule(l);
}

static void write_lease(struct tj_leader *l, enum tj_leader_decision d, bool fast)
{
	struct tj_ref ref = { &tj_resource_leases, l->namespace, l->name, NULL };
	struct tj_ref collection = { &tj_resource_leases, l->namespace, NULL, NULL };
	struct tj_lease_record rec;
	char now[TJ_MICROTIME_LEN];
	cJSON *obj;
	int rc;

	tj_microtime_now(now);
	tj_lease_record_next(l->lease ? &l->view.record : NULL, d, l->identity,
	                     (int64_t)(l->t.lease_duration_ms / 1000), now, &rec);
	if (l->lease) {
		obj = cJSON_Duplicate(l->lease, true);
	} else {
		obj = cJSON_CreateObject();
		cJSON *meta = cJSON_AddObjectToObject(obj, "metadata");

		if (!cJSON_AddStringToObject(obj, "apiVersion", "coordination.k8s.io/v1") ||
		    !cJSON_AddStringToObject(obj, "kind", "Lease") || !meta ||
		    !cJSON_AddStringToObject(meta, "name", l->name) ||
		    !cJSON_AddStringToObject(meta, "namespace", l->namespace)) {
			cJSON_Delete(obj);
			obj = NULL;
		}
	}
	rc = obj ? tj_lease_record_to_json(&rec, obj) : -ENOMEM;
	l->fast = fast;
	l->sent_ms = uv_now(l->loop);
	if (rc == 0)
		rc = l->lease ? tj_kube_update(l->client, &ref, obj, NULL, write_done, l,
		                               &l->request)
		              : tj_kube_create(l->client, &collection, obj, NULL, write_done, l,
		                               &l->request);
	cJSON_Delete(obj);
	if (rc < 0) {
		tj_log_error("leader", "cannot send the lease", TJ_ERR(rc));
		schedule(l);
	}
}

static void get_done(struct tj_response *resp, void *userdata)
{
	struct tj_leader *l = userdata;
	uint64_t now = uv_now(l->loop);
	enum tj_leader_decision d;
	struct tj_lease_record rec;

	l->request = NULL;
	if (resp->rc == -EREMOTEIO && tj_status_is_not_found(&resp->status)) {
		cJSON_Delete(l->lease);
		l->lease = NULL;
		l->view.exists = false;
	} else if (resp->rc < 0) {
		tj_log_warn("leader", "cannot read the lease", TJ_STR("lease", l->name),
		            TJ_STR("problem", resp->error));
		if (l->view.leading &&
		    tj_leader_decide(&l->view, l->identity, now, &l->t) == TJ_LEADER_LOST)
			lose(l, lost_reason(l));
		else
			schedule(l);
		return;
	} else if (tj_lease_record_from_json(resp->body, &rec) < 0) {
		tj_log_warn("leader", "the lease cannot be read: a field is too long or malformed",
		            TJ_STR("lease", l->name));
		schedule(l);
		return;
	} else {
		cJSON_Delete(l->lease);
		l->lease = tj_response_take_body(resp);
		tj_leader_observe(&l->view, &rec, now);
	}
	d = tj_leader_decide(&l->view, l->identity, now, &l->t);
	switch (d) {
	case TJ_LEADER_ACQUIRE:
	case TJ_LEADER_RENEW:
		if (d == TJ_LEADER_RENEW && l->view.leading && l->metrics)
			tj_metric_add(l->metrics->leader_election_slowpath_total,
			              TJ_LABELS(l->name), 1);
		write_lease(l, d, false);
		break;
	case TJ_LEADER_WAIT:
		if (!l->logged_wait)
			tj_log_info("leader", "another replica leads; waiting",
			            TJ_STR("lease", l->name),
			            TJ_STR("holder", l->view.record.holder));
		l->logged_wait = true;
		schedule(l);
		break;
	case TJ_LEADER_LOST:
		lose(l, lost_reason(l));
		break;
	}
}

static void get_lease(struct tj_leader *l)
{
	struct tj_ref ref = { &tj_resource_leases, l->namespace, l->name, NULL };
	int rc = tj_kube_get(l->client, &ref, get_done, l, &l->request);

	if (rc < 0) {
		tj_log_error("leader", "cannot send the lease read", TJ_ERR(rc));
		schedule(l);
	}
}

static void tick(uv_timer_t *timer)
{
	struct tj_leader *l = timer->data;

	if (l->view.leading &&
	    tj_leader_decide(&l->view, l->identity, uv_now(l->loop), &l->t) == TJ_LEADER_LOST) {
		lose(l, lost_reason(l));
		return;
	}
	if (l->request) { /* still waiting for the last answer */
		schedule(l);
		return;
	}
	/* client-go's fast path: the leader writes over the Lease it last wrote. */
	if (l->view.leading && l->lease)
		write_lease(l, TJ_LEADER_RENEW, true);
	else
		get_lease(l);
}

int tj_leader_start(uv_loop_t *loop, const struct tj_leader_config *config, struct tj_leader **ret)
{
	struct tj_leader *l;
	char err[160];

	if (!config->client || !config->namespace || !config->namespace[0] || !config->name ||
	    !config->name[0] || !config->identity || !config->identity[0] ||
	    strlen(config->identity) >= TJ_LEASE_HOLDER_MAX ||
	    tj_leader_timings_check(&config->timings, err, sizeof(err)) < 0)
		return -EINVAL;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->namespace = strdup(config->namespace);
	l->name = strdup(config->name);
	l->identity = strdup(config->identity);
	if (!l->namespace || !l->name || !l->identity) {
		free(l->namespace);
		free(l->name);
		free(l->identity);
		free(l);
		return -ENOMEM;
	}
	l->loop = loop;
	l->client = config->client;
	l->t = config->timings;
	l->metrics = config->metrics;
	l->on_started_leading = config->on_started_leading;
	l->on_stopped_leading = config->on_stopped_leading;
	l->userdata = config->userdata;
	uv_timer_init(loop, &l->timer);
	l->timer.data = l;
	set_status(l, 0);
	count_event(l, "acquired", 0);
	count_event(l, "lost", 0);
	count_event(l, "released", 0);
	if (l->metrics)
		tj_metric_add(l->metrics->leader_election_slowpath_total, TJ_LABELS(l->name), 0);
	tj_log_info("leader", "trying to acquire the lease", TJ_STR("lease", l->name),
	            TJ_STR("namespace", l->namespace), TJ_STR("identity", l->identity));
	uv_timer_start(&l->timer, tick, 0, 0);
	*ret = l;
	return 0;
}

static void release_finished(struct tj_leader *l)
{
	void (*done)(void *) = l->released;

	l->released = NULL;
	if (done)
		done(l->released_userdata);
}

/* A release can meet 409 Conflict when SIGTERM came while a renewal was in flight: the
 * renewal was cancelled here but may have been written there, so the copy we release from
 * is one version behind. The release then reads the Lease again and, while it still names
 * us, releases that version; without this the followers would wait out the whole lease. */
#define RELEASE_ATTEMPTS 3

static void release_done(struct tj_response *resp, void *userdata);

static int send_release(struct tj_leader *l)
{
	struct tj_ref ref = { &tj_resource_leases, l->namespace, l->name, NULL };
	struct tj_lease_record rec;
	char now[TJ_MICROTIME_LEN];
	cJSON *obj;
	int rc = -ENOMEM;

	tj_microtime_now(now);
	tj_lease_record_release(&l->view.record, now, &rec);
	obj = cJSON_Duplicate(l->lease, true);
	if (obj && tj_lease_record_to_json(&rec, obj) == 0)
		rc = tj_kube_update(l->client, &ref, obj, NULL, release_done, l, &l->request);
	cJSON_Delete(obj);
	if (rc == 0)
		l->release_attempts++;
	return rc;
}

static void release_reread(struct tj_response *resp, void *userdata)
{
	struct tj_leader *l = userdata;
	struct tj_lease_record rec;

	l->request = NULL;
	if (resp->rc < 0 || tj_lease_record_from_json(resp->body, &rec) < 0) {
		tj_log_warn("leader", "could not release the lease; it expires by itself",
		            TJ_STR("lease", l->name), TJ_STR("problem", resp->error));
		release_finished(l);
		return;
	}
	if (strcmp(rec.holder, l->identity) != 0) {
		tj_log_info("leader", "the lease is no longer ours: nothing to release",
		            TJ_STR("lease", l->name), TJ_STR("holder", rec.holder));
		release_finished(l);
		return;
	}
	cJSON_Delete(l->lease);
	l->lease = tj_response_take_body(resp);
	l->view.record = rec;
	if (send_release(l) < 0)
		release_finished(l);
}

static void release_done(struct tj_response *resp, void *userdata)
{
	struct tj_leader *l = userdata;
	struct tj_ref ref = { &tj_resource_leases, l->namespace, l->name, NULL };

	l->request = NULL;
	if (resp->rc == 0) {
		tj_log_info("leader", "released the lease", TJ_STR("lease", l->name));
	} else if (tj_status_is_conflict(&resp->status) && l->release_attempts < RELEASE_ATTEMPTS &&
	           tj_kube_get(l->client, &ref, release_reread, l, &l->request) == 0) {
		tj_log_info("leader", "the release met a newer lease: reading it again",
		            TJ_STR("lease", l->name));
		return;
	} else {
		tj_log_warn("leader", "could not release the lease; it expires by itself",
		            TJ_STR("lease", l->name), TJ_STR("problem", resp->error));
	}
	release_finished(l);
}

static void release_now(uv_timer_t *timer)
{
	release_finished(timer->data);
}

void tj_leader_release(struct tj_leader *l, void (*done)(void *userdata), void *userdata)
{
	bool leading = l->view.leading;
	int rc;

	uv_timer_stop(&l->timer);
	tj_request_cancel(l->request);
	l->request = NULL;
	l->done = true;
	l->view.leading = false;
	l->released = done;
	l->released_userdata = userdata;
	set_status(l, 0);
	if (leading)
		count_event(l, "released", 1);
	if (leading && l->lease) {
		rc = send_release(l);
		if (rc == 0)
			return;
		tj_log_warn("leader", "cannot send the release; the lease expires by itself",
		            TJ_ERR(rc));
	}
	uv_timer_start(&l->timer, release_now, 0, 0);
}

static void closed(uv_handle_t *handle)
{
	struct tj_leader *l = handle->data;

	cJSON_Delete(l->lease);
	free(l->namespace);
	free(l->name);
	free(l->identity);
	free(l);
}

void tj_leader_close(struct tj_leader *l)
{
	if (!l)
		return;
	tj_request_cancel(l->request);
	l->request = NULL;
	l->done = true;
	l->released = NULL;
	uv_close((uv_handle_t *)&l->timer, closed);
}
