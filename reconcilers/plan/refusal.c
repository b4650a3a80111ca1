#include "reconcilers/plan/refusal.h"

#include <errno.h>
#include <string.h>

#include "base/utf8.h"
#include "reconcilers/json.h"
#include "reconcilers/plan/plan_internal.h"

/* What the API server's namespace lifecycle admission says when the namespace is being
 * deleted (its Status also carries the cause NamespaceTerminating). */
#define NAMESPACE_TERMINATING "because it is being terminated"

enum tj_refusal tj_refusal_classify(long http_code, const char *message)
{
	switch (http_code) {
	case 403:
		if (message && strstr(message, NAMESPACE_TERMINATING))
			return TJ_REFUSAL_NAMESPACE_TERMINATING;
		return TJ_REFUSAL_RETRY;
	case 400:
	case 422:
		return TJ_REFUSAL_PERMANENT;
	default:
		return TJ_REFUSAL_NONE;
	}
}

/* Copies the start of message into buf (size > 0) whole sequences at a time; a byte that
 * is not UTF-8 becomes '?', as the API server would refuse the status otherwise. */
static void copy_utf8(char *buf, size_t size, const char *message)
{
	size_t len = strlen(message), i = 0, k = 0;

	while (i < len) {
		size_t n = tj_utf8_sequence(message + i, len - i);

		if (n == 0) {
			if (k + 1 >= size)
				break;
			buf[k++] = '?';
			i++;
			continue;
		}
		if (k + n >= size)
			break;
		memcpy(buf + k, message + i, n);
		k += n;
		i += n;
	}
	buf[k] = '\0';
}

void tj_refusal_event_message(const char *message, char buf[static TJ_MESSAGE_MAX])
{
	static const char prefix[] = "Error creating: ";

	memcpy(buf, prefix, sizeof(prefix));
	copy_utf8(buf + sizeof(prefix) - 1, TJ_MESSAGE_MAX - (sizeof(prefix) - 1),
	          message ? message : "");
}

int tj_refusal_status_patch(enum tj_refusal kind, const char *message, cJSON **ret)
{
	char text[TJ_MESSAGE_MAX];
	cJSON *body, *status;

	if (kind != TJ_REFUSAL_RETRY && kind != TJ_REFUSAL_PERMANENT)
		return -EINVAL;
	copy_utf8(text, sizeof(text),
	          message && *message ? message
	                              : "the API server refused "
	                                "the create");
	body = cJSON_CreateObject();
	status = tj_json_object(body, "status");
	if (!status ||
	    tj_json_set_string(status, "state",
	                       tj_state_name(kind == TJ_REFUSAL_PERMANENT ? TJ_STATE_FAILED
	                                                                  : TJ_STATE_PENDING)) <
	            0 ||
	    tj_json_set_string(status, "reason", TJ_REASON_FAILED_CREATE) < 0 ||
	    tj_json_set_string(status, "message", text) < 0) {
		cJSON_Delete(body);
		return -ENOMEM;
	}
	*ret = body;
	return 0;
}

bool tj_planner_refused(struct planner *p)
{
	const struct tj_trainjob_status *st = &p->job->status;

	if (strcmp(st->reason, TJ_REASON_FAILED_CREATE) != 0)
		return false;
	if (st->state != TJ_STATE_FAILED) {
		requeue(p, TJ_REFUSAL_RETRY_SECONDS);
		return false;
	}
	tj_planner_fail(p, TJ_REASON_FAILED_CREATE, st->message);
	return true;
}
