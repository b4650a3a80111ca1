#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "reconcilers/json.h"
#include "reconcilers/policy/command_policy.h"
#include "reconcilers/policy/shell_lex.h"

#define MAX_ARGV 8

/* A container's command line and what the policy says of it. */
struct command_case {
	const char *argv[MAX_ARGV]; /* NULL-terminated */
	int64_t walltime;
	bool ended_by_success_policy;
	enum tj_command_verdict want;
	const char *want_part; /* the offending part, for a refusal */
};

#define SH(script)                                                                                 \
	{                                                                                          \
		"sh", "-c", script                                                                 \
	}
#define BASH(script)                                                                               \
	{                                                                                          \
		"/bin/bash", "-lc", script                                                         \
	}

static const struct command_case cases[] = {
	/* Refused: the idioms that hold a node for ever. */
	{ { "sleep", "infinity" }, 0, false, TJ_COMMAND_SLEEPS_FOREVER, "sleep infinity" },
	{ { "sleep", "inf" }, 0, false, TJ_COMMAND_SLEEPS_FOREVER, "sleep inf" },
	{ { "/bin/sleep", "INFINITY" },
	  0,
	  false,
	  TJ_COMMAND_SLEEPS_FOREVER,
	  "/bin/sleep INFINITY" },
	{ { "sleep", "5", "inf" }, 0, false, TJ_COMMAND_SLEEPS_FOREVER, "sleep 5 inf" },
	{ SH("sleep infinity"), 0, false, TJ_COMMAND_SLEEPS_FOREVER, "sleep infinity" },
	{ BASH("python train.py; sleep infinity"), 0, false, TJ_COMMAND_SLEEPS_FOREVER,
	  "sleep infinity" },
	{ BASH("python train.py && sleep infinity"), 0, false, TJ_COMMAND_SLEEPS_FOREVER,
	  "sleep infinity" },
	{ SH("python train.py || sleep inf"), 0, false, TJ_COMMAND_SLEEPS_FOREVER, "sleep inf" },
	{ SH("python train.py\n\nexec sleep infinity\n"), 0, false, TJ_COMMAND_SLEEPS_FOREVER,
	  "exec sleep infinity" },
	{ { "env", "-u", "X", "A=1", "sleep", "infinity" },
	  0,
	  false,
	  TJ_COMMAND_SLEEPS_FOREVER,
	  "env -u X A=1 sleep infinity" },
	{ { "/usr/bin/env", "bash", "-c", "nohup sleep infinity" },
	  0,
	  false,
	  TJ_COMMAND_SLEEPS_FOREVER,
	  "nohup sleep infinity" },
	{ SH("bash -c 'echo hi; sleep infinity'"), 0, false, TJ_COMMAND_SLEEPS_FOREVER,
	  "sleep infinity" },
	{ { "bash", "-o", "pipefail", "-ec", "python train.py | tee log\nsleep infinity" },
	  0,
	  false,
	  TJ_COMMAND_SLEEPS_FOREVER,
	  "sleep infinity" },
	{ SH("if [ -f done ]; then exit 0; else sleep infinity; fi"), 0, false,
	  TJ_COMMAND_SLEEPS_FOREVER, "sleep infinity" },
	{ SH("case $MODE in serve) sleep infinity;; *) python train.py;; esac"), 0, false,
	  TJ_COMMAND_SLEEPS_FOREVER, "sleep infinity" },
	{ SH("X=1 sleep infinity > /dev/null 2>&1"), 0, false, TJ_COMMAND_SLEEPS_FOREVER,
	  "X=1 sleep infinity" },
	{ { "tail", "-f", "/dev/null" }, 0, false, TJ_COMMAND_FOLLOWS, "tail -f /dev/null" },
	{ { "tail", "-F", "/dev/null" }, 0, false, TJ_COMMAND_FOLLOWS, "tail -F /dev/null" },
	{ SH("echo ready; tail -n 0 -f /dev/null"), 0, false, TJ_COMMAND_FOLLOWS,
	  "tail -n 0 -f /dev/null" },
	{ SH("python train.py > log; tail --follow=name log"), 0, false, TJ_COMMAND_FOLLOWS,
	  "tail --follow=name log" },
	{ SH("tail -f /dev/null | cat"), 0, false, TJ_COMMAND_FOLLOWS, "tail -f /dev/null" },
	{ SH("tail -f"), 0, false, TJ_COMMAND_FOLLOWS, "tail -f" },
	{ SH("while true; do sleep 60; done"), 0, false, TJ_COMMAND_LOOPS,
	  "while true; do sleep 60; done" },
	{ SH("while :; do :; done"), 0, false, TJ_COMMAND_LOOPS, "while :; do :; done" },
	{ SH("until false; do date; sleep 1; done"), 0, false, TJ_COMMAND_LOOPS,
	  "until false; do date; sleep 1; done" },
	{ SH("while true\ndo\n  python serve.py\ndone"), 0, false, TJ_COMMAND_LOOPS,
	  "while true; do python serve.py; done" },
	{ SH("while ((1)); do python serve.py; done"), 0, false, TJ_COMMAND_LOOPS,
	  "while 1; do python serve.py; done" },
	/* break leaves only the inner loop; exit in a subshell ends only the subshell. */
	{ SH("while true; do for f in a b; do break; done; done"), 0, false, TJ_COMMAND_LOOPS,
	  "while true; do for f in a b; do break; done; done" },
	{ SH("while true; do (exit 1); done"), 0, false, TJ_COMMAND_LOOPS,
	  "while true; do ( exit 1 ); done" },
	{ SH("while true; do echo x | break; done"), 0, false, TJ_COMMAND_LOOPS,
	  "while true; do echo x | break; done" },
	{ { "sleep", "7200" }, 3600, false, TJ_COMMAND_SLEEPS_PAST_WALLTIME, "sleep 7200" },
	{ { "sleep", "2h" }, 3600, false, TJ_COMMAND_SLEEPS_PAST_WALLTIME, "sleep 2h" },
	{ SH("python prep.py; sleep 1h"), 3600, false, TJ_COMMAND_SLEEPS_PAST_WALLTIME,
	  "sleep 1h" },
	{ { "sleep", "30m", "30m" },
	  3600,
	  false,
	  TJ_COMMAND_SLEEPS_PAST_WALLTIME,
	  "sleep 30m 30m" },
	{ { "cat" }, 0, false, TJ_COMMAND_READS_STDIN, "cat" },
	{ SH("echo hi; cat -"), 0, false, TJ_COMMAND_READS_STDIN, "cat -" },
	{ { "/usr/sbin/sshd", "-De" }, 0, false, TJ_COMMAND_SSHD, "/usr/sbin/sshd -De" },
	{ { "sshd", "-f", "/etc/sshd_config", "-D" },
	  0,
	  false,
	  TJ_COMMAND_SSHD,
	  "sshd -f /etc/sshd_config -D" },
	{ SH("sleep infinity & wait"), 0, false, TJ_COMMAND_WAITS, "wait" },
	{ SH("trap 'exit 0' TERM; tail -f /dev/null & wait $!"), 0, false, TJ_COMMAND_WAITS,
	  "wait $!" },

	/* Accepted: near misses that end by themselves. */
	{ { "python", "train.py" }, 0, false, TJ_COMMAND_OK, NULL },
	/* env with an option that lacks its argument runs nothing (found by fuzz_shell: the
	 * command's index went past the last word). */
	{ { "env", "-u" }, 0, false, TJ_COMMAND_OK, NULL },
	{ SH("env -C"), 0, false, TJ_COMMAND_OK, NULL },
	{ SH("exit) env <nv -u<"), 0, false, TJ_COMMAND_OK, NULL },
	{ { "torchrun", "--nproc-per-node=4", "train.py" }, 3600, false, TJ_COMMAND_OK, NULL },
	{ SH("python train.py; sleep 5"), 0, false, TJ_COMMAND_OK, NULL },
	{ SH("sleep 10 && torchrun --nproc-per-node=4 train.py"), 3600, false, TJ_COMMAND_OK,
	  NULL },
	{ SH("for epoch in 1 2 3; do python train.py --epoch $epoch; done"), 0, false,
	  TJ_COMMAND_OK, NULL },
	{ SH("epoch=0\nwhile [ $epoch -lt 10 ]; do\n  python train.py\n  epoch=$((epoch+1))\n"
	     "done"),
	  0, false, TJ_COMMAND_OK, NULL },
	{ SH("while (( epoch < 10 )); do python step.py; epoch=$((epoch+1)); done"), 0, false,
	  TJ_COMMAND_OK, NULL },
	/* A loop with a way out: its end is the program's decision, as any program's. */
	{ SH("while true; do python step.py || break; done"), 0, false, TJ_COMMAND_OK, NULL },
	{ SH("while :; do python step.py && break; sleep 5; done"), 0, false, TJ_COMMAND_OK, NULL },
	{ SH("while true; do if python finished.py; then exit 0; fi; sleep 60; done"), 0, false,
	  TJ_COMMAND_OK, NULL },
	{ SH("while true; do for f in a b; do break 2; done; done"), 0, false, TJ_COMMAND_OK,
	  NULL },
	{ SH("while true; do python step.py | tee -a log || break; done"), 0, false, TJ_COMMAND_OK,
	  NULL },
	{ SH("until python ready.py; do sleep 5; done; python train.py"), 0, false, TJ_COMMAND_OK,
	  NULL },
	{ SH("sleep infinity & python train.py"), 0, false, TJ_COMMAND_OK, NULL },
	{ SH("(tail -f /dev/null) & torchrun train.py"), 0, false, TJ_COMMAND_OK, NULL },
	{ SH("tail -f train.log | grep -m1 'loss <'"), 0, false, TJ_COMMAND_OK, NULL },
	{ SH("tail -f --pid=$$ train.log"), 0, false, TJ_COMMAND_OK, NULL },
	{ SH("python gen.py | tail -f"), 0, false, TJ_COMMAND_OK, NULL },
	{ { "tail", "-n", "100", "/var/log/train.log" }, 0, false, TJ_COMMAND_OK, NULL },
	{ SH("echo 'sleep infinity'; echo tail -f /dev/null"), 0, false, TJ_COMMAND_OK, NULL },
	{ SH("python train.py # then sleep infinity"), 0, false, TJ_COMMAND_OK, NULL },
	{ SH("f() { sleep infinity; }\npython train.py"), 0, false, TJ_COMMAND_OK, NULL },
	{ { "sleep", "600" }, 3600, false, TJ_COMMAND_OK, NULL },
	{ { "sleep", "99999" }, 0, false, TJ_COMMAND_OK, NULL },
	{ { "sleep", "$(DELAY)" }, 60, false, TJ_COMMAND_OK, NULL },
	{ SH("sleep $DELAY"), 60, false, TJ_COMMAND_OK, NULL },
	{ SH("sleep forever"), 0, false, TJ_COMMAND_OK, NULL },
	{ { "cat", "/etc/hosts" }, 0, false, TJ_COMMAND_OK, NULL },
	{ SH("cat <<EOF > /tmp/cfg\nsleep infinity\nEOF\npython train.py"), 0, false, TJ_COMMAND_OK,
	  NULL },
	{ SH("nvidia-smi | cat"), 0, false, TJ_COMMAND_OK, NULL },
	{ SH("cat < data.txt | python train.py"), 0, false, TJ_COMMAND_OK, NULL },
	{ { "/usr/sbin/sshd", "-De" }, 0, true, TJ_COMMAND_OK, NULL },
	{ { "sshd", "-d" }, 0, false, TJ_COMMAND_OK, NULL },
	{ { "bash", "run.sh" }, 0, false, TJ_COMMAND_OK, NULL },
	{ { "bash", "-c", "$(SCRIPT)" }, 0, false, TJ_COMMAND_OK, NULL },
	{ { "python", "-c", "while True: pass" }, 0, false, TJ_COMMAND_OK, NULL },
	{ SH("echo 'unterminated; sleep infinity"), 0, false, TJ_COMMAND_OK, NULL },
	{ SH("done; fi; ) python train.py"), 0, false, TJ_COMMAND_OK, NULL },
	{ { NULL }, 0, false, TJ_COMMAND_OK, NULL },
};

static size_t argc_of(const char *const *argv)
{
	size_t n = 0;

	while (n < MAX_ARGV && argv[n])
		n++;
	return n;
}

/* A case's name on one line (TAP reads every line of the output). */
static void print_case(const char *const *argv, size_t n, bool accepted)
{
	char line[200] = "";
	size_t len = 0;

	for (size_t i = 0; i < n && len < sizeof(line); i++)
		len += (size_t)snprintf(line + len, sizeof(line) - len, "%s%s", i ? " " : "",
		                        argv[i]);
	for (char *c = line; *c; c++)
		if (*c == '\n')
			*c = '|';
	print_message("# case: %s%s\n", n ? line : "(no command)", accepted ? " (accepted)" : "");
}

static void test_command_table(void **state)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct command_case *c = &cases[i];
		const struct tj_command_rules rules = {
			.walltime = c->walltime,
			.ended_by_success_policy = c->ended_by_success_policy,
		};
		struct tj_command_finding f = { .verdict = TJ_COMMAND_OK };
		size_t n = argc_of(c->argv);
		int rc;

		print_case(c->argv, n, c->want == TJ_COMMAND_OK);
		rc = tj_command_check(c->argv, n, &rules, &f);
		if (c->want == TJ_COMMAND_OK) {
			assert_int_equal(rc, 0);
			continue;
		}
		assert_int_equal(rc, -EPERM);
		assert_int_equal(f.verdict, c->want);
		assert_string_equal(f.part, c->want_part);
		assert_true(strncmp(f.text, "'", 1) == 0);
		assert_non_null(strstr(f.text, c->want_part));
	}
}

/* The sentences a person reads, whole. */
static void test_command_texts(void **state)
{
	static const struct {
		const char *argv[4];
		int64_t walltime;
		const char *want;
	} texts[] = {
		{ { "sleep", "infinity" }, 0, "'sleep infinity' never exits" },
		{ { "sleep", "2h" },
		  3600,
		  "'sleep 2h' sleeps 7200 s, as long as the job's walltime of 3600 s or longer, "
		  "so the job can never finish by itself" },
		{ { "tail", "-f", "/dev/null" },
		  0,
		  "'tail -f /dev/null' never exits (it follows /dev/null or standard input for "
		  "ever)" },
		{ { "tail", "-f", "x.log" },
		  0,
		  "'tail -f x.log' never exits (it follows its files for ever; tail --pid ends "
		  "with a process)" },
		{ SH("while true; do sleep 1; done"), 0,
		  "'while true; do sleep 1; done' never exits (its condition is always true and "
		  "nothing in it breaks out or exits)" },
		{ { "cat" },
		  0,
		  "'cat' never exits (cat with no input waits on standard input, which nothing "
		  "closes)" },
		{ { "sshd", "-D" },
		  0,
		  "'sshd -D' never exits (sshd -D serves until it is stopped, and no success "
		  "policy of the runtime stops this step)" },
		{ SH("sleep inf & wait"), 0, "'wait' waits for 'sleep inf', which never exits" },
	};

	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		const struct tj_command_rules rules = { .walltime = texts[i].walltime };
		struct tj_command_finding f;

		assert_int_equal(
		        tj_command_check(texts[i].argv, argc_of(texts[i].argv), &rules, &f),
		        -EPERM);
		assert_string_equal(f.text, texts[i].want);
	}
}

/* A part longer than a message can quote is cut at a character, control characters and
 * bytes that are not UTF-8 are replaced. */
static void test_command_part_bounds(void **state)
{
	const struct tj_command_rules rules = { 0 };
	struct tj_command_finding f;
	char word[400];
	const char *long_file[] = { "tail", "-f", word };
	const char *spaces[] = SH("sleep\tinf\n");
	const char *binary[] = { "tail", "-f", "\x01\xff.log" };

	/* "é" is two bytes: a cut in the middle of one backs off to its start. */
	for (size_t i = 0; i + 2 < sizeof(word); i += 2)
		memcpy(word + i, "\xc3\xa9", 2);
	word[sizeof(word) - 2] = '\0';
	assert_int_equal(tj_command_check(long_file, 3, &rules, &f), -EPERM);
	assert_true(strlen(f.part) < TJ_COMMAND_PART_MAX);
	assert_int_equal(strncmp(f.part, "tail -f \xc3\xa9", 10), 0);
	assert_string_equal(f.part + strlen(f.part) - 3, "...");
	/* "tail -f " (8 bytes), whole é (2 each), "..." (3). */
	assert_int_equal(strlen(f.part) % 2, 1);

	assert_int_equal(tj_command_check(spaces, 3, &rules, &f), -EPERM);
	assert_string_equal(f.part, "sleep inf");
	assert_int_equal(tj_command_check(binary, 3, &rules, &f), -EPERM);
	assert_string_equal(f.part, "tail -f  ?.log");
}

/* What cannot be read is refused, whatever it holds; what the shell refuses is not. */
static void test_command_unreadable(void **state)
{
	const struct tj_command_rules rules = { 0 };
	struct tj_command_finding f;
	size_t len = TJ_SH_MAX_SCRIPT + 16, n = 0;
	char *script = malloc(len + 1);
	const char *argv[] = { "sh", "-c", script };

	assert_non_null(script);
	memset(script, ' ', len);
	memcpy(script, "python train.py", 15);
	script[len] = '\0';
	assert_int_equal(tj_command_check(argv, 3, &rules, &f), -EPERM);
	assert_int_equal(f.verdict, TJ_COMMAND_UNREADABLE);
	assert_string_equal(f.part, "");
	assert_string_equal(f.text, "the script is longer than the command policy reads (64 KiB, "
	                            "8192 words); put it in a file of the image or of a volume");
	/* 100 nested groups, even in the background. */
	for (int i = 0; i < 100; i++)
		n += (size_t)sprintf(script + n, "{ ");
	n += (size_t)sprintf(script + n, "true");
	for (int i = 0; i < 100; i++)
		n += (size_t)sprintf(script + n, "; }");
	sprintf(script + n, " & python train.py");
	assert_int_equal(tj_command_check(argv, 3, &rules, &f), -EPERM);
	assert_int_equal(f.verdict, TJ_COMMAND_UNREADABLE);
	/* 30 levels are read. */
	n = 0;
	for (int i = 0; i < 30; i++)
		n += (size_t)sprintf(script + n, "( ");
	n += (size_t)sprintf(script + n, "sleep infinity");
	for (int i = 0; i < 30; i++)
		n += (size_t)sprintf(script + n, " )");
	assert_int_equal(tj_command_check(argv, 3, &rules, &f), -EPERM);
	assert_int_equal(f.verdict, TJ_COMMAND_SLEEPS_FOREVER);
	free(script);
}

struct pod_case {
	const char *name;
	const char *spec; /* the pod's spec, JSON with ' for " */
	const char *want; /* NULL: accepted; else the message */
};

static const struct pod_case pod_cases[] = {
	{ "a training container", "{'containers':[{'name':'node','command':['torchrun','t.py']}]}",
	  NULL },
	{ "a container of the image's default command", "{'containers':[{'name':'node'}]}", NULL },
	{ "args without a command", "{'containers':[{'name':'node','args':['sleep','infinity']}]}",
	  "container node of step node: 'sleep infinity' never exits; a job must exit by itself "
	  "when its work is done, so it is refused before any pod starts" },
	{ "command and args together",
	  "{'containers':[{'name':'node','command':['bash','-c'],'args':['python t.py; tail -f "
	  "/dev/null']}]}",
	  "container node of step node: 'tail -f /dev/null' never exits (it follows /dev/null or "
	  "standard input for ever); a job must exit by itself when its work is done, so it is "
	  "refused before any pod starts" },
	{ "a second container",
	  "{'containers':[{'name':'node','command':['python','t.py']},{'name':'keepalive',"
	  "'command':['sleep','inf']}]}",
	  "container keepalive of step node: 'sleep inf' never exits; a job must exit by itself "
	  "when its work is done, so it is refused before any pod starts" },
	{ "an init container",
	  "{'initContainers':[{'name':'wait','command':['cat']}],'containers':[{'name':'node'}]}",
	  "init container wait of step node: 'cat' never exits (cat with no input waits on "
	  "standard input, which nothing closes); a job must exit by itself when its work is "
	  "done, so it is refused before any pod starts" },
	{ "a sidecar, which Kubernetes stops",
	  "{'initContainers':[{'name':'logs','restartPolicy':'Always','command':['tail','-f',"
	  "'/dev/null']}],'containers':[{'name':'node','command':['python','t.py']}]}",
	  NULL },
	{ "items of the wrong type",
	  "{'containers':[{'name':'node','command':[1,{'a':2}],'args':'sleep infinity'}]}", NULL },
};

static cJSON *parse_quoted(const char *text)
{
	char *s = strdup(text);
	cJSON *j;

	assert_non_null(s);
	for (char *p = s; *p; p++)
		if (*p == '\'')
			*p = '"';
	j = cJSON_Parse(s);
	assert_non_null(j);
	free(s);
	return j;
}

static void test_command_pod(void **state)
{
	const struct tj_command_rules rules = { 0 };

	for (size_t i = 0; i < sizeof(pod_cases) / sizeof(pod_cases[0]); i++) {
		const struct pod_case *c = &pod_cases[i];
		cJSON *pod = cJSON_CreateObject();
		struct tj_problem why = { "", "" };
		int rc;

		print_message("# case: %s\n", c->name);
		assert_non_null(pod);
		cJSON_AddItemToObject(pod, "spec", parse_quoted(c->spec));
		rc = tj_command_check_pod(pod, "node", &rules, &why);
		if (!c->want) {
			assert_int_equal(rc, 0);
			assert_string_equal(why.reason, "");
		} else {
			assert_int_equal(rc, -EPERM);
			assert_string_equal(why.reason, "PolicyViolation");
			assert_string_equal(why.message, c->want);
		}
		cJSON_Delete(pod);
	}
}

/* Only an operator exempts: a ClusterTrainingRuntime's label, the config's namespaces. */
static void test_command_exempt(void **state)
{
	char *names[] = { "services", "notebooks" };
	const struct tj_config config = { .command_exempt_namespaces = names,
		                          .n_command_exempt_namespaces = 2 };
	struct tj_runtime cluster = { .kind = TJ_RUNTIME_CLUSTER, .allow_long_running = true };
	struct tj_runtime namespaced = { .kind = TJ_RUNTIME_NAMESPACED,
		                         .allow_long_running = true };
	struct tj_runtime plain = { .kind = TJ_RUNTIME_CLUSTER };

	assert_true(tj_command_exempt(NULL, &cluster, "team-a"));
	assert_false(tj_command_exempt(NULL, &namespaced, "team-a"));
	assert_false(tj_command_exempt(NULL, &plain, "team-a"));
	assert_false(tj_command_exempt(&config, &plain, "team-a"));
	assert_true(tj_command_exempt(&config, &plain, "notebooks"));
	assert_false(tj_command_exempt(&config, &plain, "notebook"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_command_table),
		cmocka_unit_test(test_command_texts),
		cmocka_unit_test(test_command_part_bounds),
		cmocka_unit_test(test_command_unreadable),
		cmocka_unit_test(test_command_pod),
		cmocka_unit_test(test_command_exempt),
	};
	return cmocka_run_group_tests_name("command_policy", tests, NULL, NULL);
}
