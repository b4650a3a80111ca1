#include "reconcilers/trainer_status.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/rfc3339.h"
#include "base/utf8.h"
#include "reconcilers/json.h"

#define PATH_PREFIX     "/apis/"
#define AUDIENCE_FORMAT "trainer.kubeflow.org/v1alpha1/namespaces/%s/trainjobs/%s/status"
#define SA_USER_PREFIX  "system:serviceaccount:"

void tj_trainer_status_path(const char *ns, const char *name,
                            char buf[static TJ_TRAINER_STATUS_PATH_MAX])
{
	snprintf(buf, TJ_TRAINER_STATUS_PATH_MAX, PATH_PREFIX AUDIENCE_FORMAT, ns, name);
}

void tj_trainer_status_audience(const char *ns, const char *name,
                                char buf[static TJ_TRAINER_STATUS_PATH_MAX])
{
	snprintf(buf, TJ_TRAINER_STATUS_PATH_MAX, AUDIENCE_FORMAT, ns, name);
}

/* A DNS label at the start of s, ended by '/': its length, or 0 when there is none. */
static size_t dns_label(const char *s)
{
	size_t n = 0;

	while ((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= '0' && s[n] <= '9') || s[n] == '-')
		n++;
	if (n == 0 || n > 63 || s[n] != '/' || s[0] == '-' || s[n - 1] == '-')
		return 0;
	return n;
}

/* s with the literal prefix skipped, or NULL when s does not start with it. */
static const char *skip(const char *s, const char *prefix)
{
	size_t n = strlen(prefix);

	return strncmp(s, prefix, n) == 0 ? s + n : NULL;
}

int tj_trainer_status_path_parse(const char *path, char ret_ns[static 64], char ret_name[static 64])
{
	const char *p = skip(path, PATH_PREFIX "trainer.kubeflow.org/v1alpha1/namespaces/");
	const char *ns, *name;
	size_t ns_len, name_len;

	if (!p || !(ns_len = dns_label(p)))
		return -ENOENT;
	ns = p;
	p = skip(p + ns_len, "/trainjobs/");
	if (!p || !(name_len = dns_label(p)))
		return -ENOENT;
	name = p;
	if (strcmp(p + name_len, "/status") != 0)
		return -ENOENT;
	memcpy(ret_ns, ns, ns_len);
	ret_ns[ns_len] = '\0';
	memcpy(ret_name, name, name_len);
	ret_name[name_len] = '\0';
	return 0;
}

bool tj_trainer_status_user_allowed(const char *user, const char *ns)
{
	const char *p = user ? skip(user, SA_USER_PREFIX) : NULL;
	size_t n = strlen(ns);

	/* The ServiceAccount's name follows the namespace and a colon, and is not empty. */
	return p && strncmp(p, ns, n) == 0 && p[n] == ':' && p[n + 1] != '\0' &&
	       !strchr(p + n + 1, ':');
}

/* Characters, as the CRD's maxLength counts them (the text is valid UTF-8). */
static size_t utf8_chars(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xC0) != 0x80;
	return n;
}

/* A member of an object given twice would be read one way here and another by whoever reads
 * the JSON next. */
static int check_members(const cJSON *obj, const char *path, const char *const *allowed,
                         struct tj_problem *why)
{
	const cJSON *m, *o;

	cJSON_ArrayForEach(m, obj)
	{
		bool known = false;

		for (size_t i = 0; allowed[i]; i++)
			known |= strcmp(m->string, allowed[i]) == 0;
		if (!known)
			return tj_problem_set(why, "Invalid", "%s: unknown field \"%.64s\"", path,
			                      m->string);
		for (o = obj->child; o != m; o = o->next)
			if (strcmp(o->string, m->string) == 0)
				return tj_problem_set(why, "Invalid",
				                      "%s: field \"%s\" is given twice", path,
				                      m->string);
	}
	return 0;
}

/* An optional integer field from min to max: copied into out (null when absent or null). */
static int copy_int(const cJSON *in, cJSON *out, const char *key, double min, double max,
                    struct tj_problem *why)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(in, key);

	if (!v || cJSON_IsNull(v))
		return tj_json_set(out, key, cJSON_CreateNull());
	if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || v->valuedouble < min ||
	    v->valuedouble > max)
		return tj_problem_set(why, "Invalid",
		                      "trainerStatus.%s: must be an integer from %.0f to %.0f", key,
		                      min, max);
	return tj_json_set(out, key, cJSON_CreateNumber(v->valuedouble));
}

static int check_text(const cJSON *v, size_t i, const char *key, struct tj_problem *why)
{
	size_t chars;

	if (!cJSON_IsString(v))
		return tj_problem_set(why, "Invalid",
		                      "trainerStatus.metrics[%zu].%s: must be a string", i, key);
	if (tj_utf8_invalid_at(v->valuestring, strlen(v->valuestring)) < strlen(v->valuestring))
		return tj_problem_set(why, "Invalid",
		                      "trainerStatus.metrics[%zu].%s: is not valid UTF-8", i, key);
	chars = utf8_chars(v->valuestring);
	if (chars < 1 || chars > TJ_TRAINER_STATUS_MAX_METRIC_CHARS)
		return tj_problem_set(
		        why, "Invalid",
		        "trainerStatus.metrics[%zu].%s: must have 1 to %d characters, not %zu", i,
		        key, TJ_TRAINER_STATUS_MAX_METRIC_CHARS, chars);
	return 0;
}

static int copy_metrics(const cJSON *in, cJSON *out, struct tj_problem *why)
{
	static const char *const fields[] = { "name", "value", NULL };
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(in, "metrics"), *m;
	cJSON *list;
	size_t i = 0;
	int r;

	if (!v || cJSON_IsNull(v))
		return tj_json_set(out, "metrics", cJSON_CreateNull());
	if (!cJSON_IsArray(v))
		return tj_problem_set(why, "Invalid",
		                      "trainerStatus.metrics: must be a list of {name, value}");
	if (cJSON_GetArraySize(v) > TJ_TRAINER_STATUS_MAX_METRICS)
		return tj_problem_set(why, "Invalid",
		                      "trainerStatus.metrics: has %d entries, the limit is %d",
		                      cJSON_GetArraySize(v), TJ_TRAINER_STATUS_MAX_METRICS);
	list = cJSON_CreateArray();
	if (tj_json_set(out, "metrics", list) < 0)
		return -ENOMEM;
	cJSON_ArrayForEach(m, v)
	{
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(m, "name");
		const cJSON *value = cJSON_GetObjectItemCaseSensitive(m, "value");
		char path[48];
		cJSON *copy;
		size_t j = 0;

		snprintf(path, sizeof(path), "trainerStatus.metrics[%zu]", i);
		if (!cJSON_IsObject(m))
			return tj_problem_set(why, "Invalid", "%s: must be an object {name, value}",
			                      path);
		if ((r = check_members(m, path, fields, why)) < 0 ||
		    (r = check_text(name, i, "name", why)) < 0 ||
		    (r = check_text(value, i, "value", why)) < 0)
			return r;
		for (const cJSON *o = v->child; o != m; o = o->next, j++)
			if (strcmp(tj_json_string(o, "name"), name->valuestring) == 0)
				return tj_problem_set(
				        why, "Invalid",
				        "%s: metric \"%s\" is given twice (also metrics[%zu])",
				        path, name->valuestring, j);
		copy = cJSON_CreateObject();
		if (tj_json_append(list, copy) < 0 ||
		    tj_json_set_string(copy, "name", name->valuestring) < 0 ||
		    tj_json_set_string(copy, "value", value->valuestring) < 0)
			return -ENOMEM;
		i++;
	}
	return 0;
}

static int copy_time(const cJSON *in, cJSON *out, struct tj_problem *why)
{
	const char *text = tj_json_string(in, "lastUpdatedTime");
	char buf[21];
	int64_t t;

	if (!cJSON_GetObjectItemCaseSensitive(in, "lastUpdatedTime") ||
	    cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(in, "lastUpdatedTime")))
		return tj_problem_set(why, "Invalid", "trainerStatus.lastUpdatedTime: is required");
	if (!text || tj_rfc3339_parse(text, &t) < 0 || t < 0)
		return tj_problem_set(
		        why, "Invalid",
		        "trainerStatus.lastUpdatedTime: must be an RFC 3339 time such as "
		        "2026-01-02T03:04:05Z");
	tj_time_format(t, buf);
	return tj_json_set_string(out, "lastUpdatedTime", buf);
}

int tj_trainer_status_parse(const char *body, size_t len, cJSON **ret_status,
                            struct tj_problem *why)
{
	static const char *const top[] = { "trainerStatus", NULL };
	static const char *const fields[] = { "progressPercentage", "estimatedRemainingSeconds",
		                              "metrics", "lastUpdatedTime", NULL };
	const cJSON *ts;
	cJSON *doc, *out = NULL;
	int r;

	if (len > TJ_TRAINER_STATUS_MAX_BODY) {
		tj_problem_set(why, "RequestEntityTooLarge",
		               "the body has %zu bytes, the limit is %d", len,
		               TJ_TRAINER_STATUS_MAX_BODY);
		return -E2BIG;
	}
	doc = cJSON_ParseWithLength(body, len);
	if (!cJSON_IsObject(doc)) {
		r = tj_problem_set(why, "Invalid",
		                   "the body is not a JSON object {\"trainerStatus\": {...}}");
		goto out;
	}
	if ((r = check_members(doc, "body", top, why)) < 0)
		goto out;
	ts = cJSON_GetObjectItemCaseSensitive(doc, "trainerStatus");
	if (!ts || cJSON_IsNull(ts)) {
		*ret_status = NULL;
		r = 0;
		goto out;
	}
	if (!cJSON_IsObject(ts)) {
		r = tj_problem_set(why, "Invalid", "trainerStatus: must be an object");
		goto out;
	}
	if ((r = check_members(ts, "trainerStatus", fields, why)) < 0)
		goto out;
	out = cJSON_CreateObject();
	if (!out) {
		r = -ENOMEM;
		goto out;
	}
	if ((r = copy_int(ts, out, "progressPercentage", 0, 100, why)) < 0 ||
	    (r = copy_int(ts, out, "estimatedRemainingSeconds", 0, INT32_MAX, why)) < 0 ||
	    (r = copy_metrics(ts, out, why)) < 0 || (r = copy_time(ts, out, why)) < 0)
		goto out;
	*ret_status = out;
	out = NULL;
	r = 0;
out:
	cJSON_Delete(out);
	cJSON_Delete(doc);
	return r;
}

cJSON *tj_trainer_status_patch(const cJSON *status)
{
	cJSON *patch = cJSON_CreateObject();

	if (!patch || tj_json_set(tj_json_object(patch, "status"), "trainerStatus",
	                          cJSON_Duplicate(status, true)) < 0) {
		cJSON_Delete(patch);
		return NULL;
	}
	return patch;
}

static int put_env(cJSON *env, const char *name, const char *value)
{
	cJSON *v = cJSON_CreateObject();

	if (!v || tj_json_set_string(v, "name", name) < 0 ||
	    tj_json_set_string(v, "value", value) < 0) {
		cJSON_Delete(v);
		return -ENOMEM;
	}
	return tj_json_upsert_named(env, v);
}

/* A new empty object appended to array; NULL when out of memory or array is NULL. */
static cJSON *append_object(cJSON *array)
{
	cJSON *o = cJSON_CreateObject();

	return tj_json_append(array, o) == 0 ? o : NULL;
}

static cJSON *token_volume(const char *ns, const char *name, const char *ca_config_map)
{
	char audience[TJ_TRAINER_STATUS_PATH_MAX];
	cJSON *vol = cJSON_CreateObject(), *sources, *token, *ca, *item;

	tj_trainer_status_audience(ns, name, audience);
	if (tj_json_set_string(vol, "name", TJ_TRAINER_STATUS_VOLUME) < 0)
		goto fail;
	sources = tj_json_array(tj_json_object(vol, "projected"), "sources");
	token = tj_json_object(append_object(sources), "serviceAccountToken");
	if (!token || tj_json_set_string(token, "audience", audience) < 0 ||
	    tj_json_set(token, "expirationSeconds",
	                cJSON_CreateNumber(TJ_TRAINER_STATUS_TOKEN_SECONDS)) < 0 ||
	    tj_json_set_string(token, "path", TJ_TRAINER_STATUS_TOKEN_FILE) < 0)
		goto fail;
	if (ca_config_map) {
		ca = tj_json_object(append_object(sources), "configMap");
		if (!ca || tj_json_set_string(ca, "name", ca_config_map) < 0)
			goto fail;
		item = append_object(tj_json_array(ca, "items"));
		if (!item || tj_json_set_string(item, "key", TJ_TRAINER_STATUS_CA_FILE) < 0 ||
		    tj_json_set_string(item, "path", TJ_TRAINER_STATUS_CA_FILE) < 0)
			goto fail;
	}
	return vol;
fail:
	cJSON_Delete(vol);
	return NULL;
}

int tj_trainer_status_add_to_pod(cJSON *spec, const char *container, const char *ns,
                                 const char *name, const char *base_url, const char *ca_config_map)
{
	cJSON *c = tj_json_find_by(cJSON_GetObjectItemCaseSensitive(spec, "containers"), "name",
	                           container);
	cJSON *env, *mounts, *mount;
	char path[TJ_TRAINER_STATUS_PATH_MAX], url[TJ_TRAINER_STATUS_PATH_MAX + 256];
	int r;

	if (!c)
		return 0;
	tj_trainer_status_path(ns, name, path);
	snprintf(url, sizeof(url), "%s%s", base_url, path);
	env = tj_json_array(c, "env");
	mounts = tj_json_array(c, "volumeMounts");
	if (!env || !mounts)
		return -ENOMEM;
	if ((r = put_env(env, TJ_TRAINER_STATUS_ENV_URL, url)) < 0 ||
	    (r = put_env(env, TJ_TRAINER_STATUS_ENV_TOKEN,
	                 TJ_TRAINER_STATUS_MOUNT_PATH "/" TJ_TRAINER_STATUS_TOKEN_FILE)) < 0)
		return r;
	if (ca_config_map &&
	    (r = put_env(env, TJ_TRAINER_STATUS_ENV_CA_CERT,
	                 TJ_TRAINER_STATUS_MOUNT_PATH "/" TJ_TRAINER_STATUS_CA_FILE)) < 0)
		return r;
	mount = cJSON_CreateObject();
	if (!mount || tj_json_set_string(mount, "name", TJ_TRAINER_STATUS_VOLUME) < 0 ||
	    tj_json_set_string(mount, "mountPath", TJ_TRAINER_STATUS_MOUNT_PATH) < 0 ||
	    tj_json_set(mount, "readOnly", cJSON_CreateTrue()) < 0) {
		cJSON_Delete(mount);
		return -ENOMEM;
	}
	/* A mount of another volume at our path would hide the files: ours wins. */
	if ((r = tj_json_put_by(mounts, "mountPath", TJ_TRAINER_STATUS_MOUNT_PATH, mount)) < 0)
		return r;
	return tj_json_upsert_named(tj_json_array(spec, "volumes"),
	                            token_volume(ns, name, ca_config_map));
}
