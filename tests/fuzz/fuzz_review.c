/* libFuzzer target: the answers to a TokenReview and a SubjectAccessReview, and the bearer
 * token of an Authorization header, on arbitrary bytes. Invariants: an authenticated answer
 * has a user within the limits, from whom a SubjectAccessReview can be built; a token is one
 * non-empty word inside the header; an audience is found only in a list of them. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "controller/http/review.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_bearer(const char *text)
{
	size_t len = 0;
	const char *t = tj_bearer_token(text, &len);

	if (!t)
		return;
	if (len == 0 || t < text || t + len > text + strlen(text))
		abort();
	for (size_t i = 0; i < len; i++)
		if (t[i] == ' ' || t[i] == '\t')
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	struct tj_token_review tr;
	struct tj_access_review ar;
	cJSON *body;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	check_bearer(text);
	body = cJSON_ParseWithLength((const char *)data, size);
	if (body && tj_token_review_parse(body, &tr) == 0 && tr.authenticated) {
		cJSON *sar;

		if (!tr.user.name || !tr.user.name[0] || tr.user.n_groups > TJ_REVIEW_MAX_GROUPS)
			abort();
		sar = tj_access_review_new(&tr.user, "get", "/metrics");
		if (!sar)
			abort();
		cJSON_Delete(sar);
		tj_review_user_clear(&tr.user);
	}
	if (body && tj_access_review_parse(body, &ar) == 0 && ar.allowed && ar.denied)
		abort();
	/* Only a string of status.audiences names an audience. */
	if (body && tj_token_review_has_audience(body, "") &&
	    !cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(
	            cJSON_GetObjectItemCaseSensitive(body, "status"), "audiences")))
		abort();
	cJSON_Delete(body);
	free(text);
	return 0;
}
