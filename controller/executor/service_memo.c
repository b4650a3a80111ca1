#include "controller/executor/service_memo.h"

#include <string.h>

bool tj_service_memo_has(const struct tj_service_memo *m, const char *uid)
{
	if (!m || !uid || !*uid)
		return false;
	for (unsigned i = 0; i < TJ_SERVICE_MEMO_SIZE; i++)
		if (strcmp(m->uids[i], uid) == 0)
			return true;
	return false;
}

void tj_service_memo_add(struct tj_service_memo *m, const char *uid)
{
	size_t n;

	if (!m || !uid || !*uid || tj_service_memo_has(m, uid))
		return;
	n = strlen(uid);
	if (n >= TJ_SERVICE_MEMO_UID)
		return;
	memcpy(m->uids[m->next], uid, n + 1);
	m->next = (m->next + 1) % TJ_SERVICE_MEMO_SIZE;
}

void tj_service_memo_forget(struct tj_service_memo *m, const char *uid)
{
	if (!m || !uid || !*uid)
		return;
	for (unsigned i = 0; i < TJ_SERVICE_MEMO_SIZE; i++)
		if (strcmp(m->uids[i], uid) == 0)
			m->uids[i][0] = '\0';
}
