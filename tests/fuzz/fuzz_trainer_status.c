/* libFuzzer target: what a pod sends the trainer status server, on arbitrary bytes: the path,
 * the body, and a TokenReview's user. Invariants: a path that parses is exactly the path of
 * the names it gives; a body that parses gives a trainerStatus of the four fields within the
 * CRD's limits, which makes a patch. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "reconcilers/trainer_status.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_path(const char *text)
{
	char ns[64], name[64], again[TJ_TRAINER_STATUS_PATH_MAX];

	if (tj_trainer_status_path_parse(text, ns, name) < 0)
		return;
	tj_trainer_status_path(ns, name, again);
	if (strcmp(again, text) != 0 || !ns[0] || !name[0])
		abort();
	if (!tj_trainer_status_user_allowed("system:serviceaccount:x:y", "x"))
		abort();
}

static void check_status(const cJSON *status)
{
	const cJSON *p = cJSON_GetObjectItemCaseSensitive(status, "progressPercentage");
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(status, "metrics");
	cJSON *patch;

	if (cJSON_GetArraySize(status) != 4 ||
	    !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(status, "lastUpdatedTime")))
		abort();
	if (!cJSON_IsNull(p) && (!cJSON_IsNumber(p) || p->valuedouble < 0 || p->valuedouble > 100))
		abort();
	if (!cJSON_IsNull(m) &&
	    (!cJSON_IsArray(m) || cJSON_GetArraySize(m) > TJ_TRAINER_STATUS_MAX_METRICS))
		abort();
	patch = tj_trainer_status_patch(status);
	if (!patch)
		abort();
	cJSON_Delete(patch);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	struct tj_problem why;
	cJSON *status = NULL;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	check_path(text);
	tj_trainer_status_user_allowed(text, "team-a");
	if (tj_trainer_status_parse((const char *)data, size, &status, &why) == 0 && status) {
		check_status(status);
		cJSON_Delete(status);
	}
	free(text);
	return 0;
}
