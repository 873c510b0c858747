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

# 1. Release build and the whole ctest suite (unit tests, conformance, every
#    example through `ss check`).
scripts/setup.sh --build-only
log "ctest on build/"
ctest --test-dir build --output-on-failure -j2 --timeout 600

# 2. Sanitizer job: ASan + UBSan, Debug: the unit-test binary, the fuzz
#    replay and `ss`.
gen_args=()
if [[ ! -f build-asan/CMakeCache.txt ]]; then
  if command -v ninja >/dev/null 2>&1; then
    gen_args=(-G Ninja)
  else
    gen_args=(-G "Unix Makefiles")
  fi
fi
launcher=()
if command -v ccache >/dev/null 2>&1; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
log "configuring build-asan/ (Debug, address;undefined)"
cmake -S . -B build-asan ${gen_args[@]+"${gen_args[@]}"} \
  -DCMAKE_BUILD_TYPE=Debug -DSS_SANITIZE="address;undefined" \
  ${launcher[@]+"${launcher[@]}"}
# `ss` too: the tests know its path (SS_BINARY) and may run it.
log "building ss_tests in build-asan/"
cmake --build build-asan --target ss_tests ss ss_fuzz_replay -j"$(nproc)"

tests_bin=build-asan/ss_tests
if [[ ! -x "$tests_bin" && -x build-asan/tests/ss_tests ]]; then
  tests_bin=build-asan/tests/ss_tests
fi
if [[ ! -x "$tests_bin" ]]; then
  echo "test.sh: no ss_tests binary in build-asan/" >&2
  exit 1
fi

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
# on state they share cause.
log "build-asan/ss conformance under ASan/UBSan (processes, then threads)"
ASAN_OPTIONS=detect_leaks=0 \
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  build-asan/ss conformance conformance > build-asan/conformance.log ||
  { tail -n 40 build-asan/conformance.log; exit 1; }
tail -n 1 build-asan/conformance.log
ASAN_OPTIONS=detect_leaks=0 \
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  build-asan/ss conformance conformance --engine threads --filter 'dist/*' \
  > build-asan/conformance_threads.log ||
  { tail -n 40 build-asan/conformance_threads.log; exit 1; }
tail -n 1 build-asan/conformance_threads.log
log "all tests passed"
