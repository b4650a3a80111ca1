#!/usr/bin/env bash
# The project's test command (README.md, "The two commands"; docs/testing.md). On a fresh
# Debian 12 machine it installs what is missing, then runs, in order:
#   lint      clang-format against .clang-format, cppcheck, every status key in the CRD, no
#             include cycle between folders (tests/tools/include-cycles.py), the doc test
#             (tests/docs/check_docs.py: the docs against the code), and this command's
#             reading of JUnit reports (tests/tools/junit-counts.py --self-test)
#   rules     the alerts of deploy/monitoring with promtool: check rules, and their unit tests
#             (tests/promtool)
#   unit      the cmocka unit tests (meson suite "unit"), in a plain build and under
#             ASan+UBSan; and the benchmarks' self-tests (tests/bench/*.py --self-test)
#   valgrind  the unit tests of the plain build under valgrind's memcheck
#   fuzz      every libFuzzer target for a short while (TJC_FUZZ_SECONDS, default 15), with
#             its final coverage, as many at a time as the machine has cores (TJC_FUZZ_JOBS);
#             TJC_FUZZ_KEEP=1 merges what reached new coverage into tests/fuzz/corpus (the
#             long mode: TJC_FUZZ_SECONDS=3600 TJC_FUZZ_KEEP=1); TJC_FUZZ_TARGETS="fuzz_watch
#             fuzz_config" runs only those, so that the long mode can be split between runs
#   e2e       the pytest suites in tests/e2e, in two halves side by side, each against a local
#             cluster of the test command's own, started for the stage and stopped at its
#             end, so a demo's cluster and controller (scripts/demo.sh) are never part of the
#             tests: the first half on "trainjob-test" (TJC_TEST_CLUSTER renames it), with the
#             real nodes, the second (e2e_second_half below) on "<cluster>-b", without them.
#             TJC_CLUSTER=NAME runs the first half on that cluster instead, started if it is
#             not running and then stopped at the end, and the second on NAME-b.
#             tests/e2e/test_kueue.py runs after the second half on a third cluster, with
#             Kueue ("<cluster>-kueue", the other suites' clusters run none), whenever Kueue's
#             build is in the cache (deploy/local/cluster.sh kueue-built); TJC_KUEUE=1
#             builds it first when it is not (Kueue's first build adds 36 min
#             on a shared two-core machine, 11 min of CPU time, to a fresh machine's first
#             run, so it is not the default), TJC_KUEUE=0 leaves Kueue out.
#             Before the suites the real nodes get their training image
#             (deploy/local/cluster.sh real-image), built first when its inputs changed.
#   soak      the chaos soak tests/soak/soak.py for TJC_SOAK_SECONDS (default 300; 3600 for
#             a release check) with the seed TJC_SOAK_SEED (default: a new one, printed), on
#             a cluster of its own that it always starts afresh and removes at its end:
#             TJC_CLUSTER if given (with "-soak" appended when the e2e stage runs too, so
#             the two never share), else "trainjob-soak".
#   soak-regressions  (only when named) the soak once for each seed of tests/soak/regressions,
#             the seeds that once broke it, each on a fresh cluster as the soak's.
# Each stage builds what it uses, prints its own result line with its time, and the last
# line counts the tests of all stages, "all: N passed, M failed, K skipped"; the lines above it
# name the suites that skipped tests and say how many and why. A stage that
# ran no test at all has failed. A failure anywhere makes the exit status non-zero, but
# later stages still run, so one run shows every failure.
#
# Arguments select stages (default: all), e.g. `scripts/test.sh lint unit`.
# Extra pytest arguments go in TJC_PYTEST_ARGS (e.g. "-k smoke").
set -uo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
# A cluster named by the caller, or the test command's own.
given_cluster=${TJC_CLUSTER:-}
if [[ -z $given_cluster ]]; then
	TJC_CLUSTER=${TJC_TEST_CLUSTER:-trainjob-test}
	unset TJC_KUBECONFIG
fi
# shellcheck source=deploy/local/env.sh
. deploy/local/env.sh

all_stages=(lint rules unit valgrind fuzz e2e soak)
# Stages run only when named: too long for every run.
named_stages=(soak-regressions)
stages=("$@")
((${#stages[@]})) || stages=("${all_stages[@]}")

passed=0
failed=0
skipped=0
failed_stages=()
# The suites that skipped tests, and a line on each: "<stage>: <suite>: <n> skipped (<why>)".
skipped_suites=()
skip_notes=()
# What a failed stage said of its failure, repeated at the end (a log cut to its last lines
# still shows it): one line each.
failure_notes=()
# The tests that failed and then passed when run again (e2e_pytest): one line each.
flaky_notes=()

stage_start=$SECONDS
stage_skipped=0
say() {
	printf '\n=== %s: %s\n' "$1" "$2"
	stage_start=$SECONDS
	stage_skipped=0
}
# Tests of a suite that a stage did not run: counted in the stage's line and the last line,
# and named at the end with why, so that no skip goes unseen. Arguments: stage, suite,
# count, why.
note_skipped() {
	(($3 > 0)) || return 0
	stage_skipped=$((stage_skipped + $3))
	skipped=$((skipped + $3))
	skipped_suites+=("$2")
	skip_notes+=("$1: $2: $3 skipped ($4)")
}
# Reads a JUnit report (tests/tools/junit-counts.py): sets junit_passed and junit_failed,
# notes the tests that failed (repeated at the end) and the report's skips for the stage, its
# tests and suites named by their files under dir. With a fourth argument, the report of the
# failed tests run once more: a test that passed there counts as passed and is named at the
# end as flaky. A report that cannot be read counts as one failure. Arguments: stage, report,
# dir[, rerun report].
junit_counts() {
	local out kind a b c
	junit_passed=0 junit_failed=1
	out=$(tests/tools/junit-counts.py "$2" "$3" ${4:+"$4"} 2>&1) || {
		printf '%s\n' "$out"
		return 1
	}
	read -r junit_passed junit_failed _ <<<"${out%%$'\n'*}"
	while IFS=$'\t' read -r kind a b c; do
		case $kind in
		failed) failure_notes+=("$1: $a: $b") ;;
		flaky) flaky_notes+=("$1: $a: failed ($b), then passed when run again") ;;
		skipped) note_skipped "$1" "$a" "$b" "$c" ;;
		esac
	done < <(printf '%s\n' "$out" | tail -n +2)
}
record() { # stage, passed, failed
	local ok=$2 bad=$3
	if ((ok + bad == 0)); then
		echo "$1: no test ran"
		bad=1
	fi
	passed=$((passed + ok))
	failed=$((failed + bad))
	if ((bad > 0)); then failed_stages+=("$1"); fi
	printf '%s: %d passed, %d failed, %d skipped (%d s)\n' "$1" "$ok" "$bad" "$stage_skipped" \
		$((SECONDS - stage_start))
}

c_sources() { git ls-files '*.c' '*.h'; }

stage_lint() {
	say lint "clang-format, cppcheck, the status keys in the CRD, include cycles, the doc test, the skip counts"
	local ok=0 bad=0 f
	local unformatted=()
	while IFS= read -r f; do
		clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || unformatted+=("$f")
	done < <(c_sources)
	if ((${#unformatted[@]})); then
		printf 'not formatted (run clang-format -i): %s\n' "${unformatted[@]}"
		bad=$((bad + 1))
	else
		ok=$((ok + 1))
	fi
		if cppcheck --enable=warning,performance,portability --error-exitcode=1 --inline-suppr \
		--suppress=missingIncludeSystem -q -I . \
		base kube informers reconcilers controller cli tests/unit; then
		ok=$((ok + 1))
	else
		bad=$((bad + 1))
	fi
	# A status key the CRD does not name is pruned by the API server, silently.
	if tests/tools/status-schema.py; then
		ok=$((ok + 1))
	else
		bad=$((bad + 1))
	fi
	# The folders stand in layers: none includes another that includes it back, directly or
	# around a circle (docs/architecture.md says which may include which).
	if tests/tools/include-cycles.py; then
		ok=$((ok + 1))
	else
		bad=$((bad + 1))
	fi
	# Every config key, metric, alert, state and reason of the code in its page of docs/, and
	# the pages' commands, paths and links.
	if tests/docs/check_docs.py; then
		ok=$((ok + 1))
	else
		bad=$((bad + 1))
	fi
	# This command's own reading of JUnit reports, on made-up ones: a skip it missed would
	# go unseen.
	if tests/tools/junit-counts.py --self-test; then
		ok=$((ok + 1))
	else
		bad=$((bad + 1))
	fi
	record lint "$ok" "$bad"
}

stage_rules() {
	say rules "promtool check rules and promtool test rules"
	local out ok bad
	out=$(tests/promtool/check-rules.py build/promtool 2>&1)
	printf '%s\n' "$out"
	ok=$(printf '%s\n' "$out" | sed -n 's/^promtool: \([0-9]\+\) passed, \([0-9]\+\) failed$/\1/p')
	bad=$(printf '%s\n' "$out" | sed -n 's/^promtool: \([0-9]\+\) passed, \([0-9]\+\) failed$/\2/p')
	[[ -n $ok ]] || { ok=0; bad=1; }
	record rules "$ok" "$bad"
}

# Configures (once) and builds a meson build directory; on failure prints why and records
# a failed stage. Arguments: stage, directory, meson setup options.
meson_build() {
	local name=$1 dir=$2
	shift 2
	if [[ ! -f $dir/build.ninja ]]; then
		meson setup "$dir" "$@" >/dev/null || {
			record "$name" 0 1
			return 1
		}
	fi
	if ! ninja -C "$dir" >"$dir/ninja.log" 2>&1; then
		cat "$dir/ninja.log"
		record "$name" 0 1
		return 1
	fi
}

# Runs the unit suite of a built meson directory (extra arguments go to meson test).
# Prints the meson summary and records the subtests (cmocka cases) that passed and failed,
# and the programs and subtests that skipped (meson's SKIP, from its JUnit report
# meson-logs/<stage>.junit.xml, or <stage>-<setup>.junit.xml under a test setup); a run in
# which no test program passed has failed, whatever meson's exit status says.
meson_unit() {
	local name=$1 dir=$2
	shift 2
	local out rc ok bad programs report junit=""
	rm -f "$dir/meson-logs/$name".junit.xml "$dir/meson-logs/$name"-*.junit.xml
	out=$(ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
		UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		meson test -C "$dir" --suite unit --print-errorlogs --logbase "$name" "$@" 2>&1)
	rc=$?
	printf '%s\n' "$out" | grep -Ev '^(Expected Fail|Unexpected Pass|Skipped|Timeout):' | sed '/^$/d'
	ok=$(printf '%s\n' "$out" | sed -n 's/.* \([0-9]\+\) subtests passed.*/\1/p' | awk '{s += $1} END {print s + 0}')
	bad=$(printf '%s\n' "$out" | grep -cE ' (FAIL|ERROR|TIMEOUT) ' || true)
	programs=$(printf '%s\n' "$out" | sed -n 's/^Ok: *\([0-9]\+\).*/\1/p')
	if ((${programs:-0} == 0)); then
		echo "$name: meson ran no test of the suite 'unit'"
		bad=$((bad + 1))
	fi
	((rc != 0 && bad == 0)) && bad=1
	for report in "$dir/meson-logs/$name".junit.xml "$dir/meson-logs/$name"-*.junit.xml; do
		[[ -f $report ]] && junit=$report && break
	done
	junit_counts "$name" "${junit:-$dir/meson-logs/$name.junit.xml}" tests/unit || bad=$((bad + 1))
	record "$name" "${ok:-0}" "$bad"
}

stage_unit() {
	say unit "cmocka unit tests (plain build)"
	meson_build unit build/release && meson_unit unit build/release
	say unit-sanitizers "cmocka unit tests under AddressSanitizer and UBSan"
	meson_build unit-sanitizers build/sanitize -Db_sanitize=address,undefined -Db_lundef=false &&
		meson_unit unit-sanitizers build/sanitize
	say bench-self-tests "the benchmarks' figures, parsers and fits on made-up data"
	bench_self_tests
}

# Each benchmark's --self-test (no cluster): a benchmark that misread its data would print
# wrong figures and still exit 0.
bench_self_tests() {
	local ok=0 bad=0 b out
	for b in tests/bench/bench_admission.py tests/bench/bench_scale.py tests/bench/bench_vs_kubeflow.py \
		tests/bench/bench_vs_kueue.py; do
		if out=$(python3 "$b" --self-test 2>&1); then
			ok=$((ok + 1))
		else
			printf '%s\n' "$out" | tail -20
			echo "FAILED: $b --self-test"
			bad=$((bad + 1))
		fi
	done
	record bench-self-tests "$ok" "$bad"
}

# The plain build's unit tests under memcheck, through the test setup "valgrind" of
# tests/unit/meson.build (definite leaks and memory errors fail a test; meson's timeouts and
# the tests' own time limits are scaled for valgrind's slowness).
stage_valgrind() {
	say valgrind "cmocka unit tests under valgrind (plain build)"
	meson_build valgrind build/release && meson_unit valgrind build/release --setup valgrind
}

# One libFuzzer target, $1, for TJC_FUZZ_SECONDS from its corpus: prints its result line (and
# on a failure the end of its log, keeping the failing input); its status says whether it passed.
fuzz_one() {
	local t=$1 dir=$2 name corpus work rc=0
	name=$(basename "$t")
	corpus=tests/fuzz/corpus/$name
	work=$(mktemp -d)
	[[ -d $corpus ]] && cp -r "$corpus"/. "$work"/
	if "$t" -max_total_time="${TJC_FUZZ_SECONDS:-15}" -print_final_stats=1 \
		-artifact_prefix="$work/" "$work" >"$work/log" 2>&1; then
		echo "$name: $(grep -Eo "Done [0-9]+ runs.*" "$work/log" | tail -1);" \
			"$(grep -Eo "DONE +cov: [0-9]+ ft: [0-9]+ corp: [0-9]+/[^ ]+" "$work/log" | tail -1 | sed 's/DONE */final /')"
		# Inputs that reached new coverage join the repo's corpus (libFuzzer's merge
		# keeps only those), so that a long run's finds are kept for the short ones.
		if [[ ${TJC_FUZZ_KEEP:-0} == 1 ]]; then
			mkdir -p "$corpus"
			"$t" -merge=1 "$corpus" "$work" >"$work/merge.log" 2>&1 &&
				echo "$name: corpus now $(find "$corpus" -type f | wc -l) inputs"
		fi
	else
		rc=1
		# One block, so that a target running beside it cannot cut into it.
		{
			echo "$name: FAILED"
			tail -40 "$work/log"
			# The input that failed, kept for replaying it: $t <file>.
			mkdir -p "$dir/artifacts"
			cp "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-* "$dir/artifacts/" 2>/dev/null &&
				echo "$name: the failing input is kept in $dir/artifacts"
		} >"$work/report" 2>&1
		cat "$work/report"
	fi
	rm -rf "$work"
	return "$rc"
}

stage_fuzz() {
	# As many targets at a time as the machine has cores (TJC_FUZZ_JOBS): each is one
	# process on one core, and each still runs for its whole time.
	local jobs=${TJC_FUZZ_JOBS:-$(nproc)}
	say fuzz "libFuzzer targets, ${TJC_FUZZ_SECONDS:-15} s each, $jobs at a time"
	if [[ ! -f tests/fuzz/meson.build ]]; then
		echo "no fuzz targets yet"
		return
	fi
	local dir=build/fuzz ok=0 bad=0 t results name
	# A leak inside libfyaml itself is not ours to fix (tests/fuzz/lsan.supp says which).
	local -x LSAN_OPTIONS=suppressions=$repo/tests/fuzz/lsan.supp
	if [[ ! -f $dir/build.ninja ]]; then
		CC=clang meson setup "$dir" -Dfuzz=true -Dtests=false -Db_lundef=false >/dev/null || {
			record fuzz 0 1
			return
		}
	fi
	ninja -C "$dir" >"$dir.log" 2>&1 || {
		cat "$dir.log"
		record fuzz 0 1
		return
	}
	results=$(mktemp -d)
	for t in "$dir"/tests/fuzz/fuzz_*; do
		[[ -f $t && -x $t ]] || continue
		name=$(basename "$t")
		if [[ -n ${TJC_FUZZ_TARGETS:-} && " $TJC_FUZZ_TARGETS " != *" $name "* ]]; then
			note_skipped fuzz "$name" 1 "not in TJC_FUZZ_TARGETS"
			continue
		fi
		while (($(jobs -rp | wc -l) >= jobs)); do wait -n; done
		{ fuzz_one "$t" "$dir" && touch "$results/$name.ok" || touch "$results/$name.bad"; } &
	done
	wait
	ok=$(find "$results" -name '*.ok' | wc -l)
	bad=$(find "$results" -name '*.bad' | wc -l)
	rm -rf "$results"
	record fuzz "$ok" "$bad"
}

# The e2e venv, (re)installed when tests/e2e/requirements.txt changes: the hash of the file
# it was installed from is stamped inside it.
e2e_venv() {
	local venv=$TJC_CACHE/venv want
	want=$(sha256sum tests/e2e/requirements.txt | cut -d' ' -f1)
	if [[ ! -x $venv/bin/pytest || $(cat "$venv/requirements.sha256" 2>/dev/null) != "$want" ]]; then
		{ [[ -x $venv/bin/pip ]] || python3 -m venv "$venv"; } &&
			"$venv/bin/pip" install -q -r tests/e2e/requirements.txt >&2 &&
			echo "$want" >"$venv/requirements.sha256" || return 1
	fi
	echo "$venv"
}

# The e2e suites run in two halves side by side, each against a cluster of its own: their tests
# mostly wait for simulated pods and for the controller, so two halves on two cores take about
# half the time of one run. The second half is these files; the first half is every other one
# (a new file joins it), among them the suites that need the real nodes or build images, which
# only the first half's cluster has. The halves are balanced by their times in a full run
# (docs/testing.md says how to re-balance them).
e2e_second_half=(
	test_command_policy.py test_dependency.py test_fault_tolerance.py test_informers.py
	test_kubeflow_examples.py test_leader_election.py test_metrics_auth.py test_mpi.py
	test_native_gang.py test_overrides.py test_refusals.py test_sbatch.py test_squeue.py
	test_stalled.py test_trainjob.py test_walltime.py
)

# Prints every line of standard input with the prefix $1, as it comes: the two halves'
# outputs interleave, each line saying whose it is.
prefixed() { sed -u "s/^/[$1] /"; }

# pytest on the cluster $1 with the venv $2 and the report $3, for the arguments that follow;
# the cluster is the environment's unless $1 names another. When a few tests fail (at most
# e2e_max_reruns), they run once more, alone, with the report $3.rerun: on a shared machine a
# test can lose a race with the load, and the rerun tells such a flake (named at the end of
# the run) from a fault (failed twice). Its status is the first pytest's.
e2e_max_reruns=5
e2e_pytest() {
	local cluster=$1 venv=$2 junit=$3 rc
	shift 3
	local -a env=(TJC_CLUSTER="$cluster" TJC_KUBECONFIG="$TJC_CACHE/kubeconfig-$cluster"
		KUBECONFIG="$TJC_CACHE/kubeconfig-$cluster" TJC_BUILD_DIR="$repo/build/release")
	rm -f "$junit.rerun"
	# shellcheck disable=SC2086
	env "${env[@]}" "$venv/bin/pytest" "$@" -v -p no:cacheprovider --junitxml="$junit" ${TJC_PYTEST_ARGS:-}
	rc=$?
	local -a again=()
	if ((rc != 0)) && [[ -f $junit ]]; then
		mapfile -t again < <(tests/tools/junit-counts.py --failed "$junit" tests/e2e)
	fi
	if ((${#again[@]} > 0 && ${#again[@]} <= e2e_max_reruns)); then
		echo "e2e: ${#again[@]} test(s) failed on '$cluster'; running them once more, alone: ${again[*]}"
		# shellcheck disable=SC2086
		env "${env[@]}" "$venv/bin/pytest" "${again[@]}" -v -p no:cacheprovider \
			--junitxml="$junit.rerun" ${TJC_PYTEST_ARGS:-}
	fi
	return "$rc"
}

# Starts the cluster $1 afresh (one left by an earlier run is removed first), without real
# nodes, with Kueue if $2 is 1, for the e2e stage's second half and the soak; its status says
# whether it came up, and one that did not is removed.
fresh_cluster() {
	local -a env=(TJC_CLUSTER="$1" TJC_KUBECONFIG="$TJC_CACHE/kubeconfig-$1")
	env "${env[@]}" deploy/local/cluster.sh down >/dev/null
	env "${env[@]}" TJC_KUEUE="$2" TJC_REAL_NODES=0 deploy/local/cluster.sh up && return 0
	cluster_down "$1"
	return 1
}

cluster_down() { TJC_CLUSTER=$1 TJC_KUBECONFIG=$TJC_CACHE/kubeconfig-$1 deploy/local/cluster.sh down; }

# The second half, with the venv $1: the files of e2e_second_half on "$TJC_CLUSTER-b", a
# cluster without real nodes or Kueue; then, when $2 is 1, tests/e2e/test_kueue.py on
# "$TJC_CLUSTER-kueue", a cluster with Kueue. The other suites' clusters run no Kueue, as
# Kueue's webhooks change every TrainJob labelled with a queue, and some of those suites look
# at what the controller does with that label when Kueue is absent. Each cluster is started
# for its suites and removed after. Writes the reports $3 and $4; the tests that restart an API
# server run (their clusters are always this run's own).
e2e_second() {
	local venv=$1 kueue=$2 junit=$3 kueue_junit=$4 b=$TJC_CLUSTER-b k=$TJC_CLUSTER-kueue f
	local -a files=()
	for f in "${e2e_second_half[@]}"; do files+=("tests/e2e/$f"); done
	# Without Kueue the Kueue suite runs here, where its tests skip, each saying why.
	[[ $kueue == 1 ]] || files+=(tests/e2e/test_kueue.py)
	if fresh_cluster "$b" 0; then
		TJC_E2E_DISRUPTIVE=1 e2e_pytest "$b" "$venv" "$junit" "${files[@]}"
	else
		echo "e2e: the cluster '$b' did not come up (above: why)"
	fi
	cluster_down "$b"
	[[ $kueue == 1 ]] || return 0
	echo "e2e: tests/e2e/test_kueue.py against the local cluster '$k', with Kueue"
	if fresh_cluster "$k" 1; then
		TJC_E2E_DISRUPTIVE=1 e2e_pytest "$k" "$venv" "$kueue_junit" tests/e2e/test_kueue.py
	else
		echo "e2e: the Kueue suite's cluster '$k' did not come up (above: why)"
	fi
	cluster_down "$k"
}

# The first half, with the venv $1: every file of tests/e2e but the second half's and the
# Kueue suite, on the stage's cluster (with real nodes), which it starts unless it is running
# (a cluster the caller named), and then stops if it started it. Writes the report $2.
e2e_first() {
	local venv=$1 junit=$2 started=0 f
	local -a args=(tests/e2e --ignore=tests/e2e/test_kueue.py)
	for f in "${e2e_second_half[@]}"; do args+=("--ignore=tests/e2e/$f"); done
	if [[ -z $given_cluster ]] && deploy/local/cluster.sh status >/dev/null 2>&1; then
		# Left by a test run that was interrupted: start afresh, as a run that finds none.
		echo "e2e: the test cluster '$TJC_CLUSTER' is still running from an earlier run; recreating it"
		deploy/local/cluster.sh down
	fi
	if ! deploy/local/cluster.sh status >/dev/null 2>&1; then
		TJC_KUEUE=0 deploy/local/cluster.sh up || {
			echo "e2e: the cluster '$TJC_CLUSTER' did not come up (above: why)"
			return 1
		}
		started=1
	fi
	# The real nodes' training image, built here rather than inside a test so that a build
	# shows its progress; tests/e2e/test_real_nodes.py fails with the reason when it is missing.
	if [[ ${TJC_REAL_NODES:-1} != 0 ]]; then
		deploy/local/cluster.sh real-image ||
			echo "e2e: the real nodes' training image is not on them (above: why)"
	fi
	# Tests that restart the API server run only on a cluster this run started itself, so a
	# developer's long-lived cluster is never disturbed (or TJC_E2E_DISRUPTIVE=1 asks for them).
	TJC_E2E_DISRUPTIVE=${TJC_E2E_DISRUPTIVE:-$started} e2e_pytest "$TJC_CLUSTER" "$venv" "$junit" "${args[@]}"
	((started)) && deploy/local/cluster.sh down
	return 0
}

stage_e2e() {
	say e2e "pytest against the local clusters '$TJC_CLUSTER' and '$TJC_CLUSTER-b', side by side (and Kueue's suite against '$TJC_CLUSTER-kueue')"
	local venv ok=0 bad=0 report rerun second
	# The suites run the controller and the tools of tests/tools from this build.
	meson_build e2e build/release || return
	venv=$(e2e_venv) || {
		record e2e 0 1
		return
	}
	# Kueue's suite runs on a cluster of its own with Kueue whenever Kueue's build is in the
	# cache; TJC_KUEUE=1 builds it when it is not, TJC_KUEUE=0 leaves it out. Without it the
	# suite's tests are counted and named as skipped.
	local kueue=${TJC_KUEUE:-}
	if [[ -z $kueue ]]; then
		if deploy/local/cluster.sh kueue-built >/dev/null; then
			kueue=1
		else
			kueue=0
			echo "e2e: Kueue's build is not in the cache, so tests/e2e/test_kueue.py" \
				"skips; TJC_KUEUE=1 scripts/test.sh e2e builds it once (15-30 min)"
		fi
	fi
	# Kueue is built (once) before the halves start, so that its build never runs beside them.
	if [[ $kueue == 1 ]] && ! deploy/local/cluster.sh kueue-built >/dev/null; then
		TJC_KUEUE=1 deploy/local/build-control-plane.sh || echo "e2e: Kueue did not build (above: why)"
	fi
	local junit=build/e2e-junit.xml junit_b=build/e2e-b-junit.xml kueue_junit=build/e2e-kueue-junit.xml
	mkdir -p build
	rm -f "$junit" "$junit_b" "$kueue_junit" "$junit.rerun" "$junit_b.rerun" "$kueue_junit.rerun"
	e2e_second "$venv" "$kueue" "$junit_b" "$kueue_junit" > >(prefixed "$TJC_CLUSTER-b") 2>&1 &
	second=$!
	e2e_first "$venv" "$junit" > >(prefixed "$TJC_CLUSTER") 2>&1
	wait "$second"
	# The prefixing processes end with their input; a moment lets their last lines out first.
	sleep 1
	local -a reports=("$junit" "$junit_b")
	[[ $kueue == 1 ]] && reports+=("$kueue_junit")
	for report in "${reports[@]}"; do
		if [[ -f $report ]]; then
			rerun=""
			[[ -f $report.rerun ]] && rerun=$report.rerun
			junit_counts e2e "$report" tests/e2e ${rerun:+"$rerun"}
			ok=$((ok + junit_passed)) bad=$((bad + junit_failed))
		else
			echo "e2e: no report $report: its suites did not run to their end (above: why)"
			bad=$((bad + 1))
		fi
	done
	record e2e "$ok" "$bad"
}

# The soak's cluster: TJC_CLUSTER if given (with "-soak" appended when the e2e stage runs in
# the same command, so the two never share), else trainjob-soak.
soak_cluster() {
	local cluster=${given_cluster:-trainjob-soak}
	case " ${stages[*]} " in
	*" e2e "*) [[ -n $given_cluster ]] && cluster=$given_cluster-soak ;;
	esac
	echo "$cluster"
}

# The invariants themselves, on made-up objects (tests/soak/test_checker.py), with the venv
# $2, for the stage $1: sets junit_passed and junit_failed, and notes what skipped.
soak_checker_tests() {
	local out rc junit=build/soak-checker-junit.xml
	mkdir -p build
	rm -f "$junit"
	out=$(KUBECONFIG=/dev/null "$2/bin/pytest" -q -p no:cacheprovider --junitxml="$junit" tests/soak 2>&1)
	rc=$?
	printf '%s\n' "$out" | grep -E '^(FAILED|ERROR)|passed|failed'
	junit_counts "$1" "$junit" tests/soak
	((rc == 0 || junit_failed > 0)) || junit_failed=1
}

# One soak on the cluster $1, started afresh and removed at the end (the faults delete nodes
# and restart the API server: always a cluster in a known state), with the venv $2, for $3
# seconds, with the seed $4 (empty: a new one). Its status is the soak's. The cluster has no
# real nodes (TJC_REAL_NODES=0): every job of the soak wants GPUs, which they lack.
soak_run() {
	local cluster=$1 venv=$2 seconds=$3 rc=0
	local -a seed=() env=(TJC_CLUSTER="$cluster" TJC_KUBECONFIG="$TJC_CACHE/kubeconfig-$cluster" TJC_REAL_NODES=0)
	[[ -n $4 ]] && seed=(--seed "$4")
	fresh_cluster "$cluster" 0 || return 1
	env "${env[@]}" KUBECONFIG="$TJC_CACHE/kubeconfig-$cluster" TJC_BUILD_DIR="$repo/build/release" \
		"$venv/bin/python" tests/soak/soak.py --duration "$seconds" "${seed[@]}" 2>&1 |
		tee "$TJC_CACHE/soak-last.log"
	rc=${PIPESTATUS[0]}
	if ((rc != 0)); then
		local note
		note=$(grep -E -A1 '^soak: (FAILED|ERROR)' "$TJC_CACHE/soak-last.log" | cut -c1-600 | tr '\n' ' ')
		failure_notes+=("${note:-soak: exit status $rc with no verdict line (its output is above)}")
	fi
	cluster_down "$cluster"
	return "$rc"
}

stage_soak() {
	local cluster seconds=${TJC_SOAK_SECONDS:-300} venv ok bad
	cluster=$(soak_cluster)
	say soak "chaos soak, $seconds s, on the local cluster '$cluster'"
	meson_build soak build/release || return
	venv=$(e2e_venv) || {
		record soak 0 1
		return
	}
	soak_checker_tests soak "$venv"
	ok=$junit_passed bad=$junit_failed
	if soak_run "$cluster" "$venv" "$seconds" "${TJC_SOAK_SEED:-}"; then
		ok=$((ok + 1))
	else
		bad=$((bad + 1))
	fi
	record soak "$ok" "$bad"
}

# Every seed of tests/soak/regressions (one a line: seed, seconds, what it found), each a
# soak of its own on a fresh cluster; about 7 minutes a seed of 300 s, hence run by name.
stage_soak_regressions() {
	local cluster venv ok bad seed seconds what
	local -a failed_seeds=()
	cluster=$(soak_cluster)
	say soak-regressions "the seeds of tests/soak/regressions, on the local cluster '$cluster'"
	meson_build soak-regressions build/release || return
	venv=$(e2e_venv) || {
		record soak-regressions 0 1
		return
	}
	soak_checker_tests soak-regressions "$venv"
	ok=$junit_passed bad=$junit_failed
	while read -r seed seconds what; do
		[[ -z $seed || $seed == \#* ]] && continue
		echo "soak-regressions: seed $seed, $seconds s ($what)"
		if soak_run "$cluster" "$venv" "$seconds" "$seed" </dev/null; then
			ok=$((ok + 1))
		else
			bad=$((bad + 1))
			failed_seeds+=("$seed")
		fi
	done <tests/soak/regressions
	((${#failed_seeds[@]})) && echo "soak-regressions: failed seeds: ${failed_seeds[*]}"
	record soak-regressions "$ok" "$bad"
}

scripts/install-deps.sh || exit 1
for s in "${stages[@]}"; do
	case " ${all_stages[*]} ${named_stages[*]} " in
	*" $s "*) "stage_${s//-/_}" ;;
	*)
		echo "test.sh: unknown stage '$s' (${all_stages[*]} ${named_stages[*]})" >&2
		exit 2
		;;
	esac
done

echo
if ((${#failed_stages[@]})); then
	echo "FAILED stages: ${failed_stages[*]}"
	for note in "${failure_notes[@]}"; do
		echo "  $note"
	done
fi
if ((${#flaky_notes[@]})); then
	echo "FLAKY (counted as passed):"
	for note in "${flaky_notes[@]}"; do
		echo "  $note"
	done
fi
if ((${#skip_notes[@]})); then
	echo "SKIPPED:"
	for note in "${skip_notes[@]}"; do
		echo "  $note"
	done
fi
# The suites that skipped go on a line of their own, so that the last line keeps the plain
# form "all: N passed, M failed, K skipped" that CI reads.
if ((${#skipped_suites[@]})); then
	names=$(printf '%s, ' "${skipped_suites[@]}")
	echo "skipped suites: ${names%, }"
fi
echo "all: $passed passed, $failed failed, $skipped skipped"
((failed == 0))
