#!/usr/bin/env bash
# Runs the libFuzzer targets of tests/fuzz/ (targets.def): builds them with
# clang in build-fuzz/ (-DSS_FUZZ=ON: libFuzzer + ASan + UBSan), then runs
# each for SECONDS on its seed corpus, one target at a time, and prints each
# target's execution count. New inputs go to a scratch folder, never into
# the repo; a finding (crash, sanitizer report, leak, timeout, an
# allocation over the bound) is saved there too and makes the script exit 1.
#
#   scripts/fuzz.sh TARGET SECONDS [LIBFUZZER_FLAG...]
#   scripts/fuzz.sh all 60
#   scripts/fuzz.sh check 600 -runs=1000000   # stops at whichever comes first
#
# SS_FUZZ_SCRATCH (default: $TMPDIR/ss_fuzz_runs) holds, per target, new/
# (inputs the run found) and findings/ (libFuzzer's crash-*, leak-*,
# timeout-*, oom-* files). Add a finding to tests/fuzz/corpus/<target>/ as
# regress_<what> once it is fixed (tests/fuzz/README.md).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

log() { printf 'fuzz: %s\n' "$*"; }
usage() { sed -n '2,16p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

if (($# < 2)) || [[ "$1" == -h || "$1" == --help ]]; then
  usage >&2
  exit 64
fi
which_target=$1
seconds=$2
shift 2
# (0 would be libFuzzer's "no limit".)
if ! [[ "$seconds" =~ ^[1-9][0-9]*$ ]]; then
  echo "fuzz.sh: SECONDS must be a positive whole number, not '$seconds'" >&2
  exit 64
fi

mapfile -t all_targets < <(sed -n 's/^SS_FUZZ_TARGET(\([a-z_]*\),.*/\1/p' \
  tests/fuzz/targets.def)
# The repo's seed folders besides corpus/<target>/ (targets.def).
seeds_of() {
  sed -n "s/^SS_FUZZ_TARGET($1, \"\([^\"]*\)\").*/\1/p" tests/fuzz/targets.def
}
if [[ "$which_target" == all ]]; then
  targets=("${all_targets[@]}")
elif printf '%s\n' "${all_targets[@]}" | grep -qx "$which_target"; then
  targets=("$which_target")
else
  echo "fuzz.sh: no target '$which_target' (targets: ${all_targets[*]} all)" >&2
  exit 64
fi

if ! command -v clang++ >/dev/null 2>&1; then
  echo "fuzz.sh: needs clang (sudo scripts/setup.sh installs it)" >&2
  exit 1
fi
gen_args=()
if [[ ! -f build-fuzz/CMakeCache.txt ]] && command -v ninja >/dev/null 2>&1; then
  gen_args=(-G Ninja)
fi
# libFuzzer's usual -O1 with line tables only: the same stack traces,
# and a build of half the time on a shared 2-core machine.
log "configuring build-fuzz/ (clang, SS_FUZZ=ON)"
cmake -S . -B build-fuzz ${gen_args[@]+"${gen_args[@]}"} \
  -DCMAKE_BUILD_TYPE=Fuzz -DCMAKE_CXX_FLAGS_FUZZ="-O1 -gline-tables-only" \
  -DCMAKE_C_FLAGS_FUZZ="-O1 -gline-tables-only" -DSS_FUZZ=ON -DSS_BUILD_CUDA=OFF \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ >/dev/null
log "building ${targets[*]/#/fuzz_}"
cmake --build build-fuzz -j"$(nproc)" --target "${targets[@]/#/fuzz_}"

scratch=${SS_FUZZ_SCRATCH:-${TMPDIR:-/tmp}/ss_fuzz_runs}
status=0
summary=()
for t in "${targets[@]}"; do
  mkdir -p "$scratch/$t/new" "$scratch/$t/findings"
  out="$scratch/$t/fuzz.log"
  log "fuzz_$t for ${seconds} s (log: $out)"
  # The bounds of Note [What a fuzz target calls a finding]: 2 GiB of RSS
  # in all, no single allocation over 256 MiB (an input is at most the
  # largest seed, ~70 KB, and what it declares is checked against its
  # size before anything is allocated), 10 s an input.
  # The first folder receives new inputs; the repo's folders are only read.
  rc=0
  ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} \
  UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1} \
    "build-fuzz/fuzz/fuzz_$t" -max_total_time="$seconds" \
      -rss_limit_mb=2048 -malloc_limit_mb=256 -timeout=10 \
      -print_final_stats=1 -artifact_prefix="$scratch/$t/findings/" \
      "$@" "$scratch/$t/new" "tests/fuzz/corpus/$t" $(seeds_of "$t") \
      >"$out" 2>&1 || rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out" | tail -n 1)
  secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$out" | tail -n 1)
  if ((rc != 0)); then
    status=1
    tail -n 40 "$out"
    summary+=("$t: FINDING after ${execs:-?} executions (rc $rc): $(ls -t "$scratch/$t/findings" | head -n 1)")
  else
    summary+=("$t: ${execs:-?} executions in ${secs:-$seconds} s, no finding")
  fi
done
for line in "${summary[@]}"; do log "$line"; done
exit "$status"
