#!/usr/bin/env bash
# Times the front end: generates a ~5000-line program (bench/gen_program.py),
# runs `ss check` on it 5 times and prints the median wall time. It reports;
# it does not judge: a slow run still exits 0 (tests assert, benchmarks
# report). It exits non-zero only when it cannot measure: no `ss`, or the
# generated program does not check clean.
#
#   bench/check_speed.sh [LINES] [RUNS]     (defaults 5000 and 5)
#   SS=path/to/ss bench/check_speed.sh      (default build/ss)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

lines=${1:-5000}
runs=${2:-5}
ss=${SS:-build/ss}

if [[ ! -x "$ss" ]]; then
  echo "check_speed: $ss not found; build first (scripts/setup.sh)" >&2
  exit 1
fi

prog=$(mktemp /tmp/ss_bench_XXXXXX.ss)
trap 'rm -f "$prog"' EXIT
python3 bench/gen_program.py --lines "$lines" > "$prog"
count=$(wc -l < "$prog")

times=()
for ((i = 1; i <= runs; i++)); do
  start=$EPOCHREALTIME
  if ! "$ss" check "$prog" > /tmp/ss_bench_out.$$ 2>&1; then
    echo "check_speed: the generated program does not check clean:" >&2
    head -n 20 /tmp/ss_bench_out.$$ >&2
    rm -f /tmp/ss_bench_out.$$
    exit 1
  fi
  end=$EPOCHREALTIME
  times+=("$(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.4f", e - s }')")
done
rm -f /tmp/ss_bench_out.$$

median=$(printf '%s\n' "${times[@]}" | sort -g |
  awk '{ t[NR] = $1 } END { if (NR % 2) print t[(NR + 1) / 2];
                            else printf "%.4f\n", (t[NR / 2] + t[NR / 2 + 1]) / 2 }')
echo "ss check: $count lines, median ${median} s over $runs runs (${times[*]})"
