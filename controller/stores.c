#include "controller/stores.h"

#include <errno.h>
#include <stdio.h>

#include "reconcilers/runtime.h"
#include "reconcilers/runtime_snapshot.h"
#include "reconcilers/trainjob.h"

static void trainjob_free(void *obj)
{
	tj_trainjob_free(obj);
}

static int trainjob_key(const void *obj, char *buf, size_t size)
{
	const struct tj_trainjob *job = obj;

	return tj_store_key_of(buf, size, job->namespace, job->name);
}

int tj_trainjob_store_project(const cJSON *obj, void **ret)
{
	return tj_trainjob_from_json(obj, (struct tj_trainjob **)ret);
}

static const char *trainjob_version(const void *obj)
{
	return ((const struct tj_trainjob *)obj)->resource_version;
}

static int trainjob_by_namespace(const void *obj, char *buf, size_t size)
{
	const struct tj_trainjob *job = obj;

	return snprintf(buf, size, "%s", job->namespace) < (int)size ? 1 : -ENAMETOOLONG;
}

static int dependent_by_namespace(const void *obj, char *buf, size_t size)
{
	const struct tj_trainjob *job = obj;

	return job->dependency ? trainjob_by_namespace(obj, buf, size) : 0;
}

static int stopping(const void *obj, char *buf, size_t size)
{
	const struct tj_trainjob *job = obj;

	if (!job->status.preempt_at || !job->status.start_time ||
	    job->status.state == TJ_STATE_COMPLETE || job->status.state == TJ_STATE_FAILED)
		return 0;
	return snprintf(buf, size, "%s", TJ_TRAINJOB_STOPPING) < (int)size ? 1 : -ENAMETOOLONG;
}

const struct tj_store_ops tj_trainjob_store_ops = {
	.free = trainjob_free,
	.key = trainjob_key,
	.index = { [TJ_TRAINJOB_INDEX_NAMESPACE] = trainjob_by_namespace,
	           [TJ_TRAINJOB_INDEX_DEPENDENT] = dependent_by_namespace,
	           [TJ_TRAINJOB_INDEX_STOPPING] = stopping },
	.n_indexes = 3,
	.version = trainjob_version,
};

static void runtime_free(void *obj)
{
	tj_runtime_free(obj);
}

static int runtime_key(const void *obj, char *buf, size_t size)
{
	const struct tj_runtime *rt = obj;

	return tj_store_key_of(buf, size, rt->namespace, rt->name);
}

int tj_runtime_store_project(const cJSON *obj, void **ret)
{
	return tj_runtime_from_json(obj, (struct tj_runtime **)ret);
}

const struct tj_store_ops tj_runtime_store_ops = {
	.free = runtime_free,
	.key = runtime_key,
};

static void snapshot_free(void *obj)
{
	tj_runtime_snapshot_free(obj);
}

static int snapshot_key(const void *obj, char *buf, size_t size)
{
	const struct tj_runtime_snapshot *s = obj;

	return tj_store_key_of(buf, size, s->namespace, s->name);
}

static const char *snapshot_version(const void *obj)
{
	return ((const struct tj_runtime_snapshot *)obj)->resource_version;
}

int tj_runtime_snapshot_store_project(const cJSON *obj, void **ret)
{
	return tj_runtime_snapshot_from_json(obj, (struct tj_runtime_snapshot **)ret);
}

const struct tj_store_ops tj_runtime_snapshot_store_ops = {
	.free = snapshot_free,
	.key = snapshot_key,
	.version = snapshot_version,
};
