#include "reconcilers/plan/dependency.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/number.h"
#include "reconcilers/admission/admission_text.h"

#define WHERE "metadata.annotations[" TJ_ANNOTATION_DEPENDENCY "]"
#define TYPES "after, afterany, afterok, afternotok or singleton"

static const char *const type_names[] = {
	[TJ_DEPENDENCY_AFTER] = "after",         [TJ_DEPENDENCY_AFTERANY] = "afterany",
	[TJ_DEPENDENCY_AFTEROK] = "afterok",     [TJ_DEPENDENCY_AFTERNOTOK] = "afternotok",
	[TJ_DEPENDENCY_SINGLETON] = "singleton",
};

/* Slurm's types that have no meaning here, and why. */
static const struct {
	const char *word;
	const char *why;
} unsupported[] = {
	{ "aftercorr", "a TrainJob has no array tasks" },
	{ "afterburstbuffer", "there are no burst buffers" },
};

const char *tj_dependency_type_name(enum tj_dependency_type type)
{
	if ((size_t)type >= sizeof(type_names) / sizeof(type_names[0]))
		return "";
	return type_names[type];
}

const char *tj_dependency_singleton_group(const char *job_name, const char *name)
{
	return job_name && *job_name ? job_name : name;
}

/* ---- parsing ---- */

struct parser {
	const char *text;
	size_t pos;
	struct tj_dependency *dep;
	struct tj_problem *why;
};

static bool ends_word(char c)
{
	return c == '\0' || c == ':' || c == ',' || c == '?' || c == '+';
}

static size_t word_length(const char *s)
{
	size_t n = 0;

	while (!ends_word(s[n]))
		n++;
	return n;
}

/* s[0..n) for a message, '?' for anything but printable ASCII (so that the message stays
 * valid UTF-8 and shows no control character), cut to 40 characters. */
static void quote(char out[static 48], const char *s, size_t n)
{
	size_t max = n > 40 ? 37 : n, i;

	for (i = 0; i < max; i++)
		out[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	if (max < n) {
		memcpy(out + i, "...", 3);
		i += 3;
	}
	out[i] = '\0';
}

static int fail_at(struct parser *p, size_t pos, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

/* Fails the parse at the character pos (from 0), with what is wrong there. */
static int fail_at(struct parser *p, size_t pos, const char *fmt, ...)
{
	char what[TJ_MESSAGE_MAX / 2];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return tj_problem_set(p->why, "InvalidSpec", WHERE ": character %zu: %s", pos + 1, what);
}

static bool is_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* A TrainJob name at p->pos: lower-case letters, digits, '-' and '.', beginning and ending
 * with a letter or a digit, as a DNS subdomain. */
static int parse_name(struct parser *p, struct tj_dependency_term *term)
{
	const char *s = p->text + p->pos;
	size_t n = word_length(s);
	char bad[48];

	if (n == 0)
		return fail_at(p, p->pos, "a TrainJob name is missing");
	if (n >= TJ_NAME_MAX)
		return fail_at(p, p->pos, "a TrainJob name has at most %d characters",
		               TJ_NAME_MAX - 1);
	for (size_t i = 0; i < n; i++) {
		if (is_alnum(s[i]) || s[i] == '-' || s[i] == '.')
			continue;
		quote(bad, s + i, 1);
		return fail_at(
		        p, p->pos + i,
		        "'%s' is not allowed in a TrainJob name (lower-case letters, digits, "
		        "'-' and '.')",
		        bad);
	}
	if (!is_alnum(s[0]) || !is_alnum(s[n - 1]))
		return fail_at(p, is_alnum(s[0]) ? p->pos + n - 1 : p->pos,
		               "a TrainJob name begins and ends with a letter or a digit");
	memcpy(term->name, s, n);
	term->name[n] = '\0';
	p->pos += n;
	return 0;
}

/* "+MINUTES" at p->pos, after the name of an after term. */
static int parse_delay(struct parser *p, struct tj_dependency_term *term)
{
	const char *s = p->text + p->pos + 1;
	size_t n = word_length(s);
	long minutes = n ? 0 : -1;
	char shown[48];

	if (term->type != TJ_DEPENDENCY_AFTER)
		return fail_at(p, p->pos, "%s takes no delay: only after does (after:NAME+MINUTES)",
		               tj_dependency_type_name(term->type));
	for (size_t i = 0; i < n && minutes >= 0 && minutes <= TJ_DEPENDENCY_MAX_MINUTES; i++)
		minutes = s[i] >= '0' && s[i] <= '9' ? minutes * 10 + (s[i] - '0') : -1;
	if (minutes < 0 || minutes > TJ_DEPENDENCY_MAX_MINUTES) {
		quote(shown, s, n);
		return fail_at(p, p->pos + 1,
		               "\"%s\" is not a delay in minutes (after:NAME+MINUTES, 0 to %d)",
		               shown, TJ_DEPENDENCY_MAX_MINUTES);
	}
	if (s[n] == '+')
		return fail_at(p, p->pos + 1 + n, "a second delay (one +MINUTES per name)");
	term->minutes = (int)minutes;
	p->pos += 1 + n;
	return 0;
}

/* A new term of type, for the item that begins at the character at. */
static int add_term(struct parser *p, size_t at, enum tj_dependency_type type,
                    struct tj_dependency_term **ret)
{
	if (p->dep->n_terms == TJ_DEPENDENCY_MAX_TERMS)
		return fail_at(p, at, "more than %d dependencies", TJ_DEPENDENCY_MAX_TERMS);
	*ret = &p->dep->terms[p->dep->n_terms++];
	**ret = (struct tj_dependency_term){ .type = type };
	return 0;
}

/* The type of the word s[0..n) at p->pos. 0, or -EINVAL. */
static int parse_type(struct parser *p, const char *s, size_t n, enum tj_dependency_type *ret)
{
	char shown[48];

	if (n == 0)
		return fail_at(p, p->pos, "a dependency is missing (" TYPES ")");
	for (size_t i = 0; i < sizeof(type_names) / sizeof(type_names[0]); i++)
		if (strlen(type_names[i]) == n && memcmp(s, type_names[i], n) == 0) {
			*ret = (enum tj_dependency_type)i;
			return 0;
		}
	quote(shown, s, n);
	for (size_t i = 0; i < sizeof(unsupported) / sizeof(unsupported[0]); i++)
		if (strlen(unsupported[i].word) == n && memcmp(s, unsupported[i].word, n) == 0)
			return fail_at(p, p->pos, "%s is not supported: %s", shown,
			               unsupported[i].why);
	return fail_at(p, p->pos, "\"%s\" is not a dependency type (" TYPES ")", shown);
}

/* One type and its names ("afterok:a:b", "after:a+5", "singleton") at p->pos. */
static int parse_item(struct parser *p)
{
	const char *s = p->text + p->pos;
	size_t n = word_length(s), at = p->pos;
	struct tj_dependency_term *term = NULL;
	enum tj_dependency_type type = TJ_DEPENDENCY_AFTER;

	if (parse_type(p, s, n, &type) < 0)
		return -EINVAL;
	p->pos += n;
	if (type == TJ_DEPENDENCY_SINGLETON) {
		if (s[n] == ':' || s[n] == '+')
			return fail_at(p, p->pos, "singleton takes %s",
			               s[n] == ':' ? "no TrainJob name" : "no delay");
		return add_term(p, at, TJ_DEPENDENCY_SINGLETON, &term);
	}
	if (s[n] != ':')
		return fail_at(p, p->pos, "%s needs a TrainJob name (%s:NAME)", type_names[type],
		               type_names[type]);
	do {
		p->pos++;
		if (add_term(p, p->pos, type, &term) < 0 || parse_name(p, term) < 0 ||
		    (p->text[p->pos] == '+' && parse_delay(p, term) < 0))
			return -EINVAL;
	} while (p->text[p->pos] == ':');
	return 0;
}

int tj_dependency_parse(const char *text, struct tj_dependency *ret, struct tj_problem *why)
{
	struct tj_dependency dep = { 0 };
	struct parser p = { .text = text, .dep = &dep, .why = why };
	char sep = 0;

	if (!text || !*text)
		return tj_problem_set(why, "InvalidSpec", WHERE ": is empty (" TYPES ")");
	if (strnlen(text, TJ_DEPENDENCY_MAX_LENGTH + 1) > TJ_DEPENDENCY_MAX_LENGTH)
		return fail_at(&p, TJ_DEPENDENCY_MAX_LENGTH, "longer than %d characters",
		               TJ_DEPENDENCY_MAX_LENGTH);
	for (;;) {
		if (parse_item(&p) < 0)
			return -EINVAL;
		if (!text[p.pos])
			break;
		if (sep && text[p.pos] != sep)
			return fail_at(
			        &p, p.pos,
			        "'%c' after '%c': a list is either all ',' (every dependency "
			        "is needed) or all '?' (any one suffices), as in Slurm",
			        text[p.pos], sep);
		sep = text[p.pos++];
	}
	dep.any = sep == '?';
	*ret = dep;
	return 0;
}

/* ---- evaluation ---- */

/* Room kept in a message for "waits for " and "; and 32 more". */
#define MORE_ROOM 32

/* What one term says: its outcome, when its delay ends, and a phrase for the message. */
struct term_verdict {
	enum tj_dependency_outcome outcome;
	int64_t wake_at;
	char phrase[TJ_MESSAGE_MAX];
};

static bool has_ended(const struct tj_dependency_job *job)
{
	return job->state == TJ_STATE_COMPLETE || job->state == TJ_STATE_FAILED;
}

static bool has_started(const struct tj_dependency_job *job)
{
	return job->start_time != 0 || job->state == TJ_STATE_RUNNING ||
	       job->state == TJ_STATE_RESTARTING;
}

static void say(struct term_verdict *v, enum tj_dependency_outcome outcome, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

static void say(struct term_verdict *v, enum tj_dependency_outcome outcome, const char *fmt, ...)
{
	va_list ap;

	v->outcome = outcome;
	va_start(ap, fmt);
	vsnprintf(v->phrase, sizeof(v->phrase), fmt, ap);
	va_end(ap);
}

/* The term as written: "afterok:prep", "after:prep+5". */
static void term_text(const struct tj_dependency_term *t, char buf[static TJ_NAME_MAX + 32])
{
	snprintf(buf, TJ_NAME_MAX + 32, "%s:%s", tj_dependency_type_name(t->type), t->name);
	if (t->minutes)
		snprintf(buf + strlen(buf), TJ_NAME_MAX + 32 - strlen(buf), "+%d", t->minutes);
}

/* after:NAME, once NAME has started (or ended without starting): met when the delay has
 * passed since then. */
static void judge_delay(const struct tj_dependency_term *t, const struct tj_dependency_job *job,
                        int64_t now, const char *text, struct term_verdict *v)
{
	int64_t since = job->start_time ? job->start_time : job->completion_time, at;
	char when[32];

	/* Without a time to count from, the delay cannot be measured: it is taken as passed
	 * rather than waited on for ever. */
	if (t->minutes == 0 || since <= 0)
		return;
	at = tj_add_capped(since, (int64_t)t->minutes * 60);
	if (at <= now)
		return;
	tj_admission_describe_time(when, sizeof(when), at, now);
	v->wake_at = at;
	say(v, TJ_DEPENDENCY_WAITING, "%d minute%s after %s %s, until %s (%s)", t->minutes,
	    tj_admission_plural(t->minutes), t->name, job->start_time ? "started" : "ended", when,
	    text);
}

/* afterok and afternotok: met when the job ends in the state met (to do is its verb, for
 * the message), never when it ends in the other. */
static void judge_end(const struct tj_dependency_term *t, const struct tj_dependency_job *job,
                      enum tj_state met, const char *to_do, const char *text,
                      struct term_verdict *v)
{
	if (job->state == met)
		return;
	if (has_ended(job))
		say(v, TJ_DEPENDENCY_NEVER, "%s can never be met: %s %s", text, t->name,
		    job->state == TJ_STATE_FAILED ? "failed" : "completed");
	else
		say(v, TJ_DEPENDENCY_WAITING, "%s to %s (%s)", t->name, to_do, text);
}

/* A term that names a TrainJob; v starts as SATISFIED. */
static void judge_named(const struct tj_dependency_term *t,
                        const struct tj_dependency_subject *subject,
                        const struct tj_dependency_lookup *lookup, struct term_verdict *v)
{
	struct tj_dependency_job job = { 0 };
	char text[TJ_NAME_MAX + 32];

	term_text(t, text);
	if (subject->name && strcmp(t->name, subject->name) == 0) {
		say(v, TJ_DEPENDENCY_NEVER,
		    "%s can never be met: a TrainJob cannot wait for itself", text);
		return;
	}
	if (!lookup->find || !lookup->find(lookup->userdata, t->name, &job)) {
		say(v, TJ_DEPENDENCY_NEVER, "%s can never be met: the namespace has no TrainJob %s",
		    text, t->name);
		return;
	}
	switch (t->type) {
	case TJ_DEPENDENCY_AFTER:
		if (has_started(&job) || has_ended(&job))
			judge_delay(t, &job, subject->now, text, v);
		else if (t->minutes)
			say(v, TJ_DEPENDENCY_WAITING, "%s to start, then %d minute%s (%s)", t->name,
			    t->minutes, tj_admission_plural(t->minutes), text);
		else
			say(v, TJ_DEPENDENCY_WAITING, "%s to start (%s)", t->name, text);
		break;
	case TJ_DEPENDENCY_AFTERANY:
		if (!has_ended(&job))
			say(v, TJ_DEPENDENCY_WAITING, "%s to end (%s)", t->name, text);
		break;
	case TJ_DEPENDENCY_AFTEROK:
		judge_end(t, &job, TJ_STATE_COMPLETE, "complete", text, v);
		break;
	case TJ_DEPENDENCY_AFTERNOTOK:
		judge_end(t, &job, TJ_STATE_FAILED, "fail", text, v);
		break;
	case TJ_DEPENDENCY_SINGLETON:
		break;
	}
}

/* Whether member, another job of the group, holds it against subject. Slurm's rule: one
 * that runs, or one submitted before it that has not ended. */
static bool holds_group(const char *name, const struct tj_dependency_job *member,
                        const struct tj_dependency_subject *subject)
{
	if (has_ended(member))
		return false;
	if (has_started(member) || member->creation_time < subject->creation_time)
		return true;
	return member->creation_time == subject->creation_time && subject->name &&
	       strcmp(name, subject->name) < 0;
}

/* The singleton term; v starts as SATISFIED. */
static void judge_singleton(const struct tj_dependency_subject *subject,
                            const struct tj_dependency_lookup *lookup, struct term_verdict *v)
{
	struct tj_dependency_job member;
	const char *name;

	if (!lookup->group_member)
		return;
	for (size_t i = 0; (name = lookup->group_member(lookup->userdata, i, &member)); i++) {
		if (subject->name && strcmp(name, subject->name) == 0)
			continue;
		if (holds_group(name, &member, subject)) {
			say(v, TJ_DEPENDENCY_WAITING, "%s to end (singleton of job name %s)", name,
			    subject->group ? subject->group : "");
			return;
		}
	}
}

/* Appends sep and phrase to buf if they fit with MORE_ROOM to spare, else counts them in
 * *dropped. */
static void join(char *buf, size_t size, const char *sep, const char *phrase, size_t *dropped)
{
	size_t used = strlen(buf), add = (used ? strlen(sep) : 0) + strlen(phrase);

	if (used + add + MORE_ROOM >= size) {
		(*dropped)++;
		return;
	}
	snprintf(buf + used, size - used, "%s%s", used ? sep : "", phrase);
}

/* Writes prefix, the joined phrases and the count of those that did not fit ("; and 3
 * more", " or 3 more"). */
static void tell(char *buf, size_t size, const char *prefix, const char *joined, const char *more,
                 size_t dropped)
{
	int n = snprintf(buf, size, "%s%s", prefix, joined);

	if (dropped && n > 0 && (size_t)n < size)
		snprintf(buf + n, size - (size_t)n, "%s%zu more", more, dropped);
}

void tj_dependency_evaluate(const struct tj_dependency *dep,
                            const struct tj_dependency_subject *subject,
                            const struct tj_dependency_lookup *lookup,
                            struct tj_dependency_verdict *ret)
{
	const char *and_or = dep->any ? " or " : " and ";
	size_t n = dep->n_terms < TJ_DEPENDENCY_MAX_TERMS ? dep->n_terms : TJ_DEPENDENCY_MAX_TERMS;
	size_t counts[3] = { 0 }, dropped[3] = { 0 };
	char waits[TJ_MESSAGE_MAX] = "", nevers[TJ_MESSAGE_MAX] = "";
	struct term_verdict v;
	int64_t wake_at = 0;

	for (size_t i = 0; i < n; i++) {
		const struct tj_dependency_term *t = &dep->terms[i];

		v = (struct term_verdict){ .outcome = TJ_DEPENDENCY_SATISFIED };
		if (t->type == TJ_DEPENDENCY_SINGLETON)
			judge_singleton(subject, lookup, &v);
		else
			judge_named(t, subject, lookup, &v);
		counts[v.outcome]++;
		if (v.outcome == TJ_DEPENDENCY_WAITING) {
			join(waits, sizeof(waits), and_or, v.phrase, &dropped[v.outcome]);
			if (v.wake_at && (!wake_at || v.wake_at < wake_at))
				wake_at = v.wake_at;
		} else if (v.outcome == TJ_DEPENDENCY_NEVER) {
			join(nevers, sizeof(nevers), "; ", v.phrase, &dropped[v.outcome]);
		}
	}
	*ret = (struct tj_dependency_verdict){ .outcome = TJ_DEPENDENCY_WAITING };
	if (n == 0 || (dep->any ? counts[TJ_DEPENDENCY_SATISFIED] > 0
	                        : counts[TJ_DEPENDENCY_SATISFIED] == n)) {
		ret->outcome = TJ_DEPENDENCY_SATISFIED;
	} else if (dep->any ? counts[TJ_DEPENDENCY_NEVER] == n : counts[TJ_DEPENDENCY_NEVER] > 0) {
		ret->outcome = TJ_DEPENDENCY_NEVER;
		tell(ret->message, sizeof(ret->message), "", nevers, "; and ",
		     dropped[TJ_DEPENDENCY_NEVER]);
	} else {
		ret->wake_at = wake_at;
		tell(ret->message, sizeof(ret->message), "waits for ", waits, and_or,
		     dropped[TJ_DEPENDENCY_WAITING]);
	}
}
