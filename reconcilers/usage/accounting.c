#include "reconcilers/usage/accounting.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/rfc3339.h"
#include "reconcilers/json.h"

static int set_time(cJSON *obj, const char *key, int64_t t)
{
	char buf[21];

	tj_time_format(t, buf);
	return tj_json_set_string(obj, key, buf);
}

/* The annotation of the record, when the job had it. */
static int keep_annotation(cJSON *annotations, const char *key, const char *value)
{
	return value ? tj_json_set_string(annotations, key, value) : 0;
}

/* The record's object; its status's messages cut to cut bytes (when not negative). */
static cJSON *record_object(const struct tj_trainjob *job, int64_t deleted, int cut)
{
	struct tj_trainjob_status st = job->status;
	cJSON *obj = cJSON_CreateObject(), *meta, *annotations, *spec, *status;
	bool ended = st.state == TJ_STATE_COMPLETE || st.state == TJ_STATE_FAILED;

	if (cut >= 0 && (size_t)cut < sizeof(st.message)) {
		st.message[cut] = '\0';
		st.last_failure.message[cut] = '\0';
		for (size_t i = 0; i < st.n_conditions; i++)
			st.conditions[i].message[cut] = '\0';
	}
	/* The steps' counts say nothing once the job is gone. */
	st.has_jobs_status = false;
	st.n_jobs = 0;
	if (!obj)
		return NULL;
	meta = tj_json_object(obj, "metadata");
	annotations = meta ? tj_json_object(meta, "annotations") : NULL;
	spec = tj_json_object(obj, "spec");
	status = tj_trainjob_status_to_json(&st);
	if (!annotations || !spec || !status ||
	    tj_json_set_string(obj, "apiVersion", "trainer.kubeflow.org/v1alpha1") < 0 ||
	    tj_json_set_string(obj, "kind", "TrainJob") < 0 ||
	    tj_json_set_string(meta, "name", job->name) < 0 ||
	    tj_json_set_string(meta, "namespace", job->namespace) < 0 ||
	    tj_json_set_string(meta, "uid", job->uid ? job->uid : "") < 0 ||
	    (job->creation_time && set_time(meta, "creationTimestamp", job->creation_time) < 0) ||
	    (!ended && set_time(meta, "deletionTimestamp", deleted) < 0) ||
	    set_time(annotations, TJ_ACCOUNTING_DELETED_AT, deleted) < 0 ||
	    keep_annotation(annotations, TJ_LABEL_PREFIX "submitted-by", job->submitted_by) < 0 ||
	    keep_annotation(annotations, TJ_LABEL_PREFIX "partition", job->partition) < 0 ||
	    keep_annotation(annotations, TJ_LABEL_PREFIX "qos", job->qos) < 0 ||
	    (job->runtime_name && tj_json_set_string(tj_json_object(spec, "runtimeRef"), "name",
	                                             job->runtime_name) < 0) ||
	    (job->num_nodes > 0 && tj_json_set(tj_json_object(spec, "trainer"), "numNodes",
	                                       cJSON_CreateNumber(job->num_nodes)) < 0) ||
	    tj_json_set(obj, "status", status) < 0) {
		if (status && !cJSON_GetObjectItemCaseSensitive(obj, "status"))
			cJSON_Delete(status);
		cJSON_Delete(obj);
		return NULL;
	}
	return obj;
}

char *tj_accounting_record(const struct tj_trainjob *job, int64_t deleted)
{
	/* The message first whole, then shorter until the record fits. */
	for (int cut = -1; cut < TJ_MESSAGE_MAX; cut = cut < 0 ? 512 : cut / 2) {
		cJSON *obj = record_object(job, deleted, cut);
		char *text = obj ? cJSON_PrintUnformatted(obj) : NULL;

		cJSON_Delete(obj);
		if (!text)
			return NULL;
		if (strlen(text) <= TJ_ACCOUNTING_RECORD_MAX)
			return text;
		free(text);
		if (cut == 0)
			break;
	}
	errno = E2BIG;
	return NULL;
}

cJSON *tj_accounting_object(const char *text, size_t len)
{
	cJSON *obj;
	const cJSON *kind;

	if (!text || len > TJ_ACCOUNTING_RECORD_MAX)
		return NULL;
	obj = cJSON_ParseWithLength(text, len);
	kind = cJSON_GetObjectItemCaseSensitive(obj, "kind");
	if (!cJSON_IsObject(obj) || !cJSON_IsString(kind) ||
	    strcmp(kind->valuestring, "TrainJob")) {
		cJSON_Delete(obj);
		return NULL;
	}
	return obj;
}

int tj_accounting_parse(const char *text, size_t len, const char *namespace,
                        struct tj_accounting_entry *ret)
{
	cJSON *obj = tj_accounting_object(text, len);
	const char *uid = obj ? tj_json_string(obj, "metadata.uid") : NULL;
	/* (The annotation's name has dots: no path reaches it.) */
	const cJSON *at_item =
	        obj ? cJSON_GetObjectItemCaseSensitive(tj_json_path(obj, "metadata.annotations"),
	                                               TJ_ACCOUNTING_DELETED_AT)
	            : NULL;
	const char *deleted = cJSON_IsString(at_item) ? at_item->valuestring : NULL;
	struct tj_trainjob_status st;
	int64_t at;

	/* (A deletion before 1970 is no one's: times are formatted from the epoch on.) */
	if (!uid || !*uid || strlen(uid) >= sizeof(ret->uid) || !deleted ||
	    tj_rfc3339_parse(deleted, &at) < 0 || at <= 0) {
		cJSON_Delete(obj);
		return -EINVAL;
	}
	tj_trainjob_status_from_json(cJSON_GetObjectItemCaseSensitive(obj, "status"), &st);
	*ret = (struct tj_accounting_entry){ .deleted = at,
		                             .gpu_seconds = st.gpu_seconds,
		                             .start = st.start_time,
		                             .counted_until = st.gpu_seconds_until };
	snprintf(ret->uid, sizeof(ret->uid), "%s", uid);
	snprintf(ret->namespace, sizeof(ret->namespace), "%s", namespace ? namespace : "");
	cJSON_Delete(obj);
	return 0;
}

size_t tj_accounting_prune(const struct tj_accounting_entry *entries, size_t n, int64_t now,
                           int64_t retention, bool *drop)
{
	size_t dropped = 0, kept;

	for (size_t i = 0; i < n; i++) {
		drop[i] = retention > 0 && entries[i].deleted < now - retention;
		dropped += drop[i];
	}
	/* Past the most a namespace keeps, the oldest of those left go, one by one. */
	for (kept = n - dropped; kept > TJ_ACCOUNTING_MAX_RECORDS; kept--, dropped++) {
		size_t oldest = SIZE_MAX;

		for (size_t i = 0; i < n; i++)
			if (!drop[i] &&
			    (oldest == SIZE_MAX || entries[i].deleted < entries[oldest].deleted ||
			     (entries[i].deleted == entries[oldest].deleted &&
			      strcmp(entries[i].uid, entries[oldest].uid) < 0)))
				oldest = i;
		drop[oldest] = true;
	}
	return dropped;
}
