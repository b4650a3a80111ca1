#include "informers/workload.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "informers/projection.h"

/* Copies src into dst (size bytes), cut where a UTF-8 sequence starts so that a long
 * message never ends in half a character. */
static void copy_text(char *dst, size_t size, const char *src)
{
	size_t n = src ? strlen(src) : 0;

	if (n >= size) {
		n = size - 1;
		while (n > 0 && ((unsigned char)src[n] & 0xC0) == 0x80)
			n--;
	}
	if (n)
		memcpy(dst, src, n);
	dst[n] = '\0';
}

/* The controller owner when it is a TrainJob; NULL otherwise. */
static const cJSON *trainjob_owner(const cJSON *meta)
{
	const cJSON *ref;

	cJSON_ArrayForEach(ref, tj_field(meta, "ownerReferences"))
	{
		const char *kind = tj_field_string(ref, "kind");
		const char *api = tj_field_string(ref, "apiVersion");

		if (tj_field_bool(ref, "controller") && kind && strcmp(kind, "TrainJob") == 0 &&
		    api &&
		    strncmp(api, "trainer.kubeflow.org/", strlen("trainer.kubeflow.org/")) == 0)
			return ref;
	}
	return NULL;
}

static const cJSON *quota_reserved(const cJSON *obj)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, tj_field(obj, "status", "conditions"))
	{
		const char *type = tj_field_string(c, "type");

		if (type && strcmp(type, "QuotaReserved") == 0)
			return c;
	}
	return NULL;
}

int tj_workload_from_json(const cJSON *obj, struct tj_workload **ret)
{
	const cJSON *meta = tj_field(obj, "metadata");
	const char *ns = tj_field_string(meta, "namespace");
	const char *name = tj_field_string(meta, "name");
	const cJSON *owner = trainjob_owner(meta);
	const char *owner_name = owner ? tj_field_string(owner, "name") : NULL;
	const char *owner_uid = owner ? tj_field_string(owner, "uid") : NULL;
	const cJSON *cond = quota_reserved(obj);
	const char *status = cond ? tj_field_string(cond, "status") : NULL;
	size_t lns, lname, lowner, luid;
	struct tj_workload *w;
	char *p;

	if (!ns || !*ns || !name || !*name)
		return -EINVAL;
	if (!owner_name || !owner_uid)
		owner_name = owner_uid = "";
	lns = strlen(ns) + 1;
	lname = strlen(name) + 1;
	lowner = strlen(owner_name) + 1;
	luid = strlen(owner_uid) + 1;
	w = calloc(1, sizeof(*w) + lns + lname + lowner + luid);
	if (!w)
		return -ENOMEM;
	p = (char *)(w + 1);
	w->namespace = memcpy(p, ns, lns);
	w->name = memcpy(p += lns, name, lname);
	w->owner = memcpy(p += lname, owner_name, lowner);
	w->owner_uid = memcpy(p + lowner, owner_uid, luid);
	w->waiting = status && strcmp(status, "False") == 0;
	w->reserved = status && strcmp(status, "True") == 0;
	if (w->waiting) {
		copy_text(w->reason, sizeof(w->reason), tj_field_string(cond, "reason"));
		copy_text(w->message, sizeof(w->message), tj_field_string(cond, "message"));
	}
	*ret = w;
	return 0;
}

struct tj_workload *tj_workload_free(struct tj_workload *w)
{
	free(w);
	return NULL;
}

static void workload_free(void *obj)
{
	tj_workload_free(obj);
}

static int join_key(const char *ns, const char *name, char *buf, size_t size)
{
	size_t lns = strlen(ns), lname = strlen(name);

	if (lns + 1 + lname >= size)
		return -ENAMETOOLONG;
	memcpy(buf, ns, lns);
	buf[lns] = '/';
	memcpy(buf + lns + 1, name, lname + 1);
	return 0;
}

static int workload_key(const void *obj, char *buf, size_t size)
{
	const struct tj_workload *w = obj;

	return join_key(w->namespace, w->name, buf, size);
}

static int workload_owner(const void *obj, char *buf, size_t size)
{
	const struct tj_workload *w = obj;
	int r;

	if (!*w->owner)
		return 0;
	r = join_key(w->namespace, w->owner, buf, size);
	return r < 0 ? r : 1;
}

const struct tj_store_ops tj_workload_store_ops = {
	.free = workload_free,
	.key = workload_key,
	.index = { [TJ_WORKLOAD_INDEX_OWNER] = workload_owner },
	.n_indexes = 1,
};

int tj_workload_project(const cJSON *obj, void **ret)
{
	struct tj_workload *w;
	int r = tj_workload_from_json(obj, &w);

	if (r == 0)
		*ret = w;
	return r;
}

const struct tj_workload *tj_workload_of(const struct tj_store *store, const char *job_key,
                                         const char *owner_uid)
{
	const struct tj_workload *w;
	struct tj_store_iter it;

	if (!store || !owner_uid || !*owner_uid)
		return NULL;
	tj_store_iter_index(store, TJ_WORKLOAD_INDEX_OWNER, job_key, &it);
	while ((w = tj_store_iter_next(&it)))
		if (strcmp(w->owner_uid, owner_uid) == 0)
			return w;
	return NULL;
}
