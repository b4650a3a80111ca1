/* Structured logs: one JSON object per line on stderr, as zap's production encoder writes them
 * for controller-runtime, so the same log pipelines read both:
 *
 *   {"ts":"2026-11-29T17:50:01.123Z","level":"info","logger":"reconciler","msg":"created pod",
 *    "pod":"train-node-0-3","rank":3}
 *
 * Fields are typed, so numbers stay numbers:
 *
 *   tj_log_info("reconciler", "created pod", TJ_STR("pod", name), TJ_INT("rank", rank));
 *   tj_log_error("kube", "watch failed", TJ_STR("resource", "pods"), TJ_ERR(rc));
 *
 * A field list is checked by the compiler (it is an array of struct tj_log_field). Each line is
 * written with one write(2), so lines never interleave. A line is at most TJ_LOG_LINE_MAX bytes;
 * fields that do not fit are dropped and the line ends with "truncated":true. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TJ_LOG_LINE_MAX 8192

/* Lower is more severe; a message is written when its level <= the runtime level. */
enum tj_log_level {
	TJ_LOG_ERROR,
	TJ_LOG_WARN,
	TJ_LOG_INFO,
	TJ_LOG_DEBUG,
};

enum tj_log_field_type {
	TJ_LOG_FIELD_END, /* terminates a field list (key NULL) */
	TJ_LOG_FIELD_STR,
	TJ_LOG_FIELD_INT,
	TJ_LOG_FIELD_DOUBLE,
	TJ_LOG_FIELD_BOOL,
	TJ_LOG_FIELD_ERRNO, /* a negative errno code, written as its strerror text */
};

struct tj_log_field {
	const char *key;
	enum tj_log_field_type type;
	union {
		const char *s; /* NULL is written as null */
		long long i;
		double d;
		bool b;
	} v;
};

#define TJ_STR(k, val) ((struct tj_log_field){ .key = (k), .type = TJ_LOG_FIELD_STR, .v.s = (val) })
#define TJ_INT(k, val) ((struct tj_log_field){ .key = (k), .type = TJ_LOG_FIELD_INT, .v.i = (val) })
#define TJ_DOUBLE(k, val)                                                                          \
	((struct tj_log_field){ .key = (k), .type = TJ_LOG_FIELD_DOUBLE, .v.d = (val) })
#define TJ_BOOL(k, val)                                                                            \
	((struct tj_log_field){ .key = (k), .type = TJ_LOG_FIELD_BOOL, .v.b = (val) })
/* The field "error" holding the text of a negative errno code. */
#define TJ_ERR(rc)                                                                                 \
	((struct tj_log_field){ .key = "error", .type = TJ_LOG_FIELD_ERRNO, .v.i = (rc) })
#define TJ_LOG_END ((struct tj_log_field){ .key = NULL, .type = TJ_LOG_FIELD_END })

/* Writes one line if level is enabled. fields ends with TJ_LOG_END. */
void tj_log_fields(enum tj_log_level level, const char *logger, const char *msg,
                   const struct tj_log_field *fields);

/* The first variadic argument is the message, the rest are fields. */
#define TJ_LOG_SPLIT_(msg, ...)                                                                    \
	msg, (const struct tj_log_field[])                                                         \
	{                                                                                          \
		__VA_ARGS__                                                                        \
	}
#define tj_log(level, logger, ...)                                                                 \
	tj_log_fields(level, logger, TJ_LOG_SPLIT_(__VA_ARGS__, TJ_LOG_END))
#define tj_log_error(logger, ...) tj_log(TJ_LOG_ERROR, logger, __VA_ARGS__)
#define tj_log_warn(logger, ...)  tj_log(TJ_LOG_WARN, logger, __VA_ARGS__)
#define tj_log_info(logger, ...)  tj_log(TJ_LOG_INFO, logger, __VA_ARGS__)
#define tj_log_debug(logger, ...) tj_log(TJ_LOG_DEBUG, logger, __VA_ARGS__)

/* The runtime level (TJ_LOG_INFO at start). */
void tj_log_set_level(enum tj_log_level level);
enum tj_log_level tj_log_get_level(void);
bool tj_log_enabled(enum tj_log_level level);

/* Parses a level as --log-level and controller-runtime's --zap-log-level take it: "error",
 * "warn", "info", "debug", zap's "dpanic"/"panic" (as error), or a verbosity integer (0 is
 * info, 1 or more is debug). -EINVAL for anything else. */
int tj_log_level_parse(const char *text, enum tj_log_level *ret);

/* "error", "warn", "info" or "debug". */
const char *tj_log_level_name(enum tj_log_level level);

/* Where lines go: write(line, len) gets one complete line ending in '\n'. NULL restores
 * stderr. */
typedef void (*tj_log_sink_fn)(void *userdata, const char *line, size_t len);
void tj_log_set_sink(tj_log_sink_fn sink, void *userdata);

/* The wall clock for "ts", in milliseconds since the Unix epoch. NULL restores
 * CLOCK_REALTIME. */
typedef int64_t (*tj_log_clock_fn)(void);
void tj_log_set_clock(tj_log_clock_fn clock);
