/* Job dependencies: the parser of trainjob.flame.dev/dependency (valid lists, every error
 * and its position, the limits, the mix of ',' and '?'), and the evaluation of every type
 * against every state, of ',' and '?', of delays and of singleton. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "reconcilers/plan/dependency.h"

#define N(a)  (sizeof(a) / sizeof((a)[0]))
#define WHERE "metadata.annotations[trainjob.flame.dev/dependency]: "
#define TYPES "(after, afterany, afterok, afternotok or singleton)"

/* 2026-12-03T12:00:00Z */
#define NOW 1796299200

/* The list as "all: afterok:a after:b+5" or "any: ...", to compare a parse in one string. */
static void render(const struct tj_dependency *d, char *buf, size_t size)
{
	size_t used = (size_t)snprintf(buf, size, "%s:", d->any ? "any" : "all");

	for (size_t i = 0; i < d->n_terms && used < size; i++) {
		const struct tj_dependency_term *t = &d->terms[i];

		used += (size_t)snprintf(buf + used, size - used, " %s%s%s",
		                         tj_dependency_type_name(t->type), t->name[0] ? ":" : "",
		                         t->name);
		if (t->minutes && used < size)
			used += (size_t)snprintf(buf + used, size - used, "+%d", t->minutes);
	}
}

struct parse_case {
	const char *text;
	const char *want; /* render() of the list, or the message of the refusal */
};

static const struct parse_case valid_cases[] = {
	{ "afterok:prep", "all: afterok:prep" },
	{ "afterany:a:b", "all: afterany:a afterany:b" },
	{ "afternotok:x", "all: afternotok:x" },
	{ "after:x", "all: after:x" },
	{ "after:x+5", "all: after:x+5" },
	{ "after:x+0", "all: after:x" },
	{ "after:x+527040", "all: after:x+527040" },
	{ "after:a+5:b", "all: after:a+5 after:b" },
	{ "singleton", "all: singleton" },
	{ "afterok:a,afterany:b,singleton", "all: afterok:a afterany:b singleton" },
	{ "afterok:a?afterok:b", "any: afterok:a afterok:b" },
	/* As in Slurm, '?' applies to the names of one type too. */
	{ "afterok:a:b?after:c", "any: afterok:a afterok:b after:c" },
	{ "singleton?afterok:a", "any: singleton afterok:a" },
	{ "afterok:0prep.v2-1", "all: afterok:0prep.v2-1" },
};

static void test_parse_valid(void **state)
{
	(void)state;
	for (size_t i = 0; i < N(valid_cases); i++) {
		const struct parse_case *c = &valid_cases[i];
		struct tj_dependency dep;
		struct tj_problem why = { 0 };
		char got[512];
		int rc = tj_dependency_parse(c->text, &dep, &why);

		if (rc != 0)
			fail_msg("%s: %d: %s", c->text, rc, why.message);
		render(&dep, got, sizeof(got));
		if (strcmp(got, c->want) != 0)
			fail_msg("%s: got \"%s\", want \"%s\"", c->text, got, c->want);
	}
}

static const struct parse_case invalid_cases[] = {
	{ "", WHERE "is empty " TYPES },
	{ "afterfoo:x", WHERE "character 1: \"afterfoo\" is not a dependency type " TYPES },
	{ "afterOK:x", WHERE "character 1: \"afterOK\" is not a dependency type " TYPES },
	{ "after ok:x", WHERE "character 1: \"after ok\" is not a dependency type " TYPES },
	{ "aftercorr:x", WHERE "character 1: aftercorr is not supported: a TrainJob has no array "
	                       "tasks" },
	{ "afterburstbuffer:x", WHERE "character 1: afterburstbuffer is not supported: there are "
	                              "no burst buffers" },
	{ "afterok", WHERE "character 8: afterok needs a TrainJob name (afterok:NAME)" },
	{ "after,afterok:a", WHERE "character 6: after needs a TrainJob name (after:NAME)" },
	{ "afterok:", WHERE "character 9: a TrainJob name is missing" },
	{ "afterok:a:", WHERE "character 11: a TrainJob name is missing" },
	{ "afterok:a:,afterok:b", WHERE "character 11: a TrainJob name is missing" },
	{ "afterok:Prep", WHERE "character 9: 'P' is not allowed in a TrainJob name (lower-case "
	                        "letters, digits, '-' and '.')" },
	{ "afterok:a b", WHERE "character 10: ' ' is not allowed in a TrainJob name (lower-case "
	                       "letters, digits, '-' and '.')" },
	{ "afterok:a\tb", WHERE "character 10: '?' is not allowed in a TrainJob name (lower-case "
	                        "letters, digits, '-' and '.')" },
	{ "afterok:\xc3\xa9t\xc3\xa9", WHERE "character 9: '?' is not allowed in a TrainJob name "
	                                     "(lower-case letters, digits, '-' and '.')" },
	{ "afterok:-a", WHERE "character 9: a TrainJob name begins and ends with a letter or a "
	                      "digit" },
	{ "afterok:a.", WHERE "character 10: a TrainJob name begins and ends with a letter or a "
	                      "digit" },
	{ ",afterok:a", WHERE "character 1: a dependency is missing " TYPES },
	{ "afterok:a,,afterok:b", WHERE "character 11: a dependency is missing " TYPES },
	{ "afterok:a,", WHERE "character 11: a dependency is missing " TYPES },
	{ "afterok:a?", WHERE "character 11: a dependency is missing " TYPES },
	{ "afterok:a?b", WHERE "character 11: \"b\" is not a dependency type " TYPES },
	{ "afterok:a,afterok:b?afterok:c",
	  WHERE "character 20: '?' after ',': a list is either all ',' (every dependency is "
	        "needed) or all '?' (any one suffices), as in Slurm" },
	{ "afterok:a?singleton,afterok:c",
	  WHERE "character 20: ',' after '?': a list is either all ',' (every dependency is "
	        "needed) or all '?' (any one suffices), as in Slurm" },
	{ "afterok:a+5", WHERE "character 10: afterok takes no delay: only after does "
	                       "(after:NAME+MINUTES)" },
	{ "afterany:a:b+1", WHERE "character 13: afterany takes no delay: only after does "
	                          "(after:NAME+MINUTES)" },
	{ "after:a+", WHERE "character 9: \"\" is not a delay in minutes (after:NAME+MINUTES, 0 "
	                    "to 527040)" },
	{ "after:a+x", WHERE "character 9: \"x\" is not a delay in minutes (after:NAME+MINUTES, 0 "
	                     "to 527040)" },
	{ "after:a+-1", WHERE "character 9: \"-1\" is not a delay in minutes (after:NAME+MINUTES, "
	                      "0 to 527040)" },
	{ "after:a+5m", WHERE "character 9: \"5m\" is not a delay in minutes (after:NAME+MINUTES, "
	                      "0 to 527040)" },
	{ "after:a+527041", WHERE "character 9: \"527041\" is not a delay in minutes "
	                          "(after:NAME+MINUTES, 0 to 527040)" },
	{ "after:a+99999999999999999999999", WHERE "character 9: \"99999999999999999999999\" is "
	                                           "not a delay in minutes (after:NAME+MINUTES, 0 "
	                                           "to 527040)" },
	{ "after:a+5+5", WHERE "character 10: a second delay (one +MINUTES per name)" },
	{ "singleton:a", WHERE "character 10: singleton takes no TrainJob name" },
	{ "singleton+5", WHERE "character 10: singleton takes no delay" },
	{ "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx:a",
	  WHERE "character 1: \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...\" is not a dependency "
	        "type " TYPES },
};

static void test_parse_invalid(void **state)
{
	(void)state;
	for (size_t i = 0; i < N(invalid_cases); i++) {
		const struct parse_case *c = &invalid_cases[i];
		struct tj_dependency dep = { .n_terms = 99 };
		struct tj_problem why = { 0 };
		int rc = tj_dependency_parse(c->text, &dep, &why);

		if (rc != -EINVAL)
			fail_msg("%s: returned %d", c->text, rc);
		if (strcmp(why.reason, "InvalidSpec") != 0 || strcmp(why.message, c->want) != 0)
			fail_msg("%s: got %s \"%s\", want \"%s\"", c->text, why.reason, why.message,
			         c->want);
		/* *ret is written only on success. */
		assert_int_equal(dep.n_terms, 99);
	}
}

static void test_parse_null(void **state)
{
	struct tj_dependency dep;
	struct tj_problem why;

	(void)state;
	assert_int_equal(tj_dependency_parse(NULL, &dep, &why), -EINVAL);
	assert_string_equal(why.message, WHERE "is empty " TYPES);
}

/* Appends "NAME" of length len made of 'a'..'z' from seed, and a separator. */
static size_t put_name(char *buf, size_t at, size_t len, unsigned seed, char sep)
{
	for (size_t i = 0; i < len; i++)
		buf[at + i] = (char)('a' + (seed + i) % 26);
	buf[at + len] = sep;
	return at + len + 1;
}

static void test_parse_limits(void **state)
{
	static char text[TJ_DEPENDENCY_MAX_LENGTH + 2];
	struct tj_dependency dep;
	struct tj_problem why;
	size_t at;

	(void)state;
	/* A name of 253 characters, the longest a TrainJob has. */
	memcpy(text, "afterok:", 8);
	put_name(text, 8, 253, 1, '\0');
	assert_int_equal(tj_dependency_parse(text, &dep, &why), 0);
	assert_int_equal(strlen(dep.terms[0].name), 253);
	/* 254: too long. */
	put_name(text, 8, 254, 1, '\0');
	assert_int_equal(tj_dependency_parse(text, &dep, &why), -EINVAL);
	assert_string_equal(why.message,
	                    WHERE "character 9: a TrainJob name has at most 253 characters");

	/* 32 terms of one type, then 33. */
	memcpy(text, "afterany", 8);
	at = 8;
	for (unsigned i = 0; i < TJ_DEPENDENCY_MAX_TERMS; i++) {
		text[at++] = ':';
		at = put_name(text, at, 3, i, '\0') - 1;
	}
	assert_int_equal(tj_dependency_parse(text, &dep, &why), 0);
	assert_int_equal(dep.n_terms, TJ_DEPENDENCY_MAX_TERMS);
	assert_string_equal(dep.terms[31].name, "fgh");
	memcpy(text + at, ":xyz", 5);
	assert_int_equal(tj_dependency_parse(text, &dep, &why), -EINVAL);
	assert_string_equal(why.message, WHERE "character 138: more than 32 dependencies");
	/* The same with singletons, separated by ','. */
	at = 0;
	for (unsigned i = 0; i <= TJ_DEPENDENCY_MAX_TERMS; i++)
		at += (size_t)sprintf(text + at, "%ssingleton", i ? "," : "");
	assert_int_equal(tj_dependency_parse(text, &dep, &why), -EINVAL);
	assert_string_equal(why.message, WHERE "character 321: more than 32 dependencies");

	/* Exactly TJ_DEPENDENCY_MAX_LENGTH characters: 15 terms "afterok:<247 letters>," and a
	 * last one whose name fills the rest. */
	at = 0;
	for (unsigned i = 0; i < 15; i++) {
		memcpy(text + at, "afterok:", 8);
		at = put_name(text, at + 8, 247, i, ',');
	}
	memcpy(text + at, "afterok:", 8);
	put_name(text, at + 8, TJ_DEPENDENCY_MAX_LENGTH - at - 8, 0, '\0');
	assert_int_equal(strlen(text), TJ_DEPENDENCY_MAX_LENGTH);
	assert_int_equal(tj_dependency_parse(text, &dep, &why), 0);
	assert_int_equal(dep.n_terms, 16);
	text[TJ_DEPENDENCY_MAX_LENGTH - 1] = 'x';
	text[TJ_DEPENDENCY_MAX_LENGTH] = 'x';
	text[TJ_DEPENDENCY_MAX_LENGTH + 1] = '\0';
	assert_int_equal(tj_dependency_parse(text, &dep, &why), -EINVAL);
	assert_string_equal(why.message, WHERE "character 4097: longer than 4096 characters");
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(tj_dependency_type_name(TJ_DEPENDENCY_AFTER), "after");
	assert_string_equal(tj_dependency_type_name(TJ_DEPENDENCY_AFTERANY), "afterany");
	assert_string_equal(tj_dependency_type_name(TJ_DEPENDENCY_AFTEROK), "afterok");
	assert_string_equal(tj_dependency_type_name(TJ_DEPENDENCY_AFTERNOTOK), "afternotok");
	assert_string_equal(tj_dependency_type_name(TJ_DEPENDENCY_SINGLETON), "singleton");
	assert_string_equal(tj_dependency_singleton_group("train", "train-3"), "train");
	assert_string_equal(tj_dependency_singleton_group("", "train-3"), "train-3");
	assert_string_equal(tj_dependency_singleton_group(NULL, "train-3"), "train-3");
}

/* ---- evaluation ---- */

struct named_job {
	const char *name;
	struct tj_dependency_job job;
};

/* The namespace: one job in each state, named after it. Jobs that have started did so 10
 * minutes before NOW; those that ended, ended a minute before NOW. */
#define STARTED(st)                                                                                \
	{                                                                                          \
		st, NOW - 7200, NOW - 600, 0                                                       \
	}
#define ENDED(st, start)                                                                           \
	{                                                                                          \
		st, NOW - 7200, start, NOW - 60                                                    \
	}
static const struct named_job namespace_jobs[] = {
	{ "j-none", { TJ_STATE_NONE, NOW - 7200, 0, 0 } },
	{ "j-queued", { TJ_STATE_QUEUED, NOW - 7200, 0, 0 } },
	/* Pending with no pod yet (its runtime is missing), and Pending with its pods starting. */
	{ "j-pending", { TJ_STATE_PENDING, NOW - 7200, 0, 0 } },
	{ "j-pending-started", STARTED(TJ_STATE_PENDING) },
	{ "j-running", STARTED(TJ_STATE_RUNNING) },
	{ "j-restarting", STARTED(TJ_STATE_RESTARTING) },
	/* Suspended before it ever ran (as Kueue creates jobs), and suspended while it ran. */
	{ "j-suspended", { TJ_STATE_SUSPENDED, NOW - 7200, 0, 0 } },
	{ "j-suspended-started", STARTED(TJ_STATE_SUSPENDED) },
	{ "j-complete", ENDED(TJ_STATE_COMPLETE, NOW - 600) },
	{ "j-failed", ENDED(TJ_STATE_FAILED, NOW - 600) },
	/* Failed before it started (an invalid spec): Slurm's "cancelled". */
	{ "j-failed-unstarted", ENDED(TJ_STATE_FAILED, 0) },
	/* Running, but with no time recorded: a delay cannot be counted. */
	{ "j-untimed", { TJ_STATE_RUNNING, NOW - 7200, 0, 0 } },
	{ "me", { TJ_STATE_QUEUED, NOW - 10, 0, 0 } },
};

struct world {
	const struct named_job *jobs;
	size_t n_jobs;
	const struct named_job *group;
	size_t n_group;
};

static bool find(void *userdata, const char *name, struct tj_dependency_job *ret)
{
	const struct world *w = userdata;

	for (size_t i = 0; i < w->n_jobs; i++)
		if (strcmp(w->jobs[i].name, name) == 0) {
			*ret = w->jobs[i].job;
			return true;
		}
	return false;
}

static const char *group_member(void *userdata, size_t i, struct tj_dependency_job *ret)
{
	const struct world *w = userdata;

	if (i >= w->n_group)
		return NULL;
	*ret = w->group[i].job;
	return w->group[i].name;
}

struct eval_case {
	const char *text;
	enum tj_dependency_outcome want;
	const char *want_message;
	int64_t want_wake_at;
};

#define SAT                 TJ_DEPENDENCY_SATISFIED, "", 0
#define WAIT(m)             TJ_DEPENDENCY_WAITING, "waits for " m, 0
#define WAIT_UNTIL(m, wake) TJ_DEPENDENCY_WAITING, "waits for " m, wake
#define NEVER(m)            TJ_DEPENDENCY_NEVER, m, 0
#define ABSENT(type)        NEVER(type ":j-gone can never be met: the namespace has no TrainJob j-gone")

static const struct eval_case type_cases[] = {
	/* after: the job has started (or ended without starting). */
	{ "after:j-gone", ABSENT("after") },
	{ "after:j-none", WAIT("j-none to start (after:j-none)") },
	{ "after:j-queued", WAIT("j-queued to start (after:j-queued)") },
	{ "after:j-pending", WAIT("j-pending to start (after:j-pending)") },
	{ "after:j-pending-started", SAT },
	{ "after:j-running", SAT },
	{ "after:j-restarting", SAT },
	{ "after:j-suspended", WAIT("j-suspended to start (after:j-suspended)") },
	{ "after:j-suspended-started", SAT },
	{ "after:j-complete", SAT },
	{ "after:j-failed", SAT },
	{ "after:j-failed-unstarted", SAT },
	/* afterany: the job has ended. */
	{ "afterany:j-gone", ABSENT("afterany") },
	{ "afterany:j-none", WAIT("j-none to end (afterany:j-none)") },
	{ "afterany:j-queued", WAIT("j-queued to end (afterany:j-queued)") },
	{ "afterany:j-pending", WAIT("j-pending to end (afterany:j-pending)") },
	{ "afterany:j-pending-started",
	  WAIT("j-pending-started to end (afterany:j-pending-started)") },
	{ "afterany:j-running", WAIT("j-running to end (afterany:j-running)") },
	{ "afterany:j-restarting", WAIT("j-restarting to end (afterany:j-restarting)") },
	{ "afterany:j-suspended", WAIT("j-suspended to end (afterany:j-suspended)") },
	{ "afterany:j-suspended-started", WAIT("j-suspended-started to end "
	                                       "(afterany:j-suspended-started)") },
	{ "afterany:j-complete", SAT },
	{ "afterany:j-failed", SAT },
	{ "afterany:j-failed-unstarted", SAT },
	/* afterok: Complete; never once Failed. */
	{ "afterok:j-gone", ABSENT("afterok") },
	{ "afterok:j-none", WAIT("j-none to complete (afterok:j-none)") },
	{ "afterok:j-queued", WAIT("j-queued to complete (afterok:j-queued)") },
	{ "afterok:j-pending", WAIT("j-pending to complete (afterok:j-pending)") },
	{ "afterok:j-pending-started", WAIT("j-pending-started to complete "
	                                    "(afterok:j-pending-started)") },
	{ "afterok:j-running", WAIT("j-running to complete (afterok:j-running)") },
	{ "afterok:j-restarting", WAIT("j-restarting to complete (afterok:j-restarting)") },
	{ "afterok:j-suspended", WAIT("j-suspended to complete (afterok:j-suspended)") },
	{ "afterok:j-suspended-started", WAIT("j-suspended-started to complete "
	                                      "(afterok:j-suspended-started)") },
	{ "afterok:j-complete", SAT },
	{ "afterok:j-failed", NEVER("afterok:j-failed can never be met: j-failed failed") },
	{ "afterok:j-failed-unstarted", NEVER("afterok:j-failed-unstarted can never be met: "
	                                      "j-failed-unstarted failed") },
	/* afternotok: Failed; never once Complete. */
	{ "afternotok:j-gone", ABSENT("afternotok") },
	{ "afternotok:j-none", WAIT("j-none to fail (afternotok:j-none)") },
	{ "afternotok:j-queued", WAIT("j-queued to fail (afternotok:j-queued)") },
	{ "afternotok:j-pending", WAIT("j-pending to fail (afternotok:j-pending)") },
	{ "afternotok:j-pending-started", WAIT("j-pending-started to fail "
	                                       "(afternotok:j-pending-started)") },
	{ "afternotok:j-running", WAIT("j-running to fail (afternotok:j-running)") },
	{ "afternotok:j-restarting", WAIT("j-restarting to fail (afternotok:j-restarting)") },
	{ "afternotok:j-suspended", WAIT("j-suspended to fail (afternotok:j-suspended)") },
	{ "afternotok:j-suspended-started", WAIT("j-suspended-started to fail "
	                                         "(afternotok:j-suspended-started)") },
	{ "afternotok:j-complete", NEVER("afternotok:j-complete can never be met: j-complete "
	                                 "completed") },
	{ "afternotok:j-failed", SAT },
	{ "afternotok:j-failed-unstarted", SAT },
	/* A job cannot wait for itself, whatever the type. */
	{ "afterok:me", NEVER("afterok:me can never be met: a TrainJob cannot wait for itself") },
	{ "after:me", NEVER("after:me can never be met: a TrainJob cannot wait for itself") },
};

static const struct eval_case delay_cases[] = {
	/* Started 10 minutes ago: a delay of 10 minutes has just passed, 15 has not. */
	{ "after:j-running+10", SAT },
	{ "after:j-running+15", WAIT_UNTIL("15 minutes after j-running started, until 12:05Z "
	                                   "(after:j-running+15)",
	                                   NOW + 300) },
	{ "after:j-running+1", SAT },
	/* Ended a minute ago without starting: counted from the end. */
	{ "after:j-failed-unstarted+1", SAT },
	{ "after:j-failed-unstarted+2",
	  WAIT_UNTIL("2 minutes after j-failed-unstarted ended, until "
	             "12:01Z (after:j-failed-unstarted+2)",
	             NOW + 60) },
	/* Ended, having started: counted from the start. */
	{ "after:j-complete+11", WAIT_UNTIL("11 minutes after j-complete started, until 12:01Z "
	                                    "(after:j-complete+11)",
	                                    NOW + 60) },
	/* A day: the time says which day. */
	{ "after:j-running+1440", WAIT_UNTIL("1440 minutes after j-running started, until "
	                                     "2026-12-04T11:50Z (after:j-running+1440)",
	                                     NOW - 600 + 86400) },
	/* Not started: the start first, and nothing to wake up for. */
	{ "after:j-queued+1", WAIT("j-queued to start, then 1 minute (after:j-queued+1)") },
	{ "after:j-queued+5", WAIT("j-queued to start, then 5 minutes (after:j-queued+5)") },
	/* Started with no time recorded: the delay is taken as passed. */
	{ "after:j-untimed+5", SAT },
};

static const struct eval_case combination_cases[] = {
	/* ',': all of them. */
	{ "afterok:j-complete,afterany:j-failed,after:j-running", SAT },
	{ "afterok:j-complete,afterok:j-running",
	  WAIT("j-running to complete (afterok:j-running)") },
	{ "afterok:j-running,afterany:j-queued", WAIT("j-running to complete (afterok:j-running) "
	                                              "and j-queued to end (afterany:j-queued)") },
	{ "afterok:j-running,afterok:j-failed,afterok:j-gone",
	  NEVER("afterok:j-failed can never be met: j-failed failed; afterok:j-gone can never be "
	        "met: the namespace has no TrainJob j-gone") },
	{ "afterok:j-complete:j-running", WAIT("j-running to complete (afterok:j-running)") },
	/* The earliest delay wakes the job, with ',' and with '?'. */
	{ "after:j-failed-unstarted+15,after:j-running+15",
	  WAIT_UNTIL("15 minutes after j-failed-unstarted ended, until 12:14Z "
	             "(after:j-failed-unstarted+15) and 15 minutes after j-running started, until "
	             "12:05Z (after:j-running+15)",
	             NOW + 300) },
	{ "after:j-running+15,afterok:j-queued",
	  WAIT_UNTIL("15 minutes after j-running started, "
	             "until 12:05Z (after:j-running+15) and "
	             "j-queued to complete (afterok:j-queued)",
	             NOW + 300) },
	{ "after:j-failed-unstarted+15?after:j-running+15",
	  WAIT_UNTIL("15 minutes after j-failed-unstarted ended, until 12:14Z "
	             "(after:j-failed-unstarted+15) or 15 minutes after j-running started, until "
	             "12:05Z "
	             "(after:j-running+15)",
	             NOW + 300) },
	/* '?': any one of them. */
	{ "afterok:j-failed?afterok:j-complete", SAT },
	{ "afterok:j-running?afterok:j-complete", SAT },
	{ "afterok:j-failed?afterok:j-running", WAIT("j-running to complete (afterok:j-running)") },
	{ "afterok:j-running?afterany:j-queued", WAIT("j-running to complete (afterok:j-running) "
	                                              "or j-queued to end (afterany:j-queued)") },
	{ "afterok:j-failed?afternotok:j-complete",
	  NEVER("afterok:j-failed can never be met: j-failed failed; afternotok:j-complete can "
	        "never be met: j-complete completed") },
	{ "afterok:j-failed:j-complete?afterok:j-gone", SAT },
};

/* Evaluates each case in the world w; a failure names the case by label, else by its text. */
static void check_eval(const struct eval_case *cases, size_t n, const struct world *w,
                       const char *label)
{
	struct tj_dependency_lookup lookup = { find, group_member, (void *)w };
	struct tj_dependency_subject me = { "me", "me", NOW - 10, NOW };

	for (size_t i = 0; i < n; i++) {
		const struct eval_case *c = &cases[i];
		struct tj_dependency dep;
		struct tj_problem why;
		struct tj_dependency_verdict v;

		if (tj_dependency_parse(c->text, &dep, &why) < 0)
			fail_msg("%s: %s", c->text, why.message);
		memset(&v, 0xa5, sizeof(v));
		tj_dependency_evaluate(&dep, &me, &lookup, &v);
		if (v.outcome != c->want || strcmp(v.message, c->want_message) != 0 ||
		    v.wake_at != c->want_wake_at)
			fail_msg("%s: got %d \"%s\" wake %lld, want %d \"%s\" wake %lld",
			         label ? label : c->text, v.outcome, v.message,
			         (long long)v.wake_at, c->want, c->want_message,
			         (long long)c->want_wake_at);
	}
}

static const struct world namespace_world = { namespace_jobs, N(namespace_jobs), NULL, 0 };

static void test_every_type_against_every_state(void **state)
{
	(void)state;
	check_eval(type_cases, N(type_cases), &namespace_world, NULL);
}

static void test_delays(void **state)
{
	(void)state;
	check_eval(delay_cases, N(delay_cases), &namespace_world, NULL);
}

static void test_combinations(void **state)
{
	(void)state;
	check_eval(combination_cases, N(combination_cases), &namespace_world, NULL);
}

/* The subject "me" was created at NOW - 10, in the group "me"; the group's members are
 * named train-* (they carry job-name "me"), and "me" itself may be listed among them. */
struct singleton_case {
	const char *name;
	struct named_job members[3];
	size_t n_members;
	const char *text;
	enum tj_dependency_outcome want;
	const char *want_message;
	int64_t want_wake_at; /* always 0: singleton has no delay */
};

#define MEMBER(n, st, created, started)                                                            \
	{                                                                                          \
		n,                                                                                 \
		{                                                                                  \
			st, created, started, 0                                                    \
		}                                                                                  \
	}
#define SELF MEMBER("me", TJ_STATE_QUEUED, NOW - 10, 0)

static const struct singleton_case singleton_cases[] = {
	{ "alone in its group", { { 0 } }, 0, "singleton", SAT },
	{ "only itself listed", { SELF }, 1, "singleton", SAT },
	{ "a member that runs, created later, holds it",
	  { SELF, MEMBER("train-1", TJ_STATE_RUNNING, NOW - 5, NOW - 3) },
	  2,
	  "singleton",
	  WAIT("train-1 to end (singleton of job name me)") },
	{ "a member restarting holds it",
	  { MEMBER("train-1", TJ_STATE_RESTARTING, NOW - 100, NOW - 50) },
	  1,
	  "singleton",
	  WAIT("train-1 to end (singleton of job name me)") },
	{ "a member suspended while it ran holds it",
	  { MEMBER("train-1", TJ_STATE_SUSPENDED, NOW - 5, NOW - 3) },
	  1,
	  "singleton",
	  WAIT("train-1 to end (singleton of job name me)") },
	{ "a member that ended does not",
	  { MEMBER("train-1", TJ_STATE_COMPLETE, NOW - 100, NOW - 50),
	    MEMBER("train-2", TJ_STATE_FAILED, NOW - 100, NOW - 50) },
	  2,
	  "singleton",
	  SAT },
	{ "a waiting member created before holds it",
	  { MEMBER("train-1", TJ_STATE_QUEUED, NOW - 11, 0) },
	  1,
	  "singleton",
	  WAIT("train-1 to end (singleton of job name me)") },
	{ "a waiting member created after does not",
	  { MEMBER("train-1", TJ_STATE_QUEUED, NOW - 9, 0),
	    MEMBER("train-2", TJ_STATE_SUSPENDED, NOW - 9, 0) },
	  2,
	  "singleton",
	  SAT },
	{ "created the same second: the smaller name first",
	  { MEMBER("a-first", TJ_STATE_NONE, NOW - 10, 0) },
	  1,
	  "singleton",
	  WAIT("a-first to end (singleton of job name me)") },
	{ "created the same second: a larger name waits",
	  { MEMBER("z-last", TJ_STATE_NONE, NOW - 10, 0) },
	  1,
	  "singleton",
	  SAT },
	{ "the first member that holds it is named",
	  { MEMBER("train-1", TJ_STATE_COMPLETE, NOW - 100, NOW - 50),
	    MEMBER("train-2", TJ_STATE_RUNNING, NOW - 100, NOW - 50),
	    MEMBER("train-3", TJ_STATE_QUEUED, NOW - 50, 0) },
	  3,
	  "singleton",
	  WAIT("train-2 to end (singleton of job name me)") },
	{ "with another term, ','",
	  { MEMBER("train-1", TJ_STATE_RUNNING, NOW - 5, NOW - 3) },
	  1,
	  "singleton,afterok:j-complete",
	  WAIT("train-1 to end (singleton of job name me)") },
	{ "with another term, '?'",
	  { MEMBER("train-1", TJ_STATE_RUNNING, NOW - 5, NOW - 3) },
	  1,
	  "singleton?afterok:j-complete",
	  SAT },
};

static void test_singleton(void **state)
{
	(void)state;
	for (size_t i = 0; i < N(singleton_cases); i++) {
		const struct singleton_case *c = &singleton_cases[i];
		struct world w = { namespace_jobs, N(namespace_jobs), c->members, c->n_members };
		struct eval_case e = { c->text, c->want, c->want_message, c->want_wake_at };

		check_eval(&e, 1, &w, c->name);
	}
}

static void test_singleton_without_group_callback(void **state)
{
	struct tj_dependency_lookup lookup = { find, NULL, (void *)&namespace_world };
	struct tj_dependency_subject me = { "me", "me", NOW - 10, NOW };
	struct tj_dependency dep;
	struct tj_problem why;
	struct tj_dependency_verdict v;

	(void)state;
	assert_int_equal(tj_dependency_parse("singleton", &dep, &why), 0);
	tj_dependency_evaluate(&dep, &me, &lookup, &v);
	assert_int_equal(v.outcome, TJ_DEPENDENCY_SATISFIED);
	assert_string_equal(v.message, "");
}

/* The phrases of a message (the occurrences of marker) and those it counts at its end
 * ("... and 3 more"). */
static size_t count_told(const char *message, const char *marker)
{
	size_t len = strlen(message), n = 0;
	const char *digits = message + len - strlen(" more");

	assert_true(len > strlen(" more") && strcmp(digits, " more") == 0);
	while (digits > message && digits[-1] >= '0' && digits[-1] <= '9')
		digits--;
	for (const char *p = message; (p = strstr(p, marker)); p++)
		n++;
	return n + strtoul(digits, NULL, 10);
}

/* 32 terms that all wait, or all fail, on names of 120 characters: the message keeps what
 * fits in TJ_MESSAGE_MAX and counts the rest. */
static void test_long_messages(void **state)
{
	static char text[TJ_DEPENDENCY_MAX_LENGTH + 1];
	struct tj_dependency_lookup lookup = { find, NULL, (void *)&namespace_world };
	struct tj_dependency_subject me = { "me", "me", NOW - 10, NOW };
	struct tj_dependency dep;
	struct tj_problem why;
	struct tj_dependency_verdict v;
	size_t at = 7;

	(void)state;
	memcpy(text, "afterok", 7);
	for (unsigned i = 0; i < TJ_DEPENDENCY_MAX_TERMS; i++) {
		text[at++] = ':';
		at = put_name(text, at, 120, i, '\0') - 1;
	}
	assert_int_equal(tj_dependency_parse(text, &dep, &why), 0);
	/* None of them exists: never, with ','. */
	tj_dependency_evaluate(&dep, &me, &lookup, &v);
	assert_int_equal(v.outcome, TJ_DEPENDENCY_NEVER);
	assert_true(strlen(v.message) < TJ_MESSAGE_MAX - 1);
	assert_non_null(strstr(v.message, "; and "));
	assert_int_equal(count_told(v.message, "can never be met"), 32);

	/* All of them are the running job: waiting, with '?'. */
	for (size_t i = 0; i < dep.n_terms; i++)
		strcpy(dep.terms[i].name, "j-running");
	dep.any = true;
	tj_dependency_evaluate(&dep, &me, &lookup, &v);
	assert_int_equal(v.outcome, TJ_DEPENDENCY_WAITING);
	assert_int_equal(count_told(v.message, "to complete"), 32);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_valid),
		cmocka_unit_test(test_parse_invalid),
		cmocka_unit_test(test_parse_null),
		cmocka_unit_test(test_parse_limits),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_every_type_against_every_state),
		cmocka_unit_test(test_delays),
		cmocka_unit_test(test_combinations),
		cmocka_unit_test(test_singleton),
		cmocka_unit_test(test_singleton_without_group_callback),
		cmocka_unit_test(test_long_messages),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
