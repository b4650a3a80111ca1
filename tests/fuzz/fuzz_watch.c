/* libFuzzer target: the watch-stream framer fed in chunks whose sizes come from the input. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kube/watch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int on_event(struct tj_watch_event *ev, void *userdata)
{
	size_t *n = userdata;

	/* Take every other object, as a caller that keeps it would. */
	if (++*n % 2 == 0) {
		cJSON_Delete(ev->object);
		ev->object = NULL;
	}
	return ev->type == TJ_WATCH_ERROR && tj_status_is_expired(&ev->status) ? -EPIPE : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tj_watch_framer f;
	size_t events = 0, off = 1;
	int r = 0;

	if (size < 1)
		return 0;
	/* The first byte picks the chunk size; a small event limit exercises -EMSGSIZE. */
	tj_watch_framer_init(&f, 2048);
	while (off < size && r == 0) {
		size_t chunk = (size_t)(data[0] % 64) + 1;

		if (chunk > size - off)
			chunk = size - off;
		r = tj_watch_framer_feed(&f, (const char *)data + off, chunk, on_event, &events);
		off += chunk;
	}
	if (r == 0)
		(void)tj_watch_framer_finish(&f, on_event, &events);
	tj_watch_framer_clear(&f);
	return 0;
}
