/* The TokenReview and SubjectAccessReview bodies and answers, as the API server writes
 * them (the answers below are trimmed copies of kube-apiserver's). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "controller/http/review.h"

struct bearer_case {
	const char *header;
	const char *want; /* NULL: no token */
};

static const struct bearer_case bearer_cases[] = {
	{ "Bearer abc.def", "abc.def" },
	{ "bearer abc", "abc" },
	{ "BEARER   abc  ", "abc" },
	{ "Bearer\tabc", NULL }, /* the scheme ends with a space */
	{ "Bearer ", NULL },
	{ "Bearer    ", NULL },
	{ "Bearer a b", NULL },
	{ "Basic dXNlcjpwYXNz", NULL },
	{ "Bearerabc", NULL },
	{ "", NULL },
	{ NULL, NULL },
};

static void test_bearer_token(void **state)
{
	for (size_t i = 0; i < sizeof(bearer_cases) / sizeof(bearer_cases[0]); i++) {
		const struct bearer_case *c = &bearer_cases[i];
		size_t len = 12345;
		const char *t = tj_bearer_token(c->header, &len);

		if (!c->want) {
			assert_null(t);
			assert_int_equal(len, 12345);
			continue;
		}
		assert_non_null(t);
		assert_int_equal(len, strlen(c->want));
		assert_memory_equal(t, c->want, len);
	}
}

static char *print(const cJSON *o)
{
	char *s = cJSON_PrintUnformatted(o);

	assert_non_null(s);
	return s;
}

static void test_token_review_body(void **state)
{
	static const char token[] = "tok.en.xyz";
	cJSON *o = tj_token_review_new(token, 6, NULL);
	char *s = print(o);

	assert_string_equal(s,
	                    "{\"apiVersion\":\"authentication.k8s.io/v1\",\"kind\":\"TokenReview\","
	                    "\"spec\":{\"token\":\"tok.en\"}}");
	free(s);
	cJSON_Delete(o);
}

struct token_case {
	const char *name;
	const char *body;
	int want_rc;
	bool authenticated;
	const char *user, *uid;
	size_t n_groups;
	const char *group0;
	bool has_extra;
	const char *error;
};

static const struct token_case token_cases[] = {
	{ .name = "a service account's token",
	  .body = "{\"kind\":\"TokenReview\",\"apiVersion\":\"authentication.k8s.io/v1\","
	          "\"metadata\":{},\"spec\":{\"token\":\"x\"},\"status\":{\"authenticated\":true,"
	          "\"user\":{\"username\":\"system:serviceaccount:mon:prometheus\",\"uid\":"
	          "\"8b1e\",\"groups\":[\"system:serviceaccounts\",\"system:serviceaccounts:mon\","
	          "\"system:authenticated\"],\"extra\":{\"authentication.kubernetes.io/pod-name\":"
	          "[\"prom-0\"]}},\"audiences\":[\"https://kubernetes.default.svc\"]}}",
	  .authenticated = true,
	  .user = "system:serviceaccount:mon:prometheus",
	  .uid = "8b1e",
	  .n_groups = 3,
	  .group0 = "system:serviceaccounts",
	  .has_extra = true },
	{ .name = "an unknown token",
	  .body = "{\"status\":{\"user\":{},\"error\":\"invalid bearer token\"}}",
	  .error = "invalid bearer token" },
	{ .name = "authenticated false, said", .body = "{\"status\":{\"authenticated\":false}}" },
	{ .name = "a user with only a name",
	  .body = "{\"status\":{\"authenticated\":true,\"user\":{\"username\":\"alice\"}}}",
	  .authenticated = true,
	  .user = "alice",
	  .uid = "" },
	{ .name = "authenticated without a user",
	  .body = "{\"status\":{\"authenticated\":true}}",
	  .want_rc = -EBADMSG },
	{ .name = "authenticated with an empty name",
	  .body = "{\"status\":{\"authenticated\":true,\"user\":{\"username\":\"\"}}}",
	  .want_rc = -EBADMSG },
	{ .name = "no status", .body = "{\"kind\":\"TokenReview\"}", .want_rc = -EBADMSG },
	{ .name = "not an object", .body = "[1]", .want_rc = -EBADMSG },
	{ .name = "authenticated of the wrong type",
	  .body = "{\"status\":{\"authenticated\":\"yes\"}}",
	  .want_rc = -EBADMSG },
	{ .name = "groups not strings",
	  .body = "{\"status\":{\"authenticated\":true,\"user\":{\"username\":\"a\",\"groups\":"
	          "[1]}}}",
	  .want_rc = -EBADMSG },
	{ .name = "extra not arrays",
	  .body = "{\"status\":{\"authenticated\":true,\"user\":{\"username\":\"a\",\"extra\":"
	          "{\"k\":1}}}}",
	  .want_rc = -EBADMSG },
	{ .name = "an error that is not a string",
	  .body = "{\"status\":{\"error\":{}}}",
	  .want_rc = -EBADMSG },
};

static void test_token_review_parse(void **state)
{
	for (size_t i = 0; i < sizeof(token_cases) / sizeof(token_cases[0]); i++) {
		const struct token_case *c = &token_cases[i];
		cJSON *body = cJSON_Parse(c->body);
		struct tj_token_review tr = { .error = "untouched" };

		print_message("case: %s\n", c->name);
		assert_non_null(body);
		assert_int_equal(tj_token_review_parse(body, &tr), c->want_rc);
		cJSON_Delete(body);
		if (c->want_rc < 0) {
			assert_string_equal(tr.error, "untouched");
			continue;
		}
		assert_int_equal(tr.authenticated, c->authenticated);
		assert_string_equal(tr.error, c->error ? c->error : "");
		if (!c->authenticated) {
			assert_null(tr.user.name);
			continue;
		}
		assert_string_equal(tr.user.name, c->user);
		assert_string_equal(tr.user.uid, c->uid);
		assert_int_equal(tr.user.n_groups, c->n_groups);
		if (c->group0)
			assert_string_equal(tr.user.groups[0], c->group0);
		assert_int_equal(tr.user.extra != NULL, c->has_extra);
		tj_review_user_clear(&tr.user);
	}
}

/* A body with n groups, for the limits. */
static char *many_groups(size_t n)
{
	size_t size = 128 + n * 8;
	char *s = malloc(size);
	size_t len;

	assert_non_null(s);
	len = (size_t)snprintf(s, size,
	                       "{\"status\":{\"authenticated\":true,\"user\":{"
	                       "\"username\":\"a\",\"groups\":[");
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(s + len, size - len, "%s\"g%zu\"", i ? "," : "", i);
	snprintf(s + len, size - len, "]}}}");
	return s;
}

static void test_token_review_limits(void **state)
{
	char *at = many_groups(TJ_REVIEW_MAX_GROUPS), *over = many_groups(TJ_REVIEW_MAX_GROUPS + 1);
	cJSON *a = cJSON_Parse(at), *b = cJSON_Parse(over);
	struct tj_token_review tr;
	char *long_name = malloc(TJ_REVIEW_MAX_STRING + 64);
	cJSON *c;

	assert_int_equal(tj_token_review_parse(a, &tr), 0);
	assert_int_equal(tr.user.n_groups, TJ_REVIEW_MAX_GROUPS);
	assert_string_equal(tr.user.groups[TJ_REVIEW_MAX_GROUPS - 1], "g63");
	tj_review_user_clear(&tr.user);
	assert_int_equal(tj_token_review_parse(b, &tr), -E2BIG);

	assert_non_null(long_name);
	strcpy(long_name, "{\"status\":{\"authenticated\":true,\"user\":{\"username\":\"");
	memset(long_name + strlen(long_name), 'x', TJ_REVIEW_MAX_STRING + 1);
	strcpy(long_name + 52 + TJ_REVIEW_MAX_STRING + 1, "\"}}}");
	c = cJSON_Parse(long_name);
	assert_non_null(c);
	assert_int_equal(tj_token_review_parse(c, &tr), -E2BIG);

	cJSON_Delete(a);
	cJSON_Delete(b);
	cJSON_Delete(c);
	free(at);
	free(over);
	free(long_name);
}

static void test_access_review_body(void **state)
{
	char *groups[] = { "system:serviceaccounts", "system:authenticated" };
	cJSON *extra = cJSON_Parse("{\"k\":[\"v\"]}");
	struct tj_review_user u = {
		.name = "system:serviceaccount:mon:prometheus",
		.uid = "8b1e",
		.groups = groups,
		.n_groups = 2,
		.extra = extra,
	};
	struct tj_review_user bare = { .name = "alice", .uid = "" };
	cJSON *o = tj_access_review_new(&u, "get", "/metrics");
	char *s = print(o);

	assert_string_equal(
	        s, "{\"apiVersion\":\"authorization.k8s.io/v1\",\"kind\":\"SubjectAccessReview\","
	           "\"spec\":{\"user\":\"system:serviceaccount:mon:prometheus\",\"uid\":\"8b1e\","
	           "\"groups\":[\"system:serviceaccounts\",\"system:authenticated\"],"
	           "\"extra\":{\"k\":[\"v\"]},"
	           "\"nonResourceAttributes\":{\"path\":\"/metrics\",\"verb\":\"get\"}}}");
	free(s);
	cJSON_Delete(o);

	o = tj_access_review_new(&bare, "head", "/x");
	s = print(o);
	assert_string_equal(
	        s, "{\"apiVersion\":\"authorization.k8s.io/v1\",\"kind\":\"SubjectAccessReview\","
	           "\"spec\":{\"user\":\"alice\","
	           "\"nonResourceAttributes\":{\"path\":\"/x\",\"verb\":\"head\"}}}");
	free(s);
	cJSON_Delete(o);
	cJSON_Delete(extra);
}

struct access_case {
	const char *name;
	const char *body;
	int want_rc;
	bool allowed, denied;
	const char *reason, *error;
};

static const struct access_case access_cases[] = {
	{ .name = "allowed by RBAC",
	  .body = "{\"kind\":\"SubjectAccessReview\",\"status\":{\"allowed\":true,\"reason\":"
	          "\"RBAC: allowed by ClusterRoleBinding \\\"prom\\\" of ClusterRole "
	          "\\\"metrics-reader\\\" to ServiceAccount \\\"prometheus/mon\\\"\"}}",
	  .allowed = true,
	  .reason = "RBAC: allowed by ClusterRoleBinding \"prom\" of ClusterRole "
	            "\"metrics-reader\" to ServiceAccount \"prometheus/mon\"",
	  .error = "" },
	{ .name = "no opinion",
	  .body = "{\"status\":{\"allowed\":false}}",
	  .reason = "",
	  .error = "" },
	{ .name = "allowed absent", .body = "{\"status\":{}}", .reason = "", .error = "" },
	{ .name = "denied outright",
	  .body = "{\"status\":{\"allowed\":false,\"denied\":true,\"reason\":\"no\"}}",
	  .denied = true,
	  .reason = "no",
	  .error = "" },
	{ .name = "allowed and denied: a no",
	  .body = "{\"status\":{\"allowed\":true,\"denied\":true}}",
	  .denied = true,
	  .reason = "",
	  .error = "" },
	{ .name = "an evaluation error",
	  .body = "{\"status\":{\"allowed\":false,\"evaluationError\":\"boom\"}}",
	  .reason = "",
	  .error = "boom" },
	{ .name = "no status", .body = "{}", .want_rc = -EBADMSG },
	{ .name = "allowed of the wrong type",
	  .body = "{\"status\":{\"allowed\":1}}",
	  .want_rc = -EBADMSG },
	{ .name = "reason of the wrong type",
	  .body = "{\"status\":{\"allowed\":true,\"reason\":[]}}",
	  .want_rc = -EBADMSG },
	{ .name = "a string", .body = "\"allowed\"", .want_rc = -EBADMSG },
};

static void test_access_review_parse(void **state)
{
	for (size_t i = 0; i < sizeof(access_cases) / sizeof(access_cases[0]); i++) {
		const struct access_case *c = &access_cases[i];
		cJSON *body = cJSON_Parse(c->body);
		struct tj_access_review ar = { .allowed = true, .reason = "untouched" };

		print_message("case: %s\n", c->name);
		assert_non_null(body);
		assert_int_equal(tj_access_review_parse(body, &ar), c->want_rc);
		cJSON_Delete(body);
		if (c->want_rc < 0) {
			assert_true(ar.allowed);
			assert_string_equal(ar.reason, "untouched");
			continue;
		}
		assert_int_equal(ar.allowed, c->allowed);
		assert_int_equal(ar.denied, c->denied);
		assert_string_equal(ar.reason, c->reason);
		assert_string_equal(ar.error, c->error);
	}
}

static void test_access_review_reason_truncated(void **state)
{
	char body[1024];
	struct tj_access_review ar;
	cJSON *o;

	snprintf(body, sizeof(body), "{\"status\":{\"allowed\":true,\"reason\":\"%0600d\"}}", 7);
	o = cJSON_Parse(body);
	assert_int_equal(tj_access_review_parse(o, &ar), 0);
	assert_true(ar.allowed);
	assert_int_equal(strlen(ar.reason), sizeof(ar.reason) - 1);
	cJSON_Delete(o);
}

static void test_user_copy(void **state)
{
	char *groups[] = { "g1", "g2" };
	cJSON *extra = cJSON_Parse("{\"k\":[\"v\"]}");
	struct tj_review_user u = { .name = "n", .groups = groups, .n_groups = 2, .extra = extra };
	struct tj_review_user c;

	assert_int_equal(tj_review_user_copy(&u, &c), 0);
	assert_string_equal(c.name, "n");
	assert_string_equal(c.uid, "");
	assert_int_equal(c.n_groups, 2);
	assert_string_equal(c.groups[1], "g2");
	assert_ptr_not_equal(c.extra, extra);
	assert_true(cJSON_Compare(c.extra, extra, true));
	tj_review_user_clear(&c);
	assert_null(c.name);
	assert_int_equal(c.n_groups, 0);
	cJSON_Delete(extra);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bearer_token),
		cmocka_unit_test(test_token_review_body),
		cmocka_unit_test(test_token_review_parse),
		cmocka_unit_test(test_token_review_limits),
		cmocka_unit_test(test_access_review_body),
		cmocka_unit_test(test_access_review_parse),
		cmocka_unit_test(test_access_review_reason_truncated),
		cmocka_unit_test(test_user_copy),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
