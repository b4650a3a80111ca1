#include "controller/log/log.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/utf8.h"

static enum tj_log_level current_level = TJ_LOG_INFO;
static tj_log_sink_fn current_sink;
static void *current_sink_userdata;
static tj_log_clock_fn current_clock;

/* Room kept at the end of a line for ,"truncated":true}\n. */
#define TRAILER_ROOM 24

struct line {
	char *buf;
	size_t len;
	size_t cap; /* where fields must stop; the trailer may use the room after it */
	bool overflow;
};

static void put(struct line *l, const char *s, size_t n)
{
	if (l->overflow || n > l->cap - l->len) {
		l->overflow = true;
		return;
	}
	memcpy(l->buf + l->len, s, n);
	l->len += n;
}

static void puts_(struct line *l, const char *s)
{
	put(l, s, strlen(s));
}

/* A JSON string. Invalid UTF-8 becomes U+FFFD so that every line stays valid JSON, whatever
 * bytes an API object carried. */
static void put_string(struct line *l, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s);

	put(l, "\"", 1);
	for (size_t i = 0; i < n;) {
		unsigned char c = p[i];
		size_t seq;
		char esc[8];

		switch (c) {
		case '"':
			puts_(l, "\\\"");
			i++;
			continue;
		case '\\':
			puts_(l, "\\\\");
			i++;
			continue;
		case '\n':
			puts_(l, "\\n");
			i++;
			continue;
		case '\r':
			puts_(l, "\\r");
			i++;
			continue;
		case '\t':
			puts_(l, "\\t");
			i++;
			continue;
		default:
			break;
		}
		if (c < 0x20) {
			snprintf(esc, sizeof(esc), "\\u%04x", c);
			puts_(l, esc);
			i++;
			continue;
		}
		seq = tj_utf8_sequence(s + i, n - i);
		if (seq == 0) {
			puts_(l, "\\ufffd");
			i++;
			continue;
		}
		put(l, s + i, seq);
		i += seq;
	}
	put(l, "\"", 1);
}

static void put_key(struct line *l, const char *key)
{
	put(l, ",", 1);
	put_string(l, key);
	put(l, ":", 1);
}

/* The shortest text that reads back as the same double; JSON has no NaN or infinities, so
 * those are written as null. */
static void put_double(struct line *l, double d)
{
	char num[32];

	if (!isfinite(d)) {
		puts_(l, "null");
		return;
	}
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(num, sizeof(num), "%.*g", prec, d);
		if (strtod(num, NULL) == d)
			break;
	}
	puts_(l, num);
}

static void put_field(struct line *l, const struct tj_log_field *f)
{
	char num[32];

	put_key(l, f->key);
	switch (f->type) {
	case TJ_LOG_FIELD_STR:
		if (f->v.s)
			put_string(l, f->v.s);
		else
			puts_(l, "null");
		break;
	case TJ_LOG_FIELD_INT:
		snprintf(num, sizeof(num), "%lld", f->v.i);
		puts_(l, num);
		break;
	case TJ_LOG_FIELD_DOUBLE:
		put_double(l, f->v.d);
		break;
	case TJ_LOG_FIELD_BOOL:
		puts_(l, f->v.b ? "true" : "false");
		break;
	case TJ_LOG_FIELD_ERRNO:
		put_string(l, strerror((int)(f->v.i < 0 ? -f->v.i : f->v.i)));
		break;
	case TJ_LOG_FIELD_END:
		break;
	}
}

static void put_timestamp(struct line *l, int64_t now_ms)
{
	time_t secs = (time_t)(now_ms / 1000);
	int ms = (int)(now_ms % 1000);
	struct tm tm;
	char ts[80];

	if (ms < 0) {
		ms += 1000;
		secs--;
	}
	gmtime_r(&secs, &tm);
	snprintf(ts, sizeof(ts), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
	         tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
	put_string(l, ts);
}

static size_t format_line(char *buf, size_t size, int64_t now_ms, enum tj_log_level level,
                          const char *logger, const char *msg, const struct tj_log_field *fields)
{
	struct line l = { .buf = buf, .cap = size - TRAILER_ROOM };
	size_t mark;

	puts_(&l, "{\"ts\":");
	put_timestamp(&l, now_ms);
	puts_(&l, ",\"level\":");
	put_string(&l, tj_log_level_name(level));
	puts_(&l, ",\"logger\":");
	put_string(&l, logger ? logger : "");
	puts_(&l, ",\"msg\":");
	mark = l.len;
	put_string(&l, msg ? msg : "");
	if (l.overflow) {
		/* The message alone is too long: keep a marker rather than nothing. */
		l.len = mark;
		l.overflow = false;
		put_string(&l, "(message too long)");
	}
	for (const struct tj_log_field *f = fields; f && f->key; f++) {
		mark = l.len;
		put_field(&l, f);
		if (l.overflow) {
			l.len = mark;
			break;
		}
	}
	l.cap = size;
	if (l.overflow) {
		l.overflow = false;
		puts_(&l, ",\"truncated\":true");
	}
	puts_(&l, "}\n");
	return l.len;
}

static int64_t realtime_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void write_stderr(const char *line, size_t len)
{
	while (len > 0) {
		ssize_t n = write(STDERR_FILENO, line, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return; /* nowhere left to report it */
		line += n;
		len -= (size_t)n;
	}
}

void tj_log_fields(enum tj_log_level level, const char *logger, const char *msg,
                   const struct tj_log_field *fields)
{
	char buf[TJ_LOG_LINE_MAX];
	int64_t now_ms;
	size_t len;

	if (!tj_log_enabled(level))
		return;
	now_ms = current_clock ? current_clock() : realtime_ms();
	len = format_line(buf, sizeof(buf), now_ms, level, logger, msg, fields);
	if (current_sink)
		current_sink(current_sink_userdata, buf, len);
	else
		write_stderr(buf, len);
}

void tj_log_set_level(enum tj_log_level level)
{
	current_level = level;
}

enum tj_log_level tj_log_get_level(void)
{
	return current_level;
}

bool tj_log_enabled(enum tj_log_level level)
{
	return level <= current_level;
}

static const char *const level_names[] = {
	[TJ_LOG_ERROR] = "error",
	[TJ_LOG_WARN] = "warn",
	[TJ_LOG_INFO] = "info",
	[TJ_LOG_DEBUG] = "debug",
};

const char *tj_log_level_name(enum tj_log_level level)
{
	if ((size_t)level < sizeof(level_names) / sizeof(level_names[0]))
		return level_names[level];
	return "unknown";
}

int tj_log_level_parse(const char *text, enum tj_log_level *ret)
{
	char *end;
	long v;

	for (size_t i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++) {
		if (strcmp(text, level_names[i]) == 0) {
			*ret = (enum tj_log_level)i;
			return 0;
		}
	}
	if (strcmp(text, "panic") == 0 || strcmp(text, "dpanic") == 0) {
		*ret = TJ_LOG_ERROR;
		return 0;
	}
	/* zap takes an integer as a verbosity: V(0) is info, V(1) and more are debug. */
	if (text[0] >= '0' && text[0] <= '9') {
		errno = 0;
		v = strtol(text, &end, 10);
		if (*end == '\0' && errno == 0) {
			*ret = v == 0 ? TJ_LOG_INFO : TJ_LOG_DEBUG;
			return 0;
		}
	}
	return -EINVAL;
}

void tj_log_set_sink(tj_log_sink_fn sink, void *userdata)
{
	current_sink = sink;
	current_sink_userdata = userdata;
}

void tj_log_set_clock(tj_log_clock_fn clock)
{
	current_clock = clock;
}
