#include "cli/slurm_text.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "base/rfc3339.h"
#include "reconcilers/plan/dependency.h"

static const struct {
	const char *letters, *name;
} states[TJ_SLURM_STATE_COUNT] = {
	[TJ_SLURM_PENDING] = { "PD", "PENDING" },
	[TJ_SLURM_RUNNING] = { "R", "RUNNING" },
	[TJ_SLURM_COMPLETING] = { "CG", "COMPLETING" },
	[TJ_SLURM_REQUEUED] = { "RQ", "REQUEUED" },
	[TJ_SLURM_SUSPENDED] = { "S", "SUSPENDED" },
	[TJ_SLURM_COMPLETED] = { "CD", "COMPLETED" },
	[TJ_SLURM_FAILED] = { "F", "FAILED" },
	[TJ_SLURM_TIMEOUT] = { "TO", "TIMEOUT" },
	[TJ_SLURM_CANCELLED] = { "CA", "CANCELLED" },
	[TJ_SLURM_PREEMPTED] = { "PR", "PREEMPTED" },
};

enum tj_slurm_state tj_slurm_state_of(const struct tj_trainjob *job, bool live_pods)
{
	const struct tj_trainjob_status *st = &job->status;

	if (job->deletion_time)
		return TJ_SLURM_CANCELLED;
	switch (st->state) {
	case TJ_STATE_RUNNING:
		return strcmp(st->reason, "PodsCompleting") == 0 ? TJ_SLURM_COMPLETING
		                                                 : TJ_SLURM_RUNNING;
	case TJ_STATE_RESTARTING:
		return TJ_SLURM_REQUEUED;
	case TJ_STATE_SUSPENDED:
		return TJ_SLURM_SUSPENDED;
	case TJ_STATE_COMPLETE:
		return live_pods ? TJ_SLURM_COMPLETING : TJ_SLURM_COMPLETED;
	case TJ_STATE_FAILED:
		/* A failed job's pods are being deleted: it completes until they are gone. */
		if (live_pods)
			return TJ_SLURM_COMPLETING;
		return strcmp(st->reason, "DeadlineExceeded") == 0 ? TJ_SLURM_TIMEOUT
		                                                   : TJ_SLURM_FAILED;
	case TJ_STATE_QUEUED:
		/* Back in the queue after a preemption, until it runs again. */
		return st->preemptions > 0 && !st->start_time ? TJ_SLURM_PREEMPTED
		                                              : TJ_SLURM_PENDING;
	case TJ_STATE_NONE:
	case TJ_STATE_PENDING:
	case TJ_STATE_COUNT:
		break;
	}
	return TJ_SLURM_PENDING;
}

bool tj_slurm_state_waiting(enum tj_slurm_state s)
{
	return s == TJ_SLURM_PENDING || s == TJ_SLURM_PREEMPTED;
}

bool tj_slurm_in_queue(const struct tj_trainjob *job)
{
	const struct tj_trainjob_status *st = &job->status;

	if (job->deletion_time || st->start_time || job->suspend || !tj_trainjob_is_ours(job))
		return false;
	if (st->state != TJ_STATE_NONE && st->state != TJ_STATE_QUEUED)
		return false;
	return strcmp(st->reason, TJ_REASON_HELD) != 0 &&
	       strcmp(st->reason, TJ_REASON_DEPENDENCY) != 0 &&
	       strcmp(st->reason, TJ_REASON_DEPENDENCY_NEVER) != 0;
}

const char *tj_slurm_state_letters(enum tj_slurm_state s)
{
	return states[s].letters;
}

const char *tj_slurm_state_name(enum tj_slurm_state s)
{
	return states[s].name;
}

bool tj_slurm_state_finished(enum tj_slurm_state s)
{
	return s == TJ_SLURM_COMPLETED || s == TJ_SLURM_FAILED || s == TJ_SLURM_TIMEOUT ||
	       s == TJ_SLURM_CANCELLED;
}

int tj_slurm_state_parse(const char *s, enum tj_slurm_state *ret)
{
	for (int i = 0; i < TJ_SLURM_STATE_COUNT; i++)
		if (strcasecmp(s, states[i].letters) == 0 || strcasecmp(s, states[i].name) == 0) {
			*ret = (enum tj_slurm_state)i;
			return 0;
		}
	return -EINVAL;
}

void tj_slurm_duration(int64_t seconds, char *buf, size_t size)
{
	long long s = seconds > 0 ? seconds : 0;
	long long d = s / 86400, h = s % 86400 / 3600, m = s % 3600 / 60;

	if (d)
		snprintf(buf, size, "%lld-%02lld:%02lld:%02lld", d, h, m, s % 60);
	else if (h)
		snprintf(buf, size, "%lld:%02lld:%02lld", h, m, s % 60);
	else
		snprintf(buf, size, "%lld:%02lld", m, s % 60);
}

void tj_slurm_time(int64_t t, char *buf, size_t size)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (!t || !gmtime_r(&tt, &tm)) {
		snprintf(buf, size, "N/A");
		return;
	}
	strftime(buf, size, "%Y-%m-%dT%H:%M:%S", &tm);
}

/* A name split into the part before its final number and that number (-1: none). */
struct host {
	const char *name;
	size_t prefix_len;
	long number;
	int digits; /* of the number as written, to keep leading zeros */
};

static void split(const char *name, struct host *h)
{
	size_t len = strlen(name), i = len;

	while (i > 0 && isdigit((unsigned char)name[i - 1]))
		i--;
	h->name = name;
	h->prefix_len = i;
	h->number = i < len && len - i <= 9 ? strtol(name + i, NULL, 10) : -1;
	h->digits = (int)(len - i);
	if (h->number < 0)
		h->prefix_len = len;
}

static int host_cmp(const void *a, const void *b)
{
	const struct host *x = a, *y = b;
	size_t n = x->prefix_len < y->prefix_len ? x->prefix_len : y->prefix_len;
	int c = strncmp(x->name, y->name, n);

	if (c)
		return c;
	if (x->prefix_len != y->prefix_len)
		return x->prefix_len < y->prefix_len ? -1 : 1;
	if (x->digits != y->digits)
		return x->digits < y->digits ? -1 : 1;
	return x->number < y->number ? -1 : x->number > y->number;
}

static bool same_group(const struct host *a, const struct host *b)
{
	return a->number >= 0 && b->number >= 0 && a->prefix_len == b->prefix_len &&
	       a->digits == b->digits && strncmp(a->name, b->name, a->prefix_len) == 0;
}

struct out {
	char *buf;
	size_t size, len;
	bool cut;
};

static void put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->cut)
		return;
	va_start(ap, fmt);
	n = vsnprintf(o->buf + o->len, o->size - o->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= o->size - o->len) {
		o->cut = true;
		if (o->size >= 4)
			snprintf(o->buf + o->size - 4, 4, "...");
		return;
	}
	o->len += (size_t)n;
}

int tj_slurm_hostlist(const char *const *names, size_t n, char *buf, size_t size)
{
	struct host *hosts;
	struct out o = { buf, size, 0, false };
	size_t i = 0, k = 0;

	if (size == 0)
		return -ENOSPC;
	buf[0] = '\0';
	if (n == 0)
		return 0;
	hosts = calloc(n, sizeof(*hosts));
	if (!hosts)
		return -ENOMEM;
	for (size_t j = 0; j < n; j++)
		split(names[j], &hosts[j]);
	qsort(hosts, n, sizeof(*hosts), host_cmp);
	/* Duplicates (two ranks on one node) count once. */
	for (size_t j = 0; j < n; j++)
		if (k == 0 || strcmp(hosts[k - 1].name, hosts[j].name) != 0)
			hosts[k++] = hosts[j];
	while (i < k) {
		size_t end = i + 1;

		while (end < k && same_group(&hosts[i], &hosts[end]))
			end++;
		put(&o, "%s", i ? "," : "");
		if (end - i == 1) {
			put(&o, "%s", hosts[i].name);
		} else {
			put(&o, "%.*s[", (int)hosts[i].prefix_len, hosts[i].name);
			for (size_t r = i; r < end;) {
				size_t last = r;

				while (last + 1 < end &&
				       hosts[last + 1].number == hosts[last].number + 1)
					last++;
				put(&o, "%s%0*ld", r > i ? "," : "", hosts[r].digits,
				    hosts[r].number);
				if (last > r)
					put(&o, "-%0*ld", hosts[last].digits, hosts[last].number);
				r = last + 1;
			}
			put(&o, "]");
		}
		i = end;
	}
	free(hosts);
	return o.cut ? -ENOSPC : 0;
}

static int64_t midnight(int64_t now)
{
	return now - ((now % 86400) + 86400) % 86400;
}

/* Reads exactly n digits. */
static bool digits(const char *s, int n, int *ret)
{
	int v = 0;

	for (int i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return false;
		v = v * 10 + (s[i] - '0');
	}
	*ret = v;
	return true;
}

/* "HH:MM[:SS]" at the start of s, with nothing after it. */
static bool clock_of(const char *s, int64_t *ret)
{
	int h, m, sec = 0;

	if (!digits(s, 2, &h) || s[2] != ':' || !digits(s + 3, 2, &m))
		return false;
	if (s[5] == ':') {
		if (!digits(s + 6, 2, &sec) || s[8])
			return false;
	} else if (s[5]) {
		return false;
	}
	if (h > 23 || m > 59 || sec > 59)
		return false;
	*ret = h * 3600 + m * 60 + sec;
	return true;
}

static int date_at(int year, int month, int day, int64_t *ret)
{
	char iso[64];

	snprintf(iso, sizeof(iso), "%04d-%02d-%02dT00:00:00Z", year, month, day);
	return tj_rfc3339_parse(iso, ret);
}

static int relative(const char *s, int64_t now, int64_t *ret)
{
	static const struct {
		const char *unit;
		int64_t seconds;
	} units[] = { { "", 1 },         { "seconds", 1 },  { "minutes", 60 },
		      { "hours", 3600 }, { "days", 86400 }, { "weeks", 604800 } };
	char *end;
	long long n;

	if (!*s) {
		*ret = now;
		return 0;
	}
	if (*s != '-' || !isdigit((unsigned char)s[1]))
		return -EINVAL;
	errno = 0;
	n = strtoll(s + 1, &end, 10);
	if (errno || n > 100LL * 365 * 86400)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strcasecmp(end, units[i].unit) == 0) {
			*ret = now - n * units[i].seconds;
			return 0;
		}
	return -EINVAL;
}

int tj_slurm_parse_time(const char *s, int64_t now, int64_t *ret)
{
	int64_t t, clock;
	int y, mo, d;
	size_t len = strlen(s);

	if (strcasecmp(s, "today") == 0 || strcasecmp(s, "midnight") == 0) {
		*ret = midnight(now);
		return 0;
	}
	if (strcasecmp(s, "yesterday") == 0) {
		*ret = midnight(now) - 86400;
		return 0;
	}
	if (strncasecmp(s, "now", 3) == 0)
		return relative(s + 3, now, ret);
	if (tj_rfc3339_parse(s, &t) == 0) {
		*ret = t;
		return 0;
	}
	if (clock_of(s, &clock)) {
		*ret = midnight(now) + clock;
		return 0;
	}
	if (len >= 10 && digits(s, 4, &y) && s[4] == '-' && digits(s + 5, 2, &mo) && s[7] == '-' &&
	    digits(s + 8, 2, &d)) {
		if (date_at(y, mo, d, &t) < 0)
			return -EINVAL;
		if (len == 10) {
			*ret = t;
			return 0;
		}
		if ((s[10] != 'T' && s[10] != 't') || !clock_of(s + 11, &clock))
			return -EINVAL;
		*ret = t + clock;
		return 0;
	}
	if ((len == 4 || len == 6) && digits(s, 2, &mo) && digits(s + 2, 2, &d)) {
		time_t tt = (time_t)now;
		struct tm tm;

		if (!gmtime_r(&tt, &tm))
			return -EINVAL;
		y = tm.tm_year + 1900;
		if (len == 6) {
			if (!digits(s + 4, 2, &y))
				return -EINVAL;
			y += 2000;
		}
		return date_at(y, mo, d, ret);
	}
	return -EINVAL;
}

void tj_slurm_exit_code(int exit_code, char *buf, size_t size)
{
	if (exit_code > 128 && exit_code < 128 + 65)
		snprintf(buf, size, "0:%d", exit_code - 128);
	else
		snprintf(buf, size, "%d:0", exit_code > 0 ? exit_code : 0);
}

const char *tj_slurm_partition(const struct tj_trainjob *job, const char *annotation)
{
	const char *rt = job->runtime_name ? job->runtime_name : "";

	if (annotation && *annotation)
		return annotation;
	return strncmp(rt, "torch-", 6) == 0 && rt[6] ? rt + 6 : rt;
}
