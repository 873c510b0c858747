#!/usr/bin/env bash
# Runs every test: builds (incrementally) and runs ctest on build/, then the
# sanitizer job: the [fuzz] unit tests, the fuzz targets' corpus replay and
# the conformance suite built in build-asan/ under AddressSanitizer +
# UndefinedBehaviorSanitizer. Exits non-zero on any failure.
#
#   scripts/test.sh
#
# Needs the packages scripts/setup.sh installs (run `sudo scripts/setup.sh`
# once first).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

log() { printf 'test: %s\n' "$*"; }

# Each stage's wall time, printed as it ends and again at the end: the cost
# of this command is watched (CI runs it within a budget).
stage_name="" stage_start=0 times=()
stage() {
  local now=$EPOCHREALTIME
  if [[ -n "$stage_name" ]]; then
    times+=("$(awk -v s="$stage_start" -v e="$now" -v n="$stage_name" \
      'BEGIN { printf "%7.1f s  %s", e - s, n }')")
    log "stage done: ${times[-1]}"
  fi
  stage_name="$*" stage_start=$now
  [[ -n "$stage_name" ]] && log "stage: $stage_name"
  return 0
}
trap 'stage; ((${#times[@]})) && printf "test: %s\n" "stage times:" "${times[@]}"' EXIT

# 1. Release build and the whole ctest suite (unit tests, conformance, every
#    example through `ss check`).
stage "build build/ (Release, everything)"
scripts/setup.sh --build-only
stage "ctest on build/"
ctest --test-dir build --output-on-failure -j2 --timeout 600

# 2. Sanitizer job: ASan + UBSan at -Og with line tables only (-g1: the
#    reports' stacks keep their functions, files and lines; full -g made a
#    TU's compile 1.8x as long: 29 s against 16 s for check/decls.cpp).
#    -Og, not the -O1 ASan's documentation suggests: with UBSan's checks,
#    -O1's inlining made code generation most of the job (check/decls.cpp:
#    21 s at -O1, 11 s at -Og, 7 s at -O1 with ASan alone; the whole tree
#    1918 s of CPU at -O1, 1290 s at -Og), every check is kept, and the
#    tests below ran no slower (fuzz 26 s against 30 s, conformance 87 s
#    against 114 s). Built with what it runs only: `ss` (the tests know its
#    path, SS_BINARY, and may run it), the [fuzz] unit tests
#    (ss_fuzz_tests, their files alone) and the fuzz replay. ccache, when
#    installed, makes a rebuild cheap (CMakeLists.txt sets it as the
#    compiler launcher).
stage "build build-asan/ (ASan + UBSan, -Og -g1)"
gen_args=()
if [[ ! -f build-asan/CMakeCache.txt ]]; then
  if command -v ninja >/dev/null 2>&1; then
    gen_args=(-G Ninja)
  else
    gen_args=(-G "Unix Makefiles")
  fi
fi
log "configuring build-asan/ (Debug at -Og -g1, address;undefined)"
cmake -S . -B build-asan ${gen_args[@]+"${gen_args[@]}"} \
  -DCMAKE_BUILD_TYPE=Debug -DSS_SANITIZE="address;undefined" \
  -DCMAKE_CXX_FLAGS_DEBUG="-g1 -Og" -DCMAKE_C_FLAGS_DEBUG="-g1 -Og"
log "building ss, ss_fuzz_tests and ss_fuzz_replay in build-asan/"
cmake --build build-asan --target ss ss_fuzz_tests ss_fuzz_replay \
  -j"$(nproc)"

stage "[fuzz] unit tests under ASan/UBSan"
tests_bin=build-asan/ss_fuzz_tests

if [[ -z "$("$tests_bin" --list-test-names-only "[fuzz]" | grep -v '^$' || true)" ]]; then
  log "warning: no test case is tagged [fuzz] yet; the sanitizer job ran nothing"
fi
log "$tests_bin \"[fuzz]\" under ASan/UBSan"
ASAN_OPTIONS=detect_leaks=0 \
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  "$tests_bin" "[fuzz]"
# The fuzz targets' corpus (tests/fuzz/corpus/<target>/: the seeds, issue
# 16's hostile inputs and every regression input, and the seed folders
# targets.def names) replayed under the
# sanitizers, leaks included; an allocation over 256 MiB is a finding
# (Note [What a fuzz target calls a finding] in tests/fuzz/fuzz_util.h).
# Each line of targets.def: SS_FUZZ_TARGET(name, "seed folders").
stage "fuzz corpus replay under ASan/UBSan"
while IFS='|' read -r t seeds; do
  log "build-asan/ss_fuzz_replay $t under ASan/UBSan"
  # shellcheck disable=SC2086  # the seed folders are words
  ASAN_OPTIONS=detect_leaks=1:max_allocation_size_mb=256 \
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    build-asan/ss_fuzz_replay "$t" "tests/fuzz/corpus/$t" $seeds \
    2> "build-asan/fuzz_replay_$t.log" ||
    { tail -n 40 "build-asan/fuzz_replay_$t.log"; exit 1; }
done < <(sed -n 's/^SS_FUZZ_TARGET(\([a-z_]*\), "\([^"]*\)").*/\1|\2/p' \
  tests/fuzz/targets.def)
# The conformance suite under the sanitizers, both engines (conformance/
# README.md): the processes, as `ss run` runs them (the `ss worker`
# processes are this ASan build too), over every case; the ranks as threads
# of one process over dist/, where ASan sees the memory errors that races
# on state they share cause. The processes run each case on `cpu` and
# `cpu[0 1 2]` (a mesh's case on its own lists): two workers run the code
# three do, and three also split a batch unevenly; the Release suite runs
# `cpu[0 1]` too. (Issue 27's trim: two and a half minutes of CI.)
# Two halves at once (errors/ and spmd/ beside the other folders, about
# even): a one-device run uses one core of two.
stage "conformance under ASan/UBSan (processes)"
asan_conformance() {  # FOLDER... ; writes build-asan/conformance_<first>.log
  local log="build-asan/conformance_$1.log" dir
  : > "$log"
  for dir in "$@"; do
    ASAN_OPTIONS=detect_leaks=0 \
    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
      build-asan/ss conformance "conformance/$dir" \
        --devices cpu --devices 'cpu[0 1 2]' >> "$log" ||
      { tail -n 40 "$log"; return 1; }
  done
}
asan_conformance errors spmd & errors_job=$!
asan_conformance devices dist runtime spec || { wait "$errors_job"; exit 1; }
wait "$errors_job" || exit 1
grep -h "passed, " build-asan/conformance_errors.log \
  build-asan/conformance_devices.log
stage "conformance under ASan/UBSan (threads, dist/)"
ASAN_OPTIONS=detect_leaks=0 \
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  build-asan/ss conformance conformance --engine threads --filter 'dist/*' \
  > build-asan/conformance_threads.log ||
  { tail -n 40 build-asan/conformance_threads.log; exit 1; }
tail -n 1 build-asan/conformance_threads.log
stage
log "all tests passed"
