/* The bounded file reader: regular files up to the limit, and nothing that could block the
 * loop or grow without bound. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/fileio.h"

/* A read that blocks fails the test instead of hanging it. */
#define BLOCK_GUARD_SECONDS 10

struct dir {
	char path[64];
};

static int setup(void **state)
{
	struct dir *d = calloc(1, sizeof(*d));

	assert_non_null(d);
	snprintf(d->path, sizeof(d->path), "/tmp/tj-fileio-test-XXXXXX");
	assert_non_null(mkdtemp(d->path));
	*state = d;
	return 0;
}

static int teardown(void **state)
{
	struct dir *d = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d->path);
	assert_int_equal(system(cmd), 0);
	free(d);
	return 0;
}

static void write_file(const char *path, const char *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

/* Reads path and checks that the outputs are untouched on failure. */
static int read_checked(const char *path, size_t max, unsigned flags, char **ret, size_t *ret_len)
{
	char *buf = (char *)&buf;
	size_t len = 4242;
	int r = tj_read_file(path, max, flags, &buf, &len);

	if (r < 0) {
		assert_ptr_equal(buf, (char *)&buf);
		assert_int_equal(len, 4242);
		return r;
	}
	*ret = buf;
	*ret_len = len;
	return 0;
}

struct size_case {
	const char *name;
	size_t size, max;
	int want_rc;
};

static const struct size_case size_cases[] = {
	{ "empty", 0, 16, 0 },
	{ "small", 5, 16, 0 },
	{ "exactly the limit", 16, 16, 0 },
	{ "one byte over the limit", 17, 16, -E2BIG },
	{ "far over the limit", 100000, 16, -E2BIG },
	{ "larger than the first buffer", 10000, 20000, 0 },
	{ "a limit of zero, empty", 0, 0, 0 },
	{ "a limit of zero, one byte", 1, 0, -E2BIG },
};

static void test_regular_files(void **state)
{
	struct dir *d = *state;
	char path[128];

	snprintf(path, sizeof(path), "%s/f", d->path);
	for (size_t i = 0; i < sizeof(size_cases) / sizeof(size_cases[0]); i++) {
		const struct size_case *c = &size_cases[i];
		char *data = malloc(c->size + 1), *buf = NULL;
		size_t len = 0;

		print_message("# case: %s\n", c->name);
		assert_non_null(data);
		for (size_t k = 0; k < c->size; k++)
			data[k] = (char)('a' + k % 26);
		write_file(path, data, c->size);
		assert_int_equal(read_checked(path, c->max, 0, &buf, &len), c->want_rc);
		if (c->want_rc == 0) {
			assert_int_equal(len, c->size);
			assert_memory_equal(buf, data, c->size);
			assert_int_equal(buf[len], '\0');
			free(buf);
		}
		free(data);
	}
}

static void test_missing_file_and_directory(void **state)
{
	struct dir *d = *state;
	char path[128], *buf;
	size_t len;

	snprintf(path, sizeof(path), "%s/missing", d->path);
	assert_int_equal(read_checked(path, 16, 0, &buf, &len), -ENOENT);
	assert_int_equal(read_checked(d->path, 16, 0, &buf, &len), -EISDIR);
	assert_int_equal(read_checked(d->path, 16, TJ_READ_FILE_STREAMS, &buf, &len), -EISDIR);
}

/* A FIFO without a writer would block an open or read for good: it is refused at once. */
static void test_fifo_is_refused_without_blocking(void **state)
{
	struct dir *d = *state;
	char path[128], *buf;
	size_t len;

	snprintf(path, sizeof(path), "%s/fifo", d->path);
	assert_int_equal(mkfifo(path, 0600), 0);
	alarm(BLOCK_GUARD_SECONDS);
	assert_int_equal(read_checked(path, 16, 0, &buf, &len), -EINVAL);
	alarm(0);
}

static void test_character_device_is_refused(void **state)
{
	char *buf = NULL;
	size_t len = 0;

	assert_int_equal(read_checked("/dev/null", 16, 0, &buf, &len), -EINVAL);
	assert_int_equal(read_checked("/dev/null", 16, TJ_READ_FILE_STREAMS, &buf, &len), 0);
	assert_int_equal(len, 0);
	assert_string_equal(buf, "");
	free(buf);
}

/* A pipe's contents, through /dev/fd, as a shell's <(...) passes them; streams only. */
static void read_pipe(const char *data, size_t n, size_t max, unsigned flags, int want_rc)
{
	int fds[2];
	char path[64], *buf = NULL;
	size_t len = 0;

	assert_int_equal(pipe(fds), 0);
	assert_int_equal(write(fds[1], data, n), (ssize_t)n);
	close(fds[1]);
	snprintf(path, sizeof(path), "/dev/fd/%d", fds[0]);
	alarm(BLOCK_GUARD_SECONDS);
	assert_int_equal(read_checked(path, max, flags, &buf, &len), want_rc);
	alarm(0);
	close(fds[0]);
	if (want_rc == 0) {
		assert_int_equal(len, n);
		assert_memory_equal(buf, data, n);
		assert_int_equal(buf[len], '\0');
		free(buf);
	}
}

static void test_streams(void **state)
{
	static char big[10000];

	memset(big, 'x', sizeof(big));
	read_pipe("kind: TrainJob\n", 15, 64, 0, -EINVAL);
	read_pipe("kind: TrainJob\n", 15, 64, TJ_READ_FILE_STREAMS, 0);
	read_pipe(big, sizeof(big), sizeof(big), TJ_READ_FILE_STREAMS, 0);
	read_pipe(big, sizeof(big), sizeof(big) - 1, TJ_READ_FILE_STREAMS, -E2BIG);
}

/* procfs reports a size of 0: the reader reads what is there, still within the limit. */
static void test_procfs(void **state)
{
	char *buf = NULL;
	size_t len = 0;

	assert_int_equal(read_checked("/proc/self/stat", 1 << 16, 0, &buf, &len), 0);
	assert_true(len > 0);
	assert_int_equal(strlen(buf), len);
	assert_non_null(strchr(buf, ')'));
	free(buf);
	assert_int_equal(read_checked("/proc/self/stat", 4, 0, &buf, &len), -E2BIG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_regular_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_file_and_directory, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fifo_is_refused_without_blocking, setup,
		                                teardown),
		cmocka_unit_test(test_character_device_is_refused),
		cmocka_unit_test(test_streams),
		cmocka_unit_test(test_procfs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
