#include "controller/admission/accounting.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/log/log.h"
#include "kube/request.h"
#include "reconcilers/json.h"

/* A read that failed is tried again after this long. */
#define RETRY_MS 30000
/* The records known are read again this often, namespace by namespace, so that those of a
 * namespace deleted since (its ConfigMap went with it) stop counting, as they already do
 * for a reader of the cluster (kubectl sshare) or a new leader. */
#define REFRESH_MS 30000

struct write {
	struct tj_accounting *a;
	struct tj_request *req;
	cJSON *data; /* owned: the patch's data (the record, and nulls for those dropped) */
	char namespace[TJ_NAME_MAX];
	char job[TJ_NAME_MAX];
	char uid[TJ_ACCOUNTING_UID_MAX]; /* the job's, the key of its record */
	bool created;                    /* the create was tried */
	struct write *next;
};

struct tj_accounting {
	uv_loop_t *loop;
	struct tj_client *client;
	int64_t retention;
	bool active, loaded;
	struct loading *loads; /* the namespaces asked for */
	uv_timer_t retry, refresh;
	int open_timers;                     /* the struct goes when the last is closed */
	struct tj_accounting_entry *entries; /* owned */
	size_t n, cap;
	struct write *writes; /* in flight */
	void (*loaded_fn)(void *userdata);
	void *loaded_userdata;
};

int tj_accounting_new(uv_loop_t *loop, struct tj_client *client, struct tj_accounting **ret)
{
	struct tj_accounting *a = calloc(1, sizeof(*a));

	if (!a)
		return -ENOMEM;
	a->loop = loop;
	a->client = client;
	a->retention = TJ_ACCOUNTING_RETENTION;
	a->loaded = true;
	uv_timer_init(loop, &a->retry);
	uv_timer_init(loop, &a->refresh);
	a->retry.data = a;
	a->refresh.data = a;
	a->open_timers = 2;
	*ret = a;
	return 0;
}

static void forget_loads(struct tj_accounting *a);

static void on_timer_closed(uv_handle_t *h)
{
	struct tj_accounting *a = h->data;

	if (--a->open_timers == 0)
		free(a);
}

static void cancel_writes(struct tj_accounting *a)
{
	while (a->writes) {
		struct write *w = a->writes;

		a->writes = w->next;
		tj_request_cancel(w->req);
		cJSON_Delete(w->data);
		free(w);
	}
}

struct tj_accounting *tj_accounting_free(struct tj_accounting *a)
{
	if (!a)
		return NULL;
	forget_loads(a);
	cancel_writes(a);
	free(a->entries);
	uv_close((uv_handle_t *)&a->retry, on_timer_closed);
	uv_close((uv_handle_t *)&a->refresh, on_timer_closed);
	return NULL;
}

void tj_accounting_set_retention(struct tj_accounting *a, int64_t seconds)
{
	a->retention = seconds > 0 ? seconds : 0;
}

void tj_accounting_on_loaded(struct tj_accounting *a, void (*fn)(void *userdata), void *userdata)
{
	a->loaded_fn = fn;
	a->loaded_userdata = userdata;
}

bool tj_accounting_loaded(const struct tj_accounting *a)
{
	return a->loaded;
}

const struct tj_accounting_entry *tj_accounting_entries(const struct tj_accounting *a, size_t *n)
{
	*n = a->n;
	return a->entries;
}

/* The entry of uid, or SIZE_MAX. */
static size_t find(const struct tj_accounting *a, const char *uid)
{
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->entries[i].uid, uid) == 0)
			return i;
	return SIZE_MAX;
}

static int add(struct tj_accounting *a, const struct tj_accounting_entry *e)
{
	size_t i = find(a, e->uid);

	if (i != SIZE_MAX) {
		a->entries[i] = *e;
		return 0;
	}
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 64;
		void *p = realloc(a->entries, cap * sizeof(*a->entries));

		if (!p)
			return -ENOMEM;
		a->entries = p;
		a->cap = cap;
	}
	a->entries[a->n++] = *e;
	return 0;
}

/* Whether a write of the record of uid is in flight. */
static bool writing(const struct tj_accounting *a, const char *uid)
{
	for (const struct write *w = a->writes; w; w = w->next)
		if (strcmp(w->uid, uid) == 0)
			return true;
	return false;
}

/* Drops the entries of namespace ns, but those whose write is in flight: they count from
 * their job's deletion on. */
static void drop_namespace(struct tj_accounting *a, const char *ns)
{
	for (size_t i = a->n; i-- > 0;)
		if (strcmp(a->entries[i].namespace, ns) == 0 && !writing(a, a->entries[i].uid))
			a->entries[i] = a->entries[--a->n];
}

/* Drops the entry of uid. */
static void drop_record(struct tj_accounting *a, const char *uid)
{
	size_t i = find(a, uid);

	if (i != SIZE_MAX)
		a->entries[i] = a->entries[--a->n];
}

/* ---- the load ---- */

/* A namespace whose records were asked for: loaded once its ConfigMap (or its absence) is
 * read; a read that failed is tried again. */
struct loading {
	struct tj_accounting *a;
	struct tj_request *req;
	char namespace[TJ_NAME_MAX];
	bool done;
	struct loading *next;
};

static void get_namespace(struct loading *l);

static void on_retry(uv_timer_t *t)
{
	struct tj_accounting *a = t->data;

	for (struct loading *l = a->loads; a->active && l; l = l->next)
		if (!l->done && !l->req)
			get_namespace(l);
}

static bool all_loaded(const struct tj_accounting *a)
{
	for (const struct loading *l = a->loads; l; l = l->next)
		if (!l->done)
			return false;
	return true;
}

/* The records of a namespace's ConfigMap; first: its first read, which is logged. */
static void read_records(struct tj_accounting *a, const char *ns, const cJSON *cm, bool first)
{
	const cJSON *data = cJSON_GetObjectItemCaseSensitive(cm, "data"), *v;
	size_t bad = 0, read = 0;

	cJSON_ArrayForEach(v, data)
	{
		struct tj_accounting_entry e;

		if (!cJSON_IsString(v) ||
		    tj_accounting_parse(v->valuestring, strlen(v->valuestring), ns, &e) < 0 ||
		    add(a, &e) < 0)
			bad++;
		else
			read++;
	}
	if (bad && first)
		tj_log_warn("accounting", "records that could not be read are left out",
		            TJ_STR("namespace", ns), TJ_INT("records", (long long)bad));
	if (read && first)
		tj_log_info("accounting", "accounting records loaded", TJ_STR("namespace", ns),
		            TJ_INT("records", (long long)read));
}

static void on_namespace(struct tj_response *resp, void *userdata)
{
	struct loading *l = userdata;
	struct tj_accounting *a = l->a;

	l->req = NULL;
	if (resp->rc < 0 && resp->http_status != 404) {
		if (l->done) {
			/* A read again (on_refresh): the next one tries again. */
			tj_log_warn("accounting",
			            "could not read a namespace's accounting records again: those "
			            "read before still count",
			            TJ_STR("namespace", l->namespace), TJ_STR("error", resp->error),
			            TJ_ERR(resp->rc));
			return;
		}
		tj_log_error("accounting",
		             "could not read a namespace's accounting records: its deleted jobs' "
		             "usage is left out of the fair share until a retry succeeds",
		             TJ_STR("namespace", l->namespace), TJ_STR("error", resp->error),
		             TJ_ERR(resp->rc));
		uv_timer_start(&a->retry, on_retry, RETRY_MS, 0);
	} else {
		/* What the ConfigMap holds now replaces what was read of it before: none, once
		 * it is gone. */
		drop_namespace(a, l->namespace);
		if (resp->rc == 0)
			read_records(a, l->namespace, resp->body, !l->done);
	}
	/* Loaded or not, the queue does not wait for it again. */
	if (!l->done) {
		l->done = resp->rc == 0 || resp->http_status == 404;
		if (all_loaded(a) || resp->rc < 0) {
			bool was = a->loaded;

			a->loaded = true;
			if (!was && a->loaded_fn)
				a->loaded_fn(a->loaded_userdata);
		}
	}
}

static void get_namespace(struct loading *l)
{
	const struct tj_ref ref = { .resource = &tj_resource_configmaps,
		                    .namespace = l->namespace,
		                    .name = TJ_ACCOUNTING_CONFIGMAP };
	int rc = tj_kube_get(l->a->client, &ref, on_namespace, l, &l->req);

	if (rc < 0) {
		tj_log_error("accounting", "could not ask for a namespace's accounting records",
		             TJ_STR("namespace", l->namespace), TJ_ERR(rc));
		uv_timer_start(&l->a->retry, on_retry, RETRY_MS, 0);
	}
}

void tj_accounting_want(struct tj_accounting *a, const char *ns)
{
	struct loading *l;

	if (!a->client || !a->active || !ns)
		return;
	for (l = a->loads; l; l = l->next)
		if (strcmp(l->namespace, ns) == 0)
			return;
	if (strlen(ns) >= sizeof(l->namespace) || !(l = calloc(1, sizeof(*l)))) {
		tj_log_error("accounting", "no memory to read a namespace's accounting records",
		             TJ_STR("namespace", ns));
		return;
	}
	l->a = a;
	strcpy(l->namespace, ns);
	l->next = a->loads;
	a->loads = l;
	a->loaded = false;
	get_namespace(l);
}

/* Reads again the records of every namespace that has some. */
static void on_refresh(uv_timer_t *t)
{
	struct tj_accounting *a = t->data;

	for (struct loading *l = a->loads; a->active && l; l = l->next) {
		bool has = false;

		for (size_t i = 0; i < a->n && !has; i++)
			has = strcmp(a->entries[i].namespace, l->namespace) == 0;
		if (has && l->done && !l->req)
			get_namespace(l);
	}
}

static void forget_loads(struct tj_accounting *a)
{
	while (a->loads) {
		struct loading *l = a->loads;

		a->loads = l->next;
		tj_request_cancel(l->req);
		free(l);
	}
}

void tj_accounting_set_active(struct tj_accounting *a, bool active)
{
	if (a->active == active || !a->client)
		return;
	a->active = active;
	forget_loads(a);
	uv_timer_stop(&a->retry);
	uv_timer_stop(&a->refresh);
	a->n = 0;
	a->loaded = true;
	if (active)
		uv_timer_start(&a->refresh, on_refresh, REFRESH_MS, REFRESH_MS);
}

/* ---- the writes ---- */

static void drop_write(struct tj_accounting *a, struct write *w)
{
	for (struct write **p = &a->writes; *p; p = &(*p)->next)
		if (*p == w) {
			*p = w->next;
			break;
		}
	cJSON_Delete(w->data);
	free(w);
}

static void send_write(struct write *w);

static void on_written(struct tj_response *resp, void *userdata)
{
	struct write *w = userdata;
	struct tj_accounting *a = w->a;

	w->req = NULL;
	/* Not there yet: the namespace's first record creates it. Created meanwhile by
	 * another write: patched after all. */
	if ((resp->http_status == 404 && !w->created) || (resp->http_status == 409 && w->created)) {
		w->created = resp->http_status == 404;
		send_write(w);
		return;
	}
	if (resp->rc < 0) {
		tj_log_error(
		        "accounting",
		        "the API server refused a deleted job's accounting record: its usage is "
		        "not kept",
		        TJ_STR("namespace", w->namespace), TJ_STR("trainjob", w->job),
		        TJ_STR("error", resp->error), TJ_ERR(resp->rc));
		/* Nor counted here: no reader of the cluster, nor a new leader, would count it. */
		drop_record(a, w->uid);
	}
	drop_write(a, w);
}

static void send_write(struct write *w)
{
	const struct tj_ref ref = { .resource = &tj_resource_configmaps,
		                    .namespace = w->namespace,
		                    .name = w->created ? NULL : TJ_ACCOUNTING_CONFIGMAP };
	cJSON *body = cJSON_CreateObject(), *meta = NULL, *labels = NULL;
	int rc = -ENOMEM;

	if (body && tj_json_set(body, "data", cJSON_Duplicate(w->data, true)) == 0) {
		if (!w->created) {
			rc = tj_kube_patch(w->a->client, &ref, TJ_PATCH_MERGE, body, NULL,
			                   on_written, w, &w->req);
		} else if ((meta = tj_json_object(body, "metadata")) &&
		           tj_json_set_string(meta, "name", TJ_ACCOUNTING_CONFIGMAP) == 0 &&
		           (labels = tj_json_object(meta, "labels")) &&
		           tj_json_set_string(labels, TJ_ACCOUNTING_LABEL, "true") == 0) {
			/* A create carries no nulls: the records dropped are not there. */
			cJSON *data = cJSON_GetObjectItemCaseSensitive(body, "data"),
			      *v = data->child;

			while (v) {
				cJSON *next = v->next;

				if (cJSON_IsNull(v))
					cJSON_Delete(cJSON_DetachItemViaPointer(data, v));
				v = next;
			}
			rc = tj_kube_create(w->a->client, &ref, body, NULL, on_written, w, &w->req);
		}
	}
	cJSON_Delete(body);
	if (rc < 0) {
		tj_log_error("accounting", "could not send a deleted job's accounting record",
		             TJ_STR("namespace", w->namespace), TJ_STR("trainjob", w->job),
		             TJ_ERR(rc));
		drop_write(w->a, w);
	}
}

/* The records of the namespace that go now, as nulls in data, and out of the entries. */
static int prune(struct tj_accounting *a, const char *ns, int64_t now, cJSON *data)
{
	size_t n = 0, k = 0;
	struct tj_accounting_entry *mine;
	bool *drop;
	int rc = 0;

	for (size_t i = 0; i < a->n; i++)
		n += strcmp(a->entries[i].namespace, ns) == 0;
	mine = calloc(n + 1, sizeof(*mine));
	drop = calloc(n + 1, sizeof(*drop));
	if (!mine || !drop) {
		free(mine);
		free(drop);
		return -ENOMEM;
	}
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->entries[i].namespace, ns) == 0)
			mine[k++] = a->entries[i];
	if (tj_accounting_prune(mine, n, now, a->retention, drop))
		for (size_t i = 0; i < n && rc == 0; i++) {
			size_t at;

			if (!drop[i])
				continue;
			rc = tj_json_set(data, mine[i].uid, cJSON_CreateNull());
			if ((at = find(a, mine[i].uid)) != SIZE_MAX)
				a->entries[at] = a->entries[--a->n];
		}
	free(mine);
	free(drop);
	return rc;
}

void tj_accounting_job_deleted(struct tj_accounting *a, const struct tj_trainjob *job, int64_t now)
{
	struct tj_accounting_entry e;
	struct write *w;
	char *text;

	if (!a->client || !a->active || !job->uid || !*job->uid)
		return;
	text = tj_accounting_record(job, now);
	w = calloc(1, sizeof(*w));
	if (!text || !w || !(w->data = cJSON_CreateObject()) ||
	    tj_accounting_parse(text, strlen(text), job->namespace, &e) < 0 || add(a, &e) < 0 ||
	    tj_json_set_string(w->data, job->uid, text) < 0 ||
	    prune(a, job->namespace, now, w->data) < 0) {
		tj_log_error("accounting", "no memory for a deleted job's accounting record",
		             TJ_STR("namespace", job->namespace), TJ_STR("trainjob", job->name));
		free(text);
		if (w)
			cJSON_Delete(w->data);
		free(w);
		return;
	}
	free(text);
	w->a = a;
	snprintf(w->namespace, sizeof(w->namespace), "%s", job->namespace);
	snprintf(w->job, sizeof(w->job), "%s", job->name);
	snprintf(w->uid, sizeof(w->uid), "%s", job->uid);
	w->next = a->writes;
	a->writes = w;
	send_write(w);
}
