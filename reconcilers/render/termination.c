#include "reconcilers/render/termination.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "base/utf8.h"
#include "reconcilers/json.h"

int tj_termination_policy_default(cJSON *spec)
{
	cJSON *c;

	cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(spec, "containers"))
	{
		if (!cJSON_IsObject(c) ||
		    cJSON_GetObjectItemCaseSensitive(c, "terminationMessagePolicy"))
			continue;
		if (tj_json_set_string(c, "terminationMessagePolicy", "FallbackToLogsOnError") < 0)
			return -ENOMEM;
	}
	return 0;
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

void tj_termination_append(char *buf, size_t size, const char *sep, const char *message)
{
	size_t used = strnlen(buf, size), len, room, at, n;

	if (!message || used + 1 >= size)
		return;
	len = strlen(message);
	while (len > 0 && is_space(message[len - 1]))
		len--;
	room = size - 1 - used;
	if (len == 0 || strlen(sep) >= room)
		return;
	room -= strlen(sep);
	at = tj_utf8_tail(message, len, room);
	if (at > 0) {
		/* Cut inside a line: begin at the next whole line, if the tail has one. */
		const char *nl = memchr(message + at, '\n', len - at);

		if (message[at - 1] != '\n' && nl && nl + 1 < message + len)
			at = (size_t)(nl + 1 - message);
	}
	if (at == len)
		return;
	memcpy(buf + used, sep, strlen(sep));
	used += strlen(sep);
	while (at < len) {
		n = tj_utf8_sequence(message + at, len - at);
		if (n == 0) {
			buf[used++] = '?';
			at++;
			continue;
		}
		memcpy(buf + used, message + at, n);
		used += n;
		at += n;
	}
	buf[used] = '\0';
}
