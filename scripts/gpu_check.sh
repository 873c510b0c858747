#!/usr/bin/env bash
# The device check of the CUDA backend (issue 31): one prepared run on a
# lent GPU machine, which has the NVIDIA driver, CUDA 13, cuBLAS and torch
# but none of Debian's libraries. Everything is built here; this script
# packs the build and the libraries it needs (`pack`), and the device runs
# it (`run`), writing its results to $OUT as one short table.
#
#   scripts/gpu_check.sh pack   # here: build/ -> .gpu/ (ignored, carried)
#   scripts/gpu_check.sh run    # there: unpack, check, time; $OUT/table
#   scripts/gpu_check.sh run 1 2 2b 2c   # (and `run 3 4`): the steps in two calls
#
# What `run` proves, each a row of the table (its full log a file under
# $OUT): 0. the machine (GPU, driver, clocks); 1. ss_cuda_tests, every
# primitive of the CUDA backend against the CPU backend on random inputs of
# odd shapes in every dtype, device bytes poisoned with NaN first (AdamW,
# SGD, Philox and the moves bit-equal), NCCL's communicator with one
# rank, a recorded step's replays (CUDA graphs, patched AdamW) and the
# loader's copy stream; 2. `ss conformance` with each case on `cuda[0]` against its run on
# `cpu`, and on `cuda[0 1 2]` (three workers on the one GPU), and
# deterministic mode's cuda[0 1 2] against cuda[0], bit for bit; 3. the torch op table on
# `cuda[0]` (forward and VJP of every builtin against torch in f64: f64
# rows to 1e-10, f32 rows to 1e-5); 4. timings of the README MLP step on
# the GPU, recorded and not, against torch 2.x's on the same GPU
# (bench/compare_gpu.py).
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

pack() {
  set -e
  local dir=.gpu
  grep -qx '/.gpu/' .git/info/exclude 2>/dev/null ||
    echo '/.gpu/' >>.git/info/exclude
  rm -rf "$dir" && mkdir -p "$dir/bin" "$dir/lib"
  cp build/ss build/ss_test_hooks build/ss_cuda_tests build/libss_cuda.so "$dir/bin/"
  # Debian's libraries the binaries need that the device's image lacks
  # (not the CUDA ones, not glibc's or libstdc++'s: the image's are newer).
  ldd build/ss build/ss_test_hooks build/ss_cuda_tests build/libss_cuda.so | awk '$3 ~ /^\// {print $3}' |
    sort -u | grep -v -E '/((libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s)\.so|ld-linux|libcu|libnccl|libnv)[^/]*$' |
    while read -r lib; do cp -L "$lib" "$dir/lib/"; done
  (cd "$dir" && tar cJf bundle.tar.xz bin lib && rm -rf bin lib)
  ls -l "$dir"
}

row() { printf '| %-38s | %-6s | %s |\n' "$1" "$2" "$3" >>"$OUT/table"; }

# Runs [cmd...] under a timeout of [secs], its output to $OUT/[log]: a row
# [name] with its result and last line, its failing lines among the
# failures.
checked() {
  local name=$1 log=$2 secs=$3
  shift 3
  timeout "$secs" "$@" >"$OUT/$log" 2>&1
  local rc=$?
  row "$name" "$([[ $rc == 0 ]] && echo pass || echo FAIL)" \
    "rc=$rc; $(tail -1 "$OUT/$log")"
  grep -E 'FAIL|differ' "$OUT/$log" | head -20 >>"$OUT/failures.txt"
}

# The steps to run: all by default; `run 1 2 2b` and `run 3 4` split the
# check over two device calls when one call's 10 minutes are too few.
want() { [[ " $steps " == *" $1 "* ]]; }

run() {
  : "${OUT:?run it through the device tool: OUT is its results folder}"
  steps="${*:-1 2 2b 2c 3 4}"
  SECONDS=0
  local work=/tmp/ss_gpu
  rm -rf "$work" && mkdir -p "$work"
  tar xJf .gpu/bundle.tar.xz -C "$work"
  # The CUDA libraries: the toolkit's, else the ones torch's wheels carry.
  local cudalibs=/usr/local/cuda/lib64
  for d in $(python3 -c 'import nvidia, os; p = os.path.dirname(nvidia.__path__[0]); print(" ".join(os.path.join(r) for r, _, fs in os.walk(os.path.join(p, "nvidia")) if any(f.startswith(("libcublas", "libnccl", "libcudart")) for f in fs)))' 2>/dev/null); do
    cudalibs="$cudalibs:$d"
  done
  export LD_LIBRARY_PATH="$work/lib:$cudalibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export SS_CUDA_MODULE="$work/bin/libss_cuda.so"
  printf '| %-38s | %-6s | %s |\n' step result detail >"$OUT/table"
  printf '|%s|%s|%s|\n' "$(printf -- '-%.0s' {1..40})" "--------" "---" >>"$OUT/table"

  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem \
    --format=csv,noheader >"$OUT/gpu.txt" 2>&1
  row "GPU" "-" "$(head -1 "$OUT/gpu.txt")"

  local rc
  if want 1; then
    (cd "$work" && timeout 90 ./bin/ss_cuda_tests --reporter compact \
       --durations yes "[cuda]") >"$OUT/ss_cuda_tests.log" 2>&1
    rc=$?
    local summary
    summary=$(grep -E '^(Passed|Failed)|test cases' "$OUT/ss_cuda_tests.log" | tail -1)
    row "ss_cuda_tests (every primitive vs cpu)" \
      "$([[ $rc == 0 ]] && echo pass || echo FAIL)" "rc=$rc; $summary"
    grep -E 'FAILED|failed' "$OUT/ss_cuda_tests.log" | head -20 >"$OUT/failures.txt"
  fi

  if want 2; then
    # 2. The conformance suite, each case on cuda[0] against cpu.
    checked "ss conformance, cuda[0] against cpu" conformance.log 150 \
      "$work/bin/ss" conformance conformance --devices cpu --devices 'cuda[0]' \
      --exclude '*spmd*'
  fi

  if want 2b; then
    # 2b. The workers' GPU path: every case on cuda[0 1 2] against cpu, its
    # three workers sharing this machine's one GPU with their collectives
    # through the host (NCCL refuses two ranks on one GPU; Note [Several
    # GPUs] in interp/devices/gpu_ranks.cpp). ss_test_hooks reads the hook.
    # The static errors' cases start no worker, and deterministic mode is
    # not built for GPUs: the 124 others.
    SHAPESCRIPT_TEST_ONE_GPU=1 checked "ss conformance, cuda[0 1 2] against cpu" \
      conformance_workers.log 200 \
      "$work/bin/ss_test_hooks" conformance conformance --devices cpu \
      --devices 'cuda[0 1 2]' --exclude 'errors/*' --exclude 'deterministic/*'
  fi

  if want 2c; then
    # 2c. Deterministic mode on the GPU: dist/'s cases on cuda[0 1 2] (the
    # three workers on the one GPU, as 2b), each bit for bit cuda[0]'s.
    SHAPESCRIPT_TEST_ONE_GPU=1 checked "deterministic, cuda[0 1 2] = cuda[0]" \
      conformance_deterministic.log 150 \
      "$work/bin/ss_test_hooks" conformance conformance/dist --deterministic \
      --devices 'cuda[0]' --devices 'cuda[0 1 2]'
  fi

  if want 3; then
    # 3. The torch op table on cuda[0].
    checked "torch op table on cuda[0]" op_table.log 300 \
      python3 tests/torch/op_table.py "$work/bin/ss" --devices 'cuda[0]' --jobs 16
  fi

  if want 4; then
    # 4. Timings (bench/compare_gpu.py's table, appended as it is): ss
    # recorded and not, torch eager and graphed, the cuBLAS floor.
    timeout 280 python3 bench/compare_gpu.py --ss "$work/bin/ss" --runs 2 \
      >"$OUT/compare_gpu.log" 2>&1
    rc=$?
    row "README MLP step timings (compare_gpu)" \
      "$([[ $rc == 0 ]] && echo ran || echo FAIL)" "rc=$rc; below"
    grep '^|' "$OUT/compare_gpu.log" >>"$OUT/timings.md"
  fi

  row "wall time of these steps" "-" "${SECONDS} s (steps: $steps)"
  echo
  cat "$OUT/table"
  [[ -s "$OUT/timings.md" ]] && { echo; cat "$OUT/timings.md"; }
  [[ -s "$OUT/failures.txt" ]] && { echo; echo "first failures:"; head -20 "$OUT/failures.txt"; }
  return 0
}

case "${1:-}" in
  pack) pack ;;
  run) shift; run "$@" ;;
  *) echo "usage: scripts/gpu_check.sh pack | run [STEP...]" >&2; exit 64 ;;
esac
