/* A reflector that is never started, whose store a test (or a benchmark) fills itself, as the
 * reflector would from its lists and watches: its list and watch are never called. Included
 * after <uv.h>. */
#pragma once

#include <errno.h>

#include "informers/reflector.h"

static inline int idle_list(void *ctx, const struct tj_list_options *opts, tj_response_fn fn,
                            void *userdata, void **ret_call)
{
	return -ENOTSUP;
}

static inline int idle_watch(void *ctx, const struct tj_watch_options *opts,
                             tj_watch_event_fn on_event, tj_watch_done_fn on_done, void *userdata,
                             void **ret_call)
{
	return -ENOTSUP;
}

static inline void idle_cancel(void *call)
{
}

static inline int idle_reflector_new(uv_loop_t *loop, const char *name, tj_project_fn project,
                                     const struct tj_store_ops *ops, struct tj_reflector **ret)
{
	const struct tj_reflector_config config = {
		.name = name,
		.lw = { idle_list, idle_cancel, idle_watch, idle_cancel, NULL },
		.project = project,
		.store_ops = ops,
		.seed = 1,
	};

	return tj_reflector_new(loop, &config, ret);
}

/* The store of r, to fill: read-only to all but the reflector, which never runs. */
static inline struct tj_store *idle_reflector_store(const struct tj_reflector *r)
{
	return (struct tj_store *)tj_reflector_store(r);
}
