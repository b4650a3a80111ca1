#include "controller/http/review.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void tj_review_user_clear(struct tj_review_user *u)
{
	free(u->name);
	free(u->uid);
	for (size_t i = 0; i < u->n_groups; i++)
		free(u->groups[i]);
	free(u->groups);
	cJSON_Delete(u->extra);
	*u = (struct tj_review_user){ 0 };
}

int tj_review_user_copy(const struct tj_review_user *src, struct tj_review_user *ret)
{
	struct tj_review_user u = { 0 };

	u.name = strdup(src->name);
	u.uid = strdup(src->uid ? src->uid : "");
	if (!u.name || !u.uid)
		goto fail_user;
	if (src->n_groups > 0) {
		u.groups = calloc(src->n_groups, sizeof(*u.groups));
		if (!u.groups)
			goto fail_user;
		for (; u.n_groups < src->n_groups; u.n_groups++) {
			u.groups[u.n_groups] = strdup(src->groups[u.n_groups]);
			if (!u.groups[u.n_groups])
				goto fail_user;
		}
	}
	if (src->extra) {
		u.extra = cJSON_Duplicate(src->extra, true);
		if (!u.extra)
			goto fail_user;
	}
	*ret = u;
	return 0;

fail_user:
	tj_review_user_clear(&u);
	return -ENOMEM;
}

const char *tj_bearer_token(const char *header, size_t *ret_len)
{
	const char *p, *end;

	if (!header || strncasecmp(header, "Bearer ", 7) != 0)
		return NULL;
	p = header + 7;
	while (*p == ' ' || *p == '\t')
		p++;
	end = p + strlen(p);
	while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	/* A token is one word: "Bearer a b" is not a bearer token. */
	for (const char *q = p; q < end; q++)
		if (*q == ' ' || *q == '\t')
			return NULL;
	if (end == p)
		return NULL;
	*ret_len = (size_t)(end - p);
	return p;
}

static cJSON *review_new(const char *api_version, const char *kind, cJSON **ret_spec)
{
	cJSON *o = cJSON_CreateObject();

	if (!o || !cJSON_AddStringToObject(o, "apiVersion", api_version) ||
	    !cJSON_AddStringToObject(o, "kind", kind) ||
	    !(*ret_spec = cJSON_AddObjectToObject(o, "spec"))) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

cJSON *tj_token_review_new(const char *token, size_t token_len, const char *audience)
{
	cJSON *spec, *o = review_new("authentication.k8s.io/v1", "TokenReview", &spec);
	cJSON *audiences;
	char *copy;

	if (!o)
		return NULL;
	copy = strndup(token, token_len);
	if (!copy || !cJSON_AddStringToObject(spec, "token", copy))
		goto fail;
	if (audience && (!(audiences = cJSON_AddArrayToObject(spec, "audiences")) ||
	                 !cJSON_AddItemToArray(audiences, cJSON_CreateString(audience))))
		goto fail;
	free(copy);
	return o;
fail:
	free(copy);
	cJSON_Delete(o);
	return NULL;
}

bool tj_token_review_has_audience(const cJSON *body, const char *audience)
{
	const cJSON *status = cJSON_GetObjectItemCaseSensitive(body, "status");
	const cJSON *list = cJSON_GetObjectItemCaseSensitive(status, "audiences"), *a;

	if (!cJSON_IsArray(list))
		return false;
	cJSON_ArrayForEach(a, list) if (cJSON_IsString(a) &&
	                                strcmp(a->valuestring, audience) == 0) return true;
	return false;
}

/* A string field that may be absent (def); -EBADMSG when of another type, -E2BIG when longer
 * than max. */
static int optional_string(const cJSON *obj, const char *key, const char *def, size_t max,
                           const char **ret)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	if (!v || cJSON_IsNull(v)) {
		*ret = def;
		return 0;
	}
	if (!cJSON_IsString(v))
		return -EBADMSG;
	if (strlen(v->valuestring) > max)
		return -E2BIG;
	*ret = v->valuestring;
	return 0;
}

static int optional_bool(const cJSON *obj, const char *key, bool *ret)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	if (!v || cJSON_IsNull(v)) {
		*ret = false;
		return 0;
	}
	if (!cJSON_IsBool(v))
		return -EBADMSG;
	*ret = cJSON_IsTrue(v);
	return 0;
}

static void copy_truncated(char *dst, size_t size, const char *src)
{
	size_t n = strlen(src);

	if (n >= size)
		n = size - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* An array of strings, or absent; *ret_n counts them. */
static int check_string_array(const cJSON *v, size_t max, size_t *ret_n)
{
	size_t n = 0;
	const cJSON *item;

	if (!v || cJSON_IsNull(v)) {
		*ret_n = 0;
		return 0;
	}
	if (!cJSON_IsArray(v))
		return -EBADMSG;
	cJSON_ArrayForEach(item, v)
	{
		if (!cJSON_IsString(item))
			return -EBADMSG;
		if (strlen(item->valuestring) > TJ_REVIEW_MAX_STRING)
			return -E2BIG;
		if (++n > max)
			return -E2BIG;
	}
	*ret_n = n;
	return 0;
}

static int check_extra(const cJSON *extra)
{
	const cJSON *item;
	size_t keys = 0, n;
	int r;

	if (!extra || cJSON_IsNull(extra))
		return 0;
	if (!cJSON_IsObject(extra))
		return -EBADMSG;
	cJSON_ArrayForEach(item, extra)
	{
		if (++keys > TJ_REVIEW_MAX_EXTRA || strlen(item->string) > TJ_REVIEW_MAX_STRING)
			return -E2BIG;
		r = check_string_array(item, TJ_REVIEW_MAX_VALUES, &n);
		if (r < 0)
			return r;
	}
	return 0;
}

static int parse_user(const cJSON *user, struct tj_review_user *ret)
{
	const cJSON *groups = cJSON_GetObjectItemCaseSensitive(user, "groups");
	const cJSON *extra = cJSON_GetObjectItemCaseSensitive(user, "extra");
	const char *name, *uid;
	struct tj_review_user u = { 0 };
	const cJSON *item;
	size_t n_groups;
	int r;

	if (!cJSON_IsObject(user))
		return -EBADMSG;
	if ((r = optional_string(user, "username", "", TJ_REVIEW_MAX_STRING, &name)) < 0 ||
	    (r = optional_string(user, "uid", "", TJ_REVIEW_MAX_STRING, &uid)) < 0 ||
	    (r = check_string_array(groups, TJ_REVIEW_MAX_GROUPS, &n_groups)) < 0 ||
	    (r = check_extra(extra)) < 0)
		return r;
	if (!name[0])
		return -EBADMSG;
	struct tj_review_user view = { .name = (char *)name, .uid = (char *)uid };
	char *group_view[TJ_REVIEW_MAX_GROUPS];

	if (n_groups > 0) {
		cJSON_ArrayForEach(item, groups)
		{
			group_view[view.n_groups++] = item->valuestring;
		}
		view.groups = group_view;
	}
	if (extra && cJSON_IsObject(extra) && extra->child)
		view.extra = (cJSON *)extra;
	r = tj_review_user_copy(&view, &u);
	if (r < 0)
		return r;
	*ret = u;
	return 0;
}

int tj_token_review_parse(const cJSON *body, struct tj_token_review *ret)
{
	const cJSON *status = cJSON_GetObjectItemCaseSensitive(body, "status");
	struct tj_token_review tr = { 0 };
	const char *error;
	int r;

	if (!cJSON_IsObject(body) || !cJSON_IsObject(status))
		return -EBADMSG;
	if ((r = optional_bool(status, "authenticated", &tr.authenticated)) < 0 ||
	    (r = optional_string(status, "error", "", SIZE_MAX, &error)) < 0)
		return r;
	copy_truncated(tr.error, sizeof(tr.error), error);
	if (tr.authenticated) {
		r = parse_user(cJSON_GetObjectItemCaseSensitive(status, "user"), &tr.user);
		if (r < 0)
			return r;
	}
	*ret = tr;
	return 0;
}

cJSON *tj_access_review_new(const struct tj_review_user *user, const char *verb, const char *path)
{
	cJSON *spec, *o = review_new("authorization.k8s.io/v1", "SubjectAccessReview", &spec);
	cJSON *groups, *attrs, *extra;

	if (!o)
		return NULL;
	if (!cJSON_AddStringToObject(spec, "user", user->name))
		goto fail_review;
	if (user->uid && user->uid[0] && !cJSON_AddStringToObject(spec, "uid", user->uid))
		goto fail_review;
	if (user->n_groups > 0) {
		groups = cJSON_AddArrayToObject(spec, "groups");
		if (!groups)
			goto fail_review;
		for (size_t i = 0; i < user->n_groups; i++) {
			cJSON *g = cJSON_CreateString(user->groups[i]);

			if (!g || !cJSON_AddItemToArray(groups, g)) {
				cJSON_Delete(g);
				goto fail_review;
			}
		}
	}
	if (user->extra) {
		extra = cJSON_Duplicate(user->extra, true);
		if (!extra || !cJSON_AddItemToObject(spec, "extra", extra)) {
			cJSON_Delete(extra);
			goto fail_review;
		}
	}
	attrs = cJSON_AddObjectToObject(spec, "nonResourceAttributes");
	if (!attrs || !cJSON_AddStringToObject(attrs, "path", path) ||
	    !cJSON_AddStringToObject(attrs, "verb", verb))
		goto fail_review;
	return o;

fail_review:
	cJSON_Delete(o);
	return NULL;
}

int tj_access_review_parse(const cJSON *body, struct tj_access_review *ret)
{
	const cJSON *status = cJSON_GetObjectItemCaseSensitive(body, "status");
	struct tj_access_review ar = { 0 };
	const char *reason, *error;
	int r;

	if (!cJSON_IsObject(body) || !cJSON_IsObject(status))
		return -EBADMSG;
	if ((r = optional_bool(status, "allowed", &ar.allowed)) < 0 ||
	    (r = optional_bool(status, "denied", &ar.denied)) < 0 ||
	    (r = optional_string(status, "reason", "", SIZE_MAX, &reason)) < 0 ||
	    (r = optional_string(status, "evaluationError", "", SIZE_MAX, &error)) < 0)
		return r;
	/* The API says allowed and denied never hold together; read such an answer as a no. */
	if (ar.denied)
		ar.allowed = false;
	copy_truncated(ar.reason, sizeof(ar.reason), reason);
	copy_truncated(ar.error, sizeof(ar.error), error);
	*ret = ar;
	return 0;
}
