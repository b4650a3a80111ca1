/* libFuzzer target: the dependency parser (reconcilers/plan/dependency.h) on arbitrary text, and
 * the evaluation of what it accepts in a namespace made from the input. The first byte
 * chooses the namespace (which names exist, their states and times, the singleton group),
 * the second the time of the evaluation; the rest is the annotation. Invariants:
 * - a refusal is InvalidSpec with a message that names the annotation and leaves *ret alone;
 * - an accepted list has 1 to 32 well-formed terms, and written back in Slurm's syntax it
 *   parses to the same list; nothing longer than 4096 characters is accepted;
 * - a verdict is in range, its message is NUL-terminated, valid UTF-8 without control
 *   characters, empty exactly when SATISFIED; only WAITING has a wake-up, and it is after now;
 * - the verdict of the list follows from those of its terms alone: with '?' SATISFIED if one
 *   is and NEVER if all are; with ',' SATISFIED if all are and NEVER if one is. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"
#include "reconcilers/plan/dependency.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Times the namespace's jobs may have, the odd ones included. */
static const int64_t times[] = { 0,  1,         1796299200 - 600, 1796299200, 1796299200 + 60,
	                         -5, INT64_MAX, INT64_MIN };
#define N_TIMES (sizeof(times) / sizeof(times[0]))

/* What the evaluation's callbacks answer: a pure function of the name and the seed. */
struct world {
	uint8_t seed;
};

static uint32_t hash(const char *s, uint8_t seed)
{
	uint32_t h = 2166136261u ^ seed;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

static void job_of(const char *name, uint8_t seed, struct tj_dependency_job *ret)
{
	uint32_t h = hash(name, seed);

	ret->state = (enum tj_state)(h % TJ_STATE_COUNT);
	ret->creation_time = times[(h >> 4) % N_TIMES];
	ret->start_time = times[(h >> 8) % N_TIMES];
	ret->completion_time = times[(h >> 12) % N_TIMES];
}

static bool find(void *userdata, const char *name, struct tj_dependency_job *ret)
{
	const struct world *w = userdata;

	if (strnlen(name, TJ_NAME_MAX) == TJ_NAME_MAX)
		abort(); /* a term's name always ends within its buffer */
	if (hash(name, w->seed) % 7 == 0)
		return false; /* absent */
	job_of(name, w->seed, ret);
	return true;
}

static const char *const members[] = { "me", "a", "train-1", "z" };

static const char *group_member(void *userdata, size_t i, struct tj_dependency_job *ret)
{
	const struct world *w = userdata;

	if (i >= (size_t)(w->seed % 5) || i >= sizeof(members) / sizeof(members[0]))
		return NULL;
	job_of(members[i], w->seed, ret);
	return members[i];
}

static void check_message(const struct tj_dependency_verdict *v, int64_t now)
{
	size_t len = strnlen(v->message, sizeof(v->message));

	if ((unsigned)v->outcome > TJ_DEPENDENCY_NEVER || len == sizeof(v->message))
		abort();
	if (tj_utf8_invalid_at(v->message, len) != len)
		abort();
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)v->message[i] < 0x20 || v->message[i] == 0x7f)
			abort();
	if ((len == 0) != (v->outcome == TJ_DEPENDENCY_SATISFIED))
		abort();
	if (v->outcome == TJ_DEPENDENCY_WAITING && strncmp(v->message, "waits for ", 10) != 0)
		abort();
	if (v->wake_at && (v->outcome != TJ_DEPENDENCY_WAITING || v->wake_at <= now))
		abort();
}

static void check_terms(const struct tj_dependency *dep)
{
	if (dep->n_terms < 1 || dep->n_terms > TJ_DEPENDENCY_MAX_TERMS)
		abort();
	for (size_t i = 0; i < dep->n_terms; i++) {
		const struct tj_dependency_term *t = &dep->terms[i];
		size_t len = strnlen(t->name, sizeof(t->name));

		if ((unsigned)t->type > TJ_DEPENDENCY_SINGLETON || len == sizeof(t->name))
			abort();
		if ((t->type == TJ_DEPENDENCY_SINGLETON) != (len == 0))
			abort();
		if (t->minutes < 0 || t->minutes > TJ_DEPENDENCY_MAX_MINUTES ||
		    (t->minutes && t->type != TJ_DEPENDENCY_AFTER))
			abort();
	}
}

/* The list in Slurm's syntax, one type per term: it must parse to the same list. */
static void check_round_trip(const struct tj_dependency *dep)
{
	static char text[TJ_DEPENDENCY_MAX_TERMS * (TJ_NAME_MAX + 32)];
	struct tj_dependency again;
	struct tj_problem why;
	size_t used = 0;

	for (size_t i = 0; i < dep->n_terms; i++) {
		const struct tj_dependency_term *t = &dep->terms[i];

		used += (size_t)snprintf(text + used, sizeof(text) - used, "%s%s%s%s",
		                         i ? (dep->any ? "?" : ",") : "",
		                         tj_dependency_type_name(t->type), *t->name ? ":" : "",
		                         t->name);
		if (t->minutes)
			used += (size_t)snprintf(text + used, sizeof(text) - used, "+%d",
			                         t->minutes);
	}
	/* Written one type per term, a list may grow past the limit its original kept to. */
	if (used > TJ_DEPENDENCY_MAX_LENGTH)
		return;
	if (tj_dependency_parse(text, &again, &why) != 0)
		abort();
	if (again.n_terms != dep->n_terms || again.any != dep->any)
		abort();
	for (size_t i = 0; i < dep->n_terms; i++)
		if (again.terms[i].type != dep->terms[i].type ||
		    again.terms[i].minutes != dep->terms[i].minutes ||
		    strcmp(again.terms[i].name, dep->terms[i].name) != 0)
			abort();
}

static void check_evaluation(const struct tj_dependency *dep, uint8_t seed, int64_t now)
{
	struct world w = { seed };
	struct tj_dependency_lookup lookup = { find, seed & 0x80 ? NULL : group_member, &w };
	struct tj_dependency_subject subject = { "me", "me", times[seed % N_TIMES], now };
	struct tj_dependency_verdict v, alone;
	struct tj_dependency one = { .n_terms = 1 };
	size_t counts[3] = { 0 };

	tj_dependency_evaluate(dep, &subject, &lookup, &v);
	check_message(&v, now);
	for (size_t i = 0; i < dep->n_terms; i++) {
		one.terms[0] = dep->terms[i];
		tj_dependency_evaluate(&one, &subject, &lookup, &alone);
		check_message(&alone, now);
		counts[alone.outcome]++;
	}
	if (dep->any) {
		if ((v.outcome == TJ_DEPENDENCY_SATISFIED) !=
		            (counts[TJ_DEPENDENCY_SATISFIED] > 0) ||
		    (v.outcome == TJ_DEPENDENCY_NEVER) !=
		            (counts[TJ_DEPENDENCY_NEVER] == dep->n_terms))
			abort();
	} else {
		if ((v.outcome == TJ_DEPENDENCY_SATISFIED) !=
		            (counts[TJ_DEPENDENCY_SATISFIED] == dep->n_terms) ||
		    (v.outcome == TJ_DEPENDENCY_NEVER) != (counts[TJ_DEPENDENCY_NEVER] > 0))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tj_dependency dep, untouched;
	struct tj_problem why = { 0 };
	uint8_t seed;
	int64_t now;
	char *text;
	int rc;

	if (size < 2)
		return 0;
	seed = data[0];
	now = times[data[1] % N_TIMES];
	text = malloc(size - 1);
	if (!text)
		return 0;
	memcpy(text, data + 2, size - 2);
	text[size - 2] = '\0';
	memset(&dep, 0x5a, sizeof(dep));
	untouched = dep;
	rc = tj_dependency_parse(text, &dep, &why);
	if (rc != 0) {
		if (rc != -EINVAL || strcmp(why.reason, "InvalidSpec") != 0 ||
		    strnlen(why.message, sizeof(why.message)) == sizeof(why.message) ||
		    strncmp(why.message, "metadata.annotations[" TJ_ANNOTATION_DEPENDENCY "]: ",
		            strlen("metadata.annotations[" TJ_ANNOTATION_DEPENDENCY "]: ")) != 0 ||
		    memcmp(&dep, &untouched, sizeof(dep)) != 0)
			abort();
	} else {
		if (strlen(text) > TJ_DEPENDENCY_MAX_LENGTH)
			abort();
		check_terms(&dep);
		check_round_trip(&dep);
		check_evaluation(&dep, seed, now);
	}
	free(text);
	return 0;
}
