/* libFuzzer target: the accounting records' reader (reconcilers/usage/accounting.h) on arbitrary
 * text, as a ConfigMap's value may hold anything anyone wrote there. Invariants:
 * - a text longer than TJ_ACCOUNTING_RECORD_MAX is refused;
 * - a record read has a NUL-terminated, non-empty uid and the namespace given;
 * - a record read is also an object (tj_accounting_object), whose TrainJob projection, when
 *   it has a name, builds a record again that reads back to the same uid, deletion time and
 *   GPU-seconds. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reconcilers/usage/accounting.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	struct tj_accounting_entry e, again;
	struct tj_trainjob *job = NULL;
	cJSON *obj;
	char *record;
	int rc = tj_accounting_parse(text, size, "team-a", &e);

	if (size > TJ_ACCOUNTING_RECORD_MAX && rc == 0)
		abort();
	if (rc != 0) {
		if (rc != -EINVAL && rc != -ENOMEM)
			abort();
		return 0;
	}
	if (!e.uid[0] || strlen(e.uid) >= sizeof(e.uid) || strcmp(e.namespace, "team-a") != 0)
		abort();
	obj = tj_accounting_object(text, size);
	if (!obj)
		abort();
	if (tj_trainjob_from_json(obj, &job) == 0 && job->uid && strcmp(job->uid, e.uid) == 0) {
		record = tj_accounting_record(job, e.deleted);
		if (record) {
			if (tj_accounting_parse(record, strlen(record), "team-a", &again) != 0 ||
			    strcmp(again.uid, e.uid) != 0 || again.deleted != e.deleted ||
			    again.gpu_seconds != job->status.gpu_seconds)
				abort();
			free(record);
		}
	}
	tj_trainjob_free(job);
	cJSON_Delete(obj);
	return 0;
}
