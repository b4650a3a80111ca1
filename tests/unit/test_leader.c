#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "controller/leader/leader.h"
#include "controller/leader/leader_internal.h"

#define ME    "me_1"
#define OTHER "other_2"

static const struct tj_leader_timings defaults = TJ_LEADER_TIMINGS_DEFAULT;

struct decide_case {
	const char *name;
	bool exists;
	const char *holder;
	int64_t duration_s;
	uint64_t observed_ms;
	bool leading;
	uint64_t renewed_ms;
	uint64_t now_ms;
	enum tj_leader_decision want;
};

static const struct decide_case decide_cases[] = {
	{ "no lease yet: create it", false, "", 0, 0, false, 0, 5000, TJ_LEADER_ACQUIRE },
	{ "fresh lease of another, just seen", true, OTHER, 15, 5000, false, 0, 5000,
	  TJ_LEADER_WAIT },
	{ "another's lease unchanged 14.999 s", true, OTHER, 15, 5000, false, 0, 19999,
	  TJ_LEADER_WAIT },
	{ "another's lease unchanged 15 s: expired by observation", true, OTHER, 15, 5000, false, 0,
	  20000, TJ_LEADER_ACQUIRE },
	{ "the record's own duration counts, not ours", true, OTHER, 60, 5000, false, 0, 20000,
	  TJ_LEADER_WAIT },
	{ "our own lease: renew", true, ME, 15, 5000, true, 5000, 7000, TJ_LEADER_RENEW },
	{ "our own lease before we knew we lead (answer lost): renew", true, ME, 15, 5000, false, 0,
	  7000, TJ_LEADER_RENEW },
	{ "renewed 9.999 s ago: still ours", true, ME, 15, 5000, true, 5000, 14999,
	  TJ_LEADER_RENEW },
	{ "renew deadline passed: lost", true, ME, 15, 5000, true, 5000, 15000, TJ_LEADER_LOST },
	{ "renew deadline passed, even with the lease gone", false, "", 0, 0, true, 5000, 15000,
	  TJ_LEADER_LOST },
	{ "another holder while we lead: lost", true, OTHER, 15, 9000, true, 5000, 9000,
	  TJ_LEADER_LOST },
	{ "we lead and the lease was deleted: create it again", false, "", 0, 0, true, 5000, 7000,
	  TJ_LEADER_ACQUIRE },
	{ "released (holder empty, duration 1): take it at once", true, "", 1, 5000, false, 0, 5000,
	  TJ_LEADER_ACQUIRE },
	{ "holder kept, duration 1: 0.999 s after seeing it", true, OTHER, 1, 5000, false, 0, 5999,
	  TJ_LEADER_WAIT },
	{ "holder kept, duration 1: 1 s after seeing it", true, OTHER, 1, 5000, false, 0, 6000,
	  TJ_LEADER_ACQUIRE },
	{ "duration 0: expired as soon as seen", true, OTHER, 0, 5000, false, 0, 5000,
	  TJ_LEADER_ACQUIRE },
};

static void test_decide_table(void **state)
{
	for (size_t i = 0; i < sizeof(decide_cases) / sizeof(decide_cases[0]); i++) {
		const struct decide_case *c = &decide_cases[i];
		struct tj_leader_view v = {
			.exists = c->exists,
			.record = { .duration_s = c->duration_s, .transitions = 2 },
			.observed_ms = c->observed_ms,
			.leading = c->leading,
			.renewed_ms = c->renewed_ms,
		};

		print_message("# case: %s\n", c->name);
		strcpy(v.record.holder, c->holder);
		strcpy(v.record.renew_time, "2024-01-02T03:04:05.123456Z");
		assert_int_equal(tj_leader_decide(&v, ME, c->now_ms, &defaults), c->want);
	}
}

/* A sequence of reads of the Lease, each at a local time: the decision after each. */
struct read_step {
	const char *renew_time; /* the only field that changes */
	uint64_t now_ms;
	uint64_t want_observed_ms;
	enum tj_leader_decision want;
};

struct skew_case {
	const char *name;
	struct read_step steps[4];
	size_t n_steps;
};

static const struct skew_case skew_cases[] = {
	{ "a renewTime years in the past is not expired",
	  { { "2001-01-01T00:00:00.000000Z", 5000, 5000, TJ_LEADER_WAIT },
	    { "2001-01-01T00:00:00.000000Z", 19999, 5000, TJ_LEADER_WAIT },
	    { "2001-01-01T00:00:00.000000Z", 20000, 5000, TJ_LEADER_ACQUIRE } },
	  3 },
	{ "a renewTime years in the future does not extend the lease",
	  { { "2099-01-01T00:00:00.000000Z", 5000, 5000, TJ_LEADER_WAIT },
	    { "2099-01-01T00:00:00.000000Z", 20000, 5000, TJ_LEADER_ACQUIRE } },
	  2 },
	{ "a renewal moving backwards (the holder's clock set back) still counts",
	  { { "2024-06-01T12:00:10.000000Z", 5000, 5000, TJ_LEADER_WAIT },
	    { "2024-06-01T11:00:00.000000Z", 12000, 12000, TJ_LEADER_WAIT },
	    { "2024-06-01T11:00:00.000000Z", 26999, 12000, TJ_LEADER_WAIT },
	    { "2024-06-01T11:00:00.000000Z", 27000, 12000, TJ_LEADER_ACQUIRE } },
	  4 },
};

static void test_expiry_ignores_the_clocks_in_the_record(void **state)
{
	for (size_t i = 0; i < sizeof(skew_cases) / sizeof(skew_cases[0]); i++) {
		const struct skew_case *c = &skew_cases[i];
		struct tj_leader_view v = { 0 };

		print_message("# case: %s\n", c->name);
		for (size_t s = 0; s < c->n_steps; s++) {
			const struct read_step *st = &c->steps[s];
			struct tj_lease_record rec = { .holder = OTHER, .duration_s = 15 };

			strcpy(rec.acquire_time, "2024-06-01T10:00:00.000000Z");
			strcpy(rec.renew_time, st->renew_time);
			tj_leader_observe(&v, &rec, st->now_ms);
			assert_true(v.exists);
			assert_int_equal(v.observed_ms, st->want_observed_ms);
			assert_string_equal(v.record.renew_time, st->renew_time);
			assert_int_equal(tj_leader_decide(&v, ME, st->now_ms, &defaults), st->want);
		}
	}
}

static void test_observe_any_field_change_restarts_the_clock(void **state)
{
	struct tj_lease_record base = { .holder = OTHER, .duration_s = 15, .transitions = 1 };
	struct tj_lease_record changed[4];
	struct tj_leader_view v = { 0 };

	strcpy(base.acquire_time, "2024-06-01T10:00:00.000000Z");
	strcpy(base.renew_time, "2024-06-01T10:00:00.000000Z");
	for (int i = 0; i < 4; i++)
		changed[i] = base;
	strcpy(changed[0].holder, "third_3");
	changed[1].duration_s = 30;
	strcpy(changed[2].acquire_time, "2024-06-01T10:00:01.000000Z");
	changed[3].transitions = 2;
	for (int i = 0; i < 4; i++) {
		tj_leader_observe(&v, &base, 1000);
		tj_leader_observe(&v, &base, 2000);
		assert_int_equal(v.observed_ms, 1000);
		tj_leader_observe(&v, &changed[i], 3000 + (uint64_t)i);
		assert_int_equal(v.observed_ms, 3000 + i);
		v.exists = false;
	}
}

static void test_record_next(void **state)
{
	struct tj_lease_record old = { .holder = OTHER, .duration_s = 15, .transitions = 3 };
	const char *now = "2024-06-01T12:00:00.000001Z";
	struct tj_lease_record got;

	strcpy(old.acquire_time, "2024-06-01T10:00:00.000000Z");
	strcpy(old.renew_time, "2024-06-01T11:59:58.000000Z");

	/* Taking over starts a new term. */
	tj_lease_record_next(&old, TJ_LEADER_ACQUIRE, ME, 15, now, &got);
	assert_string_equal(got.holder, ME);
	assert_int_equal(got.duration_s, 15);
	assert_string_equal(got.acquire_time, now);
	assert_string_equal(got.renew_time, now);
	assert_int_equal(got.transitions, 4);

	/* Renewing keeps the term. */
	strcpy(old.holder, ME);
	tj_lease_record_next(&old, TJ_LEADER_RENEW, ME, 4, now, &got);
	assert_string_equal(got.holder, ME);
	assert_int_equal(got.duration_s, 4);
	assert_string_equal(got.acquire_time, "2024-06-01T10:00:00.000000Z");
	assert_string_equal(got.renew_time, now);
	assert_int_equal(got.transitions, 3);

	/* A new Lease starts at 0 transitions. */
	tj_lease_record_next(NULL, TJ_LEADER_ACQUIRE, ME, 15, now, &got);
	assert_string_equal(got.holder, ME);
	assert_string_equal(got.acquire_time, now);
	assert_string_equal(got.renew_time, now);
	assert_int_equal(got.transitions, 0);

	/* The release: no holder, one second, both times now, the count unchanged. */
	tj_lease_record_release(&old, now, &got);
	assert_string_equal(got.holder, "");
	assert_int_equal(got.duration_s, 1);
	assert_string_equal(got.acquire_time, now);
	assert_string_equal(got.renew_time, now);
	assert_int_equal(got.transitions, 3);
}

static const char lease_json[] =
        "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\","
        "\"metadata\":{\"name\":\"trainjob-controller\",\"namespace\":\"default\","
        "\"resourceVersion\":\"812\",\"labels\":{\"a\":\"b\"}},"
        "\"spec\":{\"holderIdentity\":\"other_2\",\"leaseDurationSeconds\":15,"
        "\"acquireTime\":\"2024-06-01T10:00:00.000000Z\","
        "\"renewTime\":\"2024-06-01T11:59:58.123456Z\",\"leaseTransitions\":3,"
        "\"strategy\":\"OldestEmulationVersion\"}}";

static void test_record_json(void **state)
{
	cJSON *lease = cJSON_Parse(lease_json), *want;
	struct tj_lease_record rec, back;
	char *got;

	assert_non_null(lease);
	assert_int_equal(tj_lease_record_from_json(lease, &rec), 0);
	assert_string_equal(rec.holder, "other_2");
	assert_int_equal(rec.duration_s, 15);
	assert_string_equal(rec.acquire_time, "2024-06-01T10:00:00.000000Z");
	assert_string_equal(rec.renew_time, "2024-06-01T11:59:58.123456Z");
	assert_int_equal(rec.transitions, 3);

	/* The release written over it keeps metadata (resourceVersion: a conditional PUT) and
	 * the fields of the spec it does not own. */
	tj_lease_record_release(&rec, "2024-06-01T12:00:00.000000Z", &back);
	assert_int_equal(tj_lease_record_to_json(&back, lease), 0);
	want = cJSON_Parse(
	        "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\","
	        "\"metadata\":{\"name\":\"trainjob-controller\",\"namespace\":\"default\","
	        "\"resourceVersion\":\"812\",\"labels\":{\"a\":\"b\"}},"
	        "\"spec\":{\"holderIdentity\":\"\",\"leaseDurationSeconds\":1,"
	        "\"acquireTime\":\"2024-06-01T12:00:00.000000Z\","
	        "\"renewTime\":\"2024-06-01T12:00:00.000000Z\",\"leaseTransitions\":3,"
	        "\"strategy\":\"OldestEmulationVersion\"}}");
	got = cJSON_PrintUnformatted(lease);
	if (!cJSON_Compare(lease, want, true))
		fail_msg("got %s", got);
	free(got);
	assert_int_equal(tj_lease_record_from_json(lease, &rec), 0);
	assert_memory_equal(&rec, &back, sizeof(rec));
	cJSON_Delete(want);
	cJSON_Delete(lease);
}

static void test_record_json_edges(void **state)
{
	struct tj_lease_record rec;
	char long_holder[400];
	char *text;
	cJSON *j;

	/* No spec: nobody holds it. */
	j = cJSON_Parse("{\"metadata\":{\"name\":\"x\"}}");
	memset(&rec, 'x', sizeof(rec));
	assert_int_equal(tj_lease_record_from_json(j, &rec), 0);
	assert_string_equal(rec.holder, "");
	assert_string_equal(rec.renew_time, "");
	assert_int_equal(rec.duration_s, 0);
	assert_int_equal(rec.transitions, 0);
	/* Written back, empty times are left out and the spec is created. */
	assert_int_equal(tj_lease_record_to_json(&rec, j), 0);
	text = cJSON_PrintUnformatted(j);
	assert_string_equal(text, "{\"metadata\":{\"name\":\"x\"},\"spec\":{\"holderIdentity\":"
	                          "\"\",\"leaseDurationSeconds\":0,\"leaseTransitions\":0}}");
	free(text);
	cJSON_Delete(j);

	j = cJSON_Parse("[]");
	assert_int_equal(tj_lease_record_from_json(j, &rec), -EINVAL);
	cJSON_Delete(j);
	j = cJSON_Parse("{\"spec\":\"no\"}");
	assert_int_equal(tj_lease_record_from_json(j, &rec), -EINVAL);
	cJSON_Delete(j);

	memset(long_holder, 'h', sizeof(long_holder) - 1);
	long_holder[sizeof(long_holder) - 1] = '\0';
	j = cJSON_CreateObject();
	cJSON_AddStringToObject(cJSON_AddObjectToObject(j, "spec"), "holderIdentity", long_holder);
	assert_int_equal(tj_lease_record_from_json(j, &rec), -E2BIG);
	cJSON_Delete(j);

	/* Numbers out of int32 range read as 0. */
	j = cJSON_Parse("{\"spec\":{\"leaseDurationSeconds\":1e12,\"leaseTransitions\":\"3\"}}");
	assert_int_equal(tj_lease_record_from_json(j, &rec), 0);
	assert_int_equal(rec.duration_s, 0);
	assert_int_equal(rec.transitions, 0);
	cJSON_Delete(j);
}

struct timings_case {
	const char *name;
	struct tj_leader_timings t;
	int want_rc;
	const char *want_err;
};

static const struct timings_case timings_cases[] = {
	{ "controller-runtime's defaults", { 15000, 10000, 2000 }, 0, "" },
	{ "short ones for tests", { 4000, 3000, 500 }, 0, "" },
	{ "renew deadline equal to the lease",
	  { 15000, 15000, 2000 },
	  -EINVAL,
	  "the renew deadline (15s) must be shorter than the lease duration (15s)" },
	{ "renew deadline just 1.2 retry periods",
	  { 15000, 2400, 2000 },
	  -EINVAL,
	  "the renew deadline (2400ms) must be longer than 1.2 times the retry period (2s)" },
	{ "lease not whole seconds",
	  { 1500, 1000, 500 },
	  -EINVAL,
	  "the lease duration (1500ms) must be a whole number of seconds" },
	{ "no retry period",
	  { 15000, 10000, 0 },
	  -EINVAL,
	  "the retry period must be longer than 0" },
	{ "lease over an hour",
	  { 3601000, 10000, 2000 },
	  -EINVAL,
	  "the lease duration (3601s) must not be longer than 1h" },
};

static void test_timings_check_table(void **state)
{
	for (size_t i = 0; i < sizeof(timings_cases) / sizeof(timings_cases[0]); i++) {
		const struct timings_case *c = &timings_cases[i];
		char err[160] = "";

		print_message("# case: %s\n", c->name);
		assert_int_equal(tj_leader_timings_check(&c->t, err, sizeof(err)), c->want_rc);
		assert_string_equal(err, c->want_err);
	}
}

static void test_identity(void **state)
{
	uint8_t random[16];
	char buf[64];

	for (int i = 0; i < 16; i++)
		random[i] = (uint8_t)(i | 0xf0);
	/* A version 4 UUID after the host name, whatever the random bytes were. */
	assert_int_equal(tj_leader_identity("node-a", random, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "node-a_f0f1f2f3-f4f5-46f7-b8f9-fafbfcfdfeff");
	assert_int_equal(tj_leader_identity("node-a", random, buf, 43), -E2BIG);
	assert_int_equal(tj_leader_identity("node-a", random, buf, 44), 0);
}

/* A lease lost while the process runs ends it with a failure, to restart as a follower; lost
 * once a SIGTERM has begun the shutdown (its renewals answered 429 while the writes drain),
 * the process still stops as it was asked, with 0. */
static void test_lost_lease_exit_status(void **state)
{
	(void)state;
	assert_int_equal(tj_leader_lost_exit_status(false), EXIT_FAILURE);
	assert_int_equal(tj_leader_lost_exit_status(true), EXIT_SUCCESS);
}

static void test_microtime_shape(void **state)
{
	char t[TJ_MICROTIME_LEN];
	const char *shape = "dddd-dd-ddTdd:dd:dd.ddddddZ";

	tj_microtime_now(t);
	assert_int_equal(strlen(t), strlen(shape));
	for (size_t i = 0; shape[i]; i++) {
		if (shape[i] == 'd')
			assert_true(t[i] >= '0' && t[i] <= '9');
		else
			assert_int_equal(t[i], shape[i]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decide_table),
		cmocka_unit_test(test_expiry_ignores_the_clocks_in_the_record),
		cmocka_unit_test(test_observe_any_field_change_restarts_the_clock),
		cmocka_unit_test(test_record_next),
		cmocka_unit_test(test_record_json),
		cmocka_unit_test(test_record_json_edges),
		cmocka_unit_test(test_timings_check_table),
		cmocka_unit_test(test_identity),
		cmocka_unit_test(test_microtime_shape),
		cmocka_unit_test(test_lost_lease_exit_status),
	};
	return cmocka_run_group_tests_name("leader", tests, NULL, NULL);
}
