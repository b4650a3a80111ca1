#include "controller/executor/recorder.h"
#include "controller/executor/recorder_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "controller/log/log.h"
#include "kube/request.h"
#include "reconcilers/events.h"
#include "reconcilers/json.h"

struct tj_recorder {
	struct tj_client *client;     /* borrowed */
	char *component;              /* owned */
	char *instance;               /* owned */
	struct tj_event_cache *cache; /* owned */
	struct write *writes;         /* owned list of writes in flight */
	struct tj_recorder_stats stats;
};

/* One Event write in flight. It keeps a copy of the key, so that a patch of an Event that
 * has gone (expired by the API server's --event-ttl) can make the cache forget it. */
struct write {
	struct write *prev, *next;
	struct tj_recorder *recorder; /* borrowed */
	struct tj_request *request;   /* borrowed; freed by the client */
	bool patch;
	char *namespace, *name, *uid, *reason, *message; /* owned; the key */
	bool warning;
};

static void write_free(struct write *w)
{
	if (!w)
		return;
	if (w->prev)
		w->prev->next = w->next;
	else if (w->recorder)
		w->recorder->writes = w->next;
	if (w->next)
		w->next->prev = w->prev;
	free(w->namespace);
	free(w->name);
	free(w->uid);
	free(w->reason);
	free(w->message);
	free(w);
}

static void write_done(struct tj_response *resp, void *userdata)
{
	struct write *w = userdata;
	struct tj_recorder *r = w->recorder;

	if (resp->rc == 0) {
		if (w->patch)
			r->stats.patched++;
		else
			r->stats.created++;
	} else {
		struct tj_event_key key = {
			.namespace = w->namespace,
			.name = w->name,
			.uid = w->uid,
			.warning = w->warning,
			.reason = w->reason,
			.message = w->message,
		};

		r->stats.failed++;
		/* The Event is gone (its TTL ran out) or never came to be: the next occurrence
		 * starts a new one instead of patching a ghost. */
		tj_event_forget(r->cache, &key);
		tj_log_warn("recorder", "could not write event", TJ_STR("namespace", w->namespace),
		            TJ_STR("trainjob", w->name), TJ_STR("reason", w->reason),
		            TJ_STR("error", resp->error));
	}
	write_free(w);
}

static cJSON *event_json(const struct tj_recorder *r, const struct tj_event_object *obj,
                         bool warning, const char *reason, const char *message,
                         const struct tj_event_decision *d)
{
	char first[21], last[21];
	cJSON *ev = cJSON_CreateObject();
	cJSON *meta, *inv, *src;

	if (!ev)
		return NULL;
	tj_time_format(d->first_timestamp, first);
	tj_time_format(d->last_timestamp, last);
	cJSON_AddStringToObject(ev, "apiVersion", "v1");
	cJSON_AddStringToObject(ev, "kind", "Event");
	meta = cJSON_AddObjectToObject(ev, "metadata");
	inv = cJSON_AddObjectToObject(ev, "involvedObject");
	src = cJSON_AddObjectToObject(ev, "source");
	if (!meta || !inv || !src)
		goto fail;
	cJSON_AddStringToObject(meta, "name", d->name);
	cJSON_AddStringToObject(meta, "namespace", obj->namespace);
	if (obj->kind && strcmp(obj->kind, "Node") == 0) {
		cJSON_AddStringToObject(inv, "apiVersion", "v1");
		cJSON_AddStringToObject(inv, "kind", "Node");
	} else {
		cJSON_AddStringToObject(inv, "apiVersion", "trainer.kubeflow.org/v1alpha1");
		cJSON_AddStringToObject(inv, "kind", "TrainJob");
		cJSON_AddStringToObject(inv, "namespace", obj->namespace);
	}
	cJSON_AddStringToObject(inv, "name", obj->name);
	if (obj->uid)
		cJSON_AddStringToObject(inv, "uid", obj->uid);
	cJSON_AddStringToObject(ev, "type", warning ? "Warning" : "Normal");
	cJSON_AddStringToObject(ev, "reason", reason);
	cJSON_AddStringToObject(ev, "message", message);
	cJSON_AddStringToObject(ev, "firstTimestamp", first);
	cJSON_AddStringToObject(ev, "lastTimestamp", last);
	cJSON_AddNumberToObject(ev, "count", d->count);
	cJSON_AddStringToObject(src, "component", r->component);
	cJSON_AddStringToObject(ev, "reportingComponent", r->component);
	cJSON_AddStringToObject(ev, "reportingInstance", r->instance);
	return ev;
fail:
	cJSON_Delete(ev);
	return NULL;
}

static cJSON *patch_json(const char *message, const struct tj_event_decision *d)
{
	char last[21];
	cJSON *p = cJSON_CreateObject();

	if (!p)
		return NULL;
	tj_time_format(d->last_timestamp, last);
	cJSON_AddNumberToObject(p, "count", d->count);
	cJSON_AddStringToObject(p, "lastTimestamp", last);
	cJSON_AddStringToObject(p, "message", message);
	return p;
}

static char *dup_or_null(const char *s, int *rc)
{
	char *d;

	if (!s)
		return NULL;
	d = strdup(s);
	if (!d)
		*rc = -ENOMEM;
	return d;
}

int tj_recorder_record(struct tj_recorder *r, const struct tj_event_object *obj, bool warning,
                       const char *reason, const char *message, int64_t now_ns)
{
	struct tj_event_key key = {
		.namespace = obj->namespace,
		.name = obj->name,
		.uid = obj->uid,
		.warning = warning,
		.reason = reason,
		.message = message,
	};
	struct tj_event_decision d;
	struct tj_ref ref = { .resource = &tj_resource_events, .namespace = obj->namespace };
	struct write *w;
	cJSON *body;
	int rc;

	rc = tj_event_decide(r->cache, &key, now_ns, &d);
	if (rc < 0)
		return rc;
	if (d.verdict == TJ_EVENT_DROP) {
		r->stats.dropped++;
		return 0;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	rc = 0;
	w->namespace = dup_or_null(obj->namespace, &rc);
	w->name = dup_or_null(obj->name, &rc);
	w->uid = dup_or_null(obj->uid, &rc);
	w->reason = dup_or_null(reason, &rc);
	w->message = dup_or_null(message, &rc);
	w->warning = warning;
	w->patch = d.verdict == TJ_EVENT_PATCH;
	if (rc < 0)
		goto free_write;
	body = w->patch ? patch_json(message, &d)
	                : event_json(r, obj, warning, reason, message, &d);
	if (!body) {
		rc = -ENOMEM;
		goto free_write;
	}
	if (w->patch) {
		ref.name = d.name;
		rc = tj_kube_patch(r->client, &ref, TJ_PATCH_MERGE, body, NULL, write_done, w,
		                   &w->request);
	} else {
		rc = tj_kube_create(r->client, &ref, body, NULL, write_done, w, &w->request);
	}
	cJSON_Delete(body);
	if (rc < 0)
		goto free_write;
	w->recorder = r;
	w->next = r->writes;
	if (r->writes)
		r->writes->prev = w;
	r->writes = w;
	return 0;

free_write:
	r->stats.failed++;
	tj_event_forget(r->cache, &key);
	write_free(w);
	return rc;
}

int tj_recorder_new(struct tj_client *client, const char *component, const char *instance,
                    struct tj_recorder **ret)
{
	struct tj_recorder *r = calloc(1, sizeof(*r));

	if (!r)
		return -ENOMEM;
	r->client = client;
	r->component = strdup(component);
	r->instance = strdup(instance);
	r->cache = tj_event_cache_new();
	if (!r->component || !r->instance || !r->cache) {
		tj_recorder_free(r);
		return -ENOMEM;
	}
	*ret = r;
	return 0;
}

void tj_recorder_stats(const struct tj_recorder *r, struct tj_recorder_stats *ret)
{
	*ret = r->stats;
}

struct tj_recorder *tj_recorder_free(struct tj_recorder *r)
{
	if (!r)
		return NULL;
	while (r->writes) {
		struct write *w = r->writes;

		tj_request_cancel(w->request);
		write_free(w);
	}
	tj_event_cache_free(r->cache);
	free(r->component);
	free(r->instance);
	free(r);
	return NULL;
}
