#include "controller/http/health.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAME_MAX_LEN   63
#define REASON_MAX_LEN 256

struct check {
	char name[NAME_MAX_LEN + 1];
	tj_health_check_fn fn;
	void *userdata;
};

struct check_set {
	struct check checks[TJ_HEALTH_MAX_CHECKS];
	size_t n;
};

struct tj_health {
	struct check_set sets[2]; /* by enum tj_health_kind */
};

static const char *const kind_paths[] = {
	[TJ_HEALTHZ] = "/healthz",
	[TJ_READYZ] = "/readyz",
};

int tj_health_new(struct tj_health **ret)
{
	struct tj_health *h = calloc(1, sizeof(*h));

	if (!h)
		return -ENOMEM;
	*ret = h;
	return 0;
}

struct tj_health *tj_health_free(struct tj_health *health)
{
	free(health);
	return NULL;
}

static bool valid_check_name(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > NAME_MAX_LEN)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '-' || c == '_' || c == '.'))
			return false;
	}
	return true;
}

int tj_health_add(struct tj_health *health, enum tj_health_kind kind, const char *name,
                  tj_health_check_fn check, void *userdata)
{
	struct check_set *set;
	size_t at;

	if ((kind != TJ_HEALTHZ && kind != TJ_READYZ) || !check || !valid_check_name(name))
		return -EINVAL;
	set = &health->sets[kind];
	/* Kept sorted by name: the probe output lists checks in name order. */
	for (at = 0; at < set->n; at++) {
		int c = strcmp(set->checks[at].name, name);

		if (c == 0)
			return -EEXIST;
		if (c > 0)
			break;
	}
	if (set->n >= TJ_HEALTH_MAX_CHECKS)
		return -E2BIG;
	memmove(&set->checks[at + 1], &set->checks[at], (set->n - at) * sizeof(set->checks[0]));
	set->checks[at] = (struct check){ .fn = check, .userdata = userdata };
	strcpy(set->checks[at].name, name);
	set->n++;
	return 0;
}

static int ping(void *userdata, char *reason, size_t reason_len)
{
	return 0;
}

static const struct check ping_check = { .name = "ping", .fn = ping };

/* A text that grows; every piece is bounded by the check count, so the only error is
 * -ENOMEM. */
struct out {
	char *buf; /* owned */
	size_t len;
	int error;
};

static void out_printf(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void out_printf(struct out *o, const char *fmt, ...)
{
	va_list ap;
	char piece[REASON_MAX_LEN + 2 * NAME_MAX_LEN + 64];
	char *grown;
	int n;

	if (o->error)
		return;
	va_start(ap, fmt);
	n = vsnprintf(piece, sizeof(piece), fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if ((size_t)n >= sizeof(piece))
		n = sizeof(piece) - 1;
	grown = realloc(o->buf, o->len + (size_t)n + 1);
	if (!grown) {
		o->error = -ENOMEM;
		return;
	}
	o->buf = grown;
	memcpy(o->buf + o->len, piece, (size_t)n + 1);
	o->len += (size_t)n;
}

static int finish(struct out *o, unsigned status, struct tj_health_reply *ret)
{
	out_printf(o, "%s", "");
	if (o->error) {
		free(o->buf);
		return o->error;
	}
	*ret = (struct tj_health_reply){ .status = status, .body = o->buf, .len = o->len };
	return 0;
}

static int run_check(const struct check *c, char *reason, size_t reason_len)
{
	int r;

	reason[0] = '\0';
	r = c->fn(c->userdata, reason, reason_len);
	reason[reason_len - 1] = '\0';
	if (r < 0 && reason[0] == '\0')
		snprintf(reason, reason_len, "%s", strerror(-r));
	return r;
}

static bool is_excluded(const char *name, const char *const *excludes, size_t n_excludes,
                        bool *matched)
{
	bool found = false;

	for (size_t i = 0; i < n_excludes && i < TJ_HEALTH_MAX_EXCLUDES; i++)
		if (excludes[i] && strcmp(excludes[i], name) == 0) {
			matched[i] = true;
			found = true;
		}
	return found;
}

static int handle_all(const struct check *checks, size_t n, bool verbose,
                      const char *const *excludes, size_t n_excludes, struct tj_health_reply *ret)
{
	bool matched[TJ_HEALTH_MAX_EXCLUDES] = { false };
	char reason[REASON_MAX_LEN];
	struct out o = { 0 };
	bool failed = false, first_unmatched = true;

	for (size_t i = 0; i < n; i++) {
		const struct check *c = &checks[i];

		if (is_excluded(c->name, excludes, n_excludes, matched)) {
			out_printf(&o, "[+]%s excluded: ok\n", c->name);
			continue;
		}
		if (run_check(c, reason, sizeof(reason)) < 0) {
			/* The reason stays out of the aggregate, which anyone who can reach the
			 * port may read; /readyz/NAME gives it. */
			out_printf(&o, "[-]%s failed: reason withheld\n", c->name);
			failed = true;
		} else {
			out_printf(&o, "[+]%s ok\n", c->name);
		}
	}
	for (size_t i = 0; i < n_excludes && i < TJ_HEALTH_MAX_EXCLUDES; i++) {
		bool dup = false;

		if (matched[i] || !excludes[i])
			continue;
		for (size_t j = 0; j < i; j++)
			dup = dup || (excludes[j] && strcmp(excludes[j], excludes[i]) == 0);
		if (dup)
			continue;
		out_printf(&o, "%s\"%.*s\"",
		           first_unmatched ? "warn: some health checks cannot be excluded: "
		                             "no matches for "
		                           : ", ",
		           NAME_MAX_LEN, excludes[i]);
		first_unmatched = false;
	}
	if (!first_unmatched)
		out_printf(&o, "\n");
	if (failed) {
		out_printf(&o, "healthz check failed\n");
		return finish(&o, 500, ret);
	}
	if (!verbose) {
		free(o.buf);
		o = (struct out){ 0 };
		out_printf(&o, "ok");
		return finish(&o, 200, ret);
	}
	out_printf(&o, "healthz check passed\n");
	return finish(&o, 200, ret);
}

int tj_health_handle(struct tj_health *health, const char *path, bool verbose,
                     const char *const *excludes, size_t n_excludes, struct tj_health_reply *ret)
{
	char reason[REASON_MAX_LEN];
	struct out o = { 0 };

	for (size_t k = 0; k < sizeof(kind_paths) / sizeof(kind_paths[0]); k++) {
		const struct check_set *set = &health->sets[k];
		const struct check *checks = set->n ? set->checks : &ping_check;
		size_t n = set->n ? set->n : 1, plen = strlen(kind_paths[k]);
		const char *sub;

		if (strncmp(path, kind_paths[k], plen) != 0 || (path[plen] && path[plen] != '/'))
			continue;
		sub = path[plen] ? path + plen + 1 : "";
		if (*sub == '\0')
			return handle_all(checks, n, verbose, excludes, n_excludes, ret);
		for (size_t i = 0; i < n; i++) {
			if (strcmp(checks[i].name, sub) != 0)
				continue;
			if (run_check(&checks[i], reason, sizeof(reason)) < 0) {
				out_printf(&o, "internal server error: %s\n", reason);
				return finish(&o, 500, ret);
			}
			out_printf(&o, "ok");
			return finish(&o, 200, ret);
		}
		break;
	}
	out_printf(&o, "404 page not found\n");
	return finish(&o, 404, ret);
}
