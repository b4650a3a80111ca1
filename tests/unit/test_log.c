#include <errno.h>
#include <iconv.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cJSON.h>
#include <cmocka.h>

#include "controller/log/log.h"

/* 2026-11-29T17:50:01.123Z */
#define FIXED_MS 1795974601123LL

struct capture {
	char text[4 * TJ_LOG_LINE_MAX];
	size_t len;
	int lines;
};

static struct capture cap;

static void capture_sink(void *userdata, const char *line, size_t len)
{
	struct capture *c = userdata;

	assert_true(len < sizeof(c->text) - c->len);
	memcpy(c->text + c->len, line, len);
	c->len += len;
	c->text[c->len] = '\0';
	c->lines++;
}

static int64_t fixed_clock(void)
{
	return FIXED_MS;
}

static int setup(void **state)
{
	memset(&cap, 0, sizeof(cap));
	tj_log_set_sink(capture_sink, &cap);
	tj_log_set_clock(fixed_clock);
	tj_log_set_level(TJ_LOG_INFO);
	return 0;
}

static int teardown(void **state)
{
	tj_log_set_sink(NULL, NULL);
	tj_log_set_clock(NULL);
	tj_log_set_level(TJ_LOG_INFO);
	return 0;
}

static void test_line_with_every_field_type(void **state)
{
	tj_log_info("reconciler", "created pod", TJ_STR("pod", "train-node-0-3"), TJ_INT("rank", 3),
	            TJ_INT("offset", -42), TJ_DOUBLE("seconds", 0.25), TJ_BOOL("adopted", false),
	            TJ_STR("node", NULL), TJ_ERR(-ENOENT));
	assert_string_equal(
	        cap.text,
	        "{\"ts\":\"2026-11-29T17:50:01.123Z\",\"level\":\"info\","
	        "\"logger\":\"reconciler\",\"msg\":\"created pod\","
	        "\"pod\":\"train-node-0-3\",\"rank\":3,\"offset\":-42,\"seconds\":0.25,"
	        "\"adopted\":false,\"node\":null,\"error\":\"No such file or directory\"}\n");
	assert_int_equal(cap.lines, 1);
}

static void test_message_without_fields(void **state)
{
	tj_log_error("main", "leader election lost");
	assert_string_equal(cap.text, "{\"ts\":\"2026-11-29T17:50:01.123Z\",\"level\":\"error\","
	                              "\"logger\":\"main\",\"msg\":\"leader election lost\"}\n");
}

struct escape_case {
	const char *in;
	const char *want; /* the JSON string, quotes included */
};

static const struct escape_case escapes[] = {
	{ "plain", "\"plain\"" },
	{ "say \"hi\"", "\"say \\\"hi\\\"\"" },
	{ "C:\\path", "\"C:\\\\path\"" },
	{ "a\nb\rc\td", "\"a\\nb\\rc\\td\"" },
	{ "bell\x01 esc\x1b", "\"bell\\u0001 esc\\u001b\"" },
	{ "del\x7f", "\"del\x7f\"" },
	{ "gr\xc3\xbc\xc3\x9f \xe2\x82\xac \xf0\x9f\x9a\x80",
	  "\"gr\xc3\xbc\xc3\x9f \xe2\x82\xac \xf0\x9f\x9a\x80\"" },
	{ "bad\xff byte", "\"bad\\ufffd byte\"" },
	{ "cut \xe2\x82", "\"cut \\ufffd\\ufffd\"" },
	{ "overlong \xc0\xaf", "\"overlong \\ufffd\\ufffd\"" },
	{ "surrogate \xed\xa0\x80", "\"surrogate \\ufffd\\ufffd\\ufffd\"" },
	{ "too big \xf4\x90\x80\x80", "\"too big \\ufffd\\ufffd\\ufffd\\ufffd\"" },
};

static void test_string_escaping(void **state)
{
	for (size_t i = 0; i < sizeof(escapes) / sizeof(escapes[0]); i++) {
		char want[256];

		print_message("# case: %s\n", escapes[i].want);
		cap.len = 0;
		tj_log_info("t", "m", TJ_STR("v", escapes[i].in));
		snprintf(want, sizeof(want),
		         "{\"ts\":\"2026-11-29T17:50:01.123Z\",\"level\":\"info\",\"logger\":\"t\","
		         "\"msg\":\"m\",\"v\":%s}\n",
		         escapes[i].want);
		assert_string_equal(cap.text, want);
	}
}

static void test_keys_and_message_are_escaped(void **state)
{
	tj_log_info("a\"b", "line1\nline2", TJ_STR("k\\ey", "v"));
	assert_string_equal(cap.text, "{\"ts\":\"2026-11-29T17:50:01.123Z\",\"level\":\"info\","
	                              "\"logger\":\"a\\\"b\",\"msg\":\"line1\\nline2\","
	                              "\"k\\\\ey\":\"v\"}\n");
}

static void test_doubles(void **state)
{
	tj_log_info("t", "m", TJ_DOUBLE("a", 0.1), TJ_DOUBLE("b", 1e-9), TJ_DOUBLE("c", 1234567.5),
	            TJ_DOUBLE("d", NAN), TJ_DOUBLE("e", -INFINITY), TJ_DOUBLE("f", 3));
	assert_string_equal(cap.text, "{\"ts\":\"2026-11-29T17:50:01.123Z\",\"level\":\"info\","
	                              "\"logger\":\"t\",\"msg\":\"m\",\"a\":0.1,\"b\":1e-09,"
	                              "\"c\":1234567.5,\"d\":null,\"e\":null,\"f\":3}\n");
}

static void test_level_filter(void **state)
{
	tj_log_debug("t", "hidden");
	assert_int_equal(cap.lines, 0);
	tj_log_warn("t", "shown");
	assert_int_equal(cap.lines, 1);
	assert_non_null(strstr(cap.text, "\"level\":\"warn\""));

	tj_log_set_level(TJ_LOG_DEBUG);
	assert_true(tj_log_enabled(TJ_LOG_DEBUG));
	tj_log_debug("t", "now shown");
	assert_int_equal(cap.lines, 2);
	assert_non_null(
	        strstr(cap.text, "\"level\":\"debug\",\"logger\":\"t\",\"msg\":\"now shown\""));

	tj_log_set_level(TJ_LOG_ERROR);
	assert_int_equal(tj_log_get_level(), TJ_LOG_ERROR);
	tj_log_warn("t", "hidden again");
	tj_log_info("t", "hidden again");
	assert_int_equal(cap.lines, 2);
	tj_log_error("t", "shown");
	assert_int_equal(cap.lines, 3);
}

static void test_real_clock_timestamp_shape(void **state)
{
	const char *shape = "{\"ts\":\"dddd-dd-ddTdd:dd:dd.dddZ\",\"level\"";

	tj_log_set_clock(NULL);
	tj_log_info("t", "real clock");
	for (size_t i = 0; shape[i]; i++) {
		if (shape[i] == 'd')
			assert_in_range(cap.text[i], '0', '9');
		else
			assert_int_equal(cap.text[i], shape[i]);
	}
}

static void test_oversized_field_is_dropped(void **state)
{
	static char big[TJ_LOG_LINE_MAX];

	memset(big, 'x', sizeof(big) - 1);
	tj_log_info("t", "m", TJ_STR("small", "kept"), TJ_STR("big", big), TJ_INT("after", 1));
	assert_string_equal(cap.text, "{\"ts\":\"2026-11-29T17:50:01.123Z\",\"level\":\"info\","
	                              "\"logger\":\"t\",\"msg\":\"m\",\"small\":\"kept\","
	                              "\"truncated\":true}\n");
}

static void test_oversized_message_is_replaced(void **state)
{
	static char big[TJ_LOG_LINE_MAX + 10];

	memset(big, '"', sizeof(big) - 1);
	tj_log_info("t", big, TJ_INT("n", 1));
	assert_string_equal(cap.text, "{\"ts\":\"2026-11-29T17:50:01.123Z\",\"level\":\"info\","
	                              "\"logger\":\"t\",\"msg\":\"(message too long)\",\"n\":1}\n");
}

/* Whatever bytes a field holds, the line is valid JSON, and valid UTF-8 comes back as it
 * went in. */
static uint32_t next_random(uint32_t *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	return *seed >> 16;
}

/* glibc's decoder as the judge of UTF-8 validity. */
static bool valid_utf8(const char *text, size_t len)
{
	iconv_t cd = iconv_open("UTF-8", "UTF-8");
	char out[4 * TJ_LOG_LINE_MAX], *inp = (char *)text, *outp = out;
	size_t inleft = len, outleft = sizeof(out);
	bool ok;

	assert_true(cd != (iconv_t)-1);
	ok = iconv(cd, &inp, &inleft, &outp, &outleft) != (size_t)-1 && inleft == 0;
	iconv_close(cd);
	return ok;
}

static void test_random_bytes_always_give_valid_json(void **state)
{
	static const char *const valid[] = { "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x9a\x80",
		                             "\xed\x9f\xbf" };
	uint32_t seed = 12345;
	int compared = 0;

	for (int round = 0; round < 2000; round++) {
		char in[256];
		size_t n = 0, want = 1 + next_random(&seed) % 60;
		cJSON *line, *v;

		/* Mostly ASCII (controls included), some valid multibyte characters, and now
		 * and then any byte at all. */
		while (n < want) {
			uint32_t pick = next_random(&seed) % 100;

			if (pick < 80) {
				in[n++] = (char)(1 + next_random(&seed) % 127);
			} else if (pick < 95) {
				const char *c = valid[next_random(&seed) % 4];

				memcpy(in + n, c, strlen(c));
				n += strlen(c);
			} else if (round % 2) {
				in[n++] = (char)(1 + next_random(&seed) % 255);
			}
		}
		in[n] = '\0';
		cap.len = 0;
		tj_log_info("t", in, TJ_STR(in, in));
		assert_int_equal(cap.text[cap.len - 1], '\n');
		assert_true(valid_utf8(cap.text, cap.len));
		line = cJSON_ParseWithLength(cap.text, cap.len);
		assert_non_null(line);
		v = cJSON_GetObjectItemCaseSensitive(line, "msg");
		assert_true(cJSON_IsString(v));
		if (round % 2 == 0) {
			/* Only valid UTF-8 went in: it comes back unchanged. */
			assert_string_equal(v->valuestring, in);
			v = cJSON_GetObjectItemCaseSensitive(line, in);
			assert_true(cJSON_IsString(v));
			assert_string_equal(v->valuestring, in);
			compared++;
		}
		cJSON_Delete(line);
	}
	assert_int_equal(compared, 1000);
	/* The judge itself rejects what the log must never write. */
	assert_false(valid_utf8("\xff", 1));
	assert_false(valid_utf8("\xed\xa0\x80", 3));
	assert_false(valid_utf8("\xc0\xaf", 2));
}

struct level_case {
	const char *text;
	int want_rc;
	enum tj_log_level want;
};

static const struct level_case levels[] = {
	{ "error", 0, TJ_LOG_ERROR },
	{ "warn", 0, TJ_LOG_WARN },
	{ "info", 0, TJ_LOG_INFO },
	{ "debug", 0, TJ_LOG_DEBUG },
	{ "panic", 0, TJ_LOG_ERROR },
	{ "dpanic", 0, TJ_LOG_ERROR },
	{ "0", 0, TJ_LOG_INFO },
	{ "1", 0, TJ_LOG_DEBUG },
	{ "5", 0, TJ_LOG_DEBUG },
	{ "", -EINVAL, 0 },
	{ "INFO", -EINVAL, 0 },
	{ "warning", -EINVAL, 0 },
	{ "-1", -EINVAL, 0 },
	{ "2x", -EINVAL, 0 },
	{ "99999999999999999999", -EINVAL, 0 },
};

static void test_level_parse(void **state)
{
	for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++) {
		enum tj_log_level got = (enum tj_log_level)77;

		print_message("# case: '%s'\n", levels[i].text);
		assert_int_equal(tj_log_level_parse(levels[i].text, &got), levels[i].want_rc);
		assert_int_equal(got, levels[i].want_rc == 0 ? levels[i].want : 77);
	}
}

static void test_level_names(void **state)
{
	assert_string_equal(tj_log_level_name(TJ_LOG_ERROR), "error");
	assert_string_equal(tj_log_level_name(TJ_LOG_WARN), "warn");
	assert_string_equal(tj_log_level_name(TJ_LOG_INFO), "info");
	assert_string_equal(tj_log_level_name(TJ_LOG_DEBUG), "debug");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_line_with_every_field_type, setup, teardown),
		cmocka_unit_test_setup_teardown(test_message_without_fields, setup, teardown),
		cmocka_unit_test_setup_teardown(test_string_escaping, setup, teardown),
		cmocka_unit_test_setup_teardown(test_keys_and_message_are_escaped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_doubles, setup, teardown),
		cmocka_unit_test_setup_teardown(test_level_filter, setup, teardown),
		cmocka_unit_test_setup_teardown(test_real_clock_timestamp_shape, setup, teardown),
		cmocka_unit_test_setup_teardown(test_oversized_field_is_dropped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_oversized_message_is_replaced, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_random_bytes_always_give_valid_json, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_level_parse, setup, teardown),
		cmocka_unit_test_setup_teardown(test_level_names, setup, teardown),
	};
	return cmocka_run_group_tests_name("log", tests, NULL, NULL);
}
