// Recorded steps on several GPUs (Note [A recorded step's collectives] in
// dist/comm/nccl/nccl_comm.cpp): each `ss worker` of `cuda[0 1]` records
// its share of a data-parallel step, the gradient buckets' sums inside it,
// and replays it. On the stand-in GPU the collectives are Gloo's through
// the host, recorded as host calls (Note [Collectives through the host]
// in dist/comm/host_staged_comm.cpp). The oracle is the same program on
// `cpu[0 1]`: the same shares, the same Gloo sums in rank order, the CPU
// backend's kernels, nothing recorded; so equal bits prove that each
// replay ran the step's collectives on that step's values, in their
// place, and that no bucket was summed twice or left out.

#include <catch2/catch.hpp>
#include <fstream>
#include <iterator>
#include <string>

#include "interp/tests/data_test_util.h"
#include "interp/tests/process_util.h"

namespace {

// A regression net trained by AdamW on batches of 32 split over the
// devices. wh's gradient (1 MiB) fills the first gradient bucket (1 MiB,
// DeviceContext::grad_bucket_bytes) with w2's, which is then summed on
// the communication lane while the backward pass goes on; w1's, the
// pass's last, is summed by the pass's end.
std::string data_parallel(const std::string& devices,
                          const std::string& extra = "",
                          const std::string& grads = "g") {
  return "devices " + devices +
         "\n"
         "\n"
         "dim D = 8\n"
         "dim H = 512\n"
         "\n"
         "model Net:\n"
         "    w1: [D H] = normal(std=0.3)\n"
         "    wh: [H H] = normal(std=0.05)\n"
         "    w2: [H] = normal(std=0.05)\n"
         "\n"
         "fn loss(m: Net, x: [b D], y: [b]) -> f32:\n"
         "    return mse(tanh(tanh(x @ m.w1) @ m.wh) @ m.w2, y)\n"
         "\n"
         "fn step(mut m: Net, mut opt: AdamW[Net], x: [b D], y: [b]) -> f32:\n"
         "    let l, g = value_and_grad(loss, m, x, y)\n"
         "    update(m, opt, " +
         grads + ")\n" + extra +
         "    return l\n"
         "\n"
         "fn inputs(i: int) -> [32 D] = randn([32 D], seed=i)\n"
         "\n"
         "fn main():\n"
         "    let m = Net.init(seed=0)\n"
         "    let opt = adamw(m, lr=0.01)\n"
         "    let total = 0.0\n"
         "    for i in range(12):\n"
         "        let x = inputs(i)\n"
         "        total = total + float(step(m, opt, x, sum(x * x, over=D)))\n"
         "    print(total)\n"
         "    print(opt.step)\n"
         "    save(\"trained.safetensors\", m, opt)\n";
}

std::string stand_in_env(const std::string& more = "") {
  return std::string("SS_CUDA_MODULE='") + SS_STAND_IN_GPU +
         "' SS_STAND_IN_REPORT=1 SHAPESCRIPT_RECORD_STEPS=verbose " + more;
}

std::string file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

size_t count(const std::string& s, const std::string& part) {
  size_t n = 0;
  for (size_t at = s.find(part); at != std::string::npos;
       at = s.find(part, at + 1))
    ++n;
  return n;
}

// The program on `cuda[0 1]` (the stand-in, steps recorded) and on
// `cpu[0 1]` (the oracle), each in a folder of its own under [name], with
// [more] after the device list (`shard params`); what each printed and the
// params and optimizer state each saved.
struct Pair {
  ss::testing::ProcessRun gpu, cpu;
  std::string gpu_trained, cpu_trained;
};

Pair run_pair(const std::string& name,
              const std::string& more,
              const std::string& extra,
              const std::string& grads = "g") {
  const std::string gpu_dir = data_test::tmp(name + "/gpu"),
                    cpu_dir = data_test::tmp(name + "/cpu");
  data_test::write_file(gpu_dir + "/p.ss",
                        data_parallel("cuda[0 1]" + more, extra, grads));
  data_test::write_file(cpu_dir + "/p.ss",
                        data_parallel("cpu[0 1]" + more, extra, grads));
  Pair r;
  r.gpu = ss::testing::run_ss_process("run p.ss", gpu_dir, stand_in_env());
  r.cpu = ss::testing::run_ss_process("run p.ss", cpu_dir);
  r.gpu_trained = file(gpu_dir + "/trained.safetensors");
  r.cpu_trained = file(cpu_dir + "/trained.safetensors");
  return r;
}

// The run on the GPUs printed and saved what the run on `cpu[0 1]` did,
// bit for bit: the losses' total and the params and AdamW's moments.
void same_bits(const Pair& r) {
  INFO(r.gpu.err);
  REQUIRE(r.gpu.rc == 0);
  REQUIRE(r.cpu.rc == 0);
  CHECK(r.gpu.out == r.cpu.out);
  CHECK(r.cpu_trained.size() > size_t(512 * 512 * 4 * 3));
  CHECK(r.gpu_trained == r.cpu_trained);
}

}  // namespace

TEST_CASE("each worker of two GPUs replays its step with the eager bits",
          "[gpu][process]") {
  // The params and AdamW's moments after 12 steps, saved: the files are
  // compared byte for byte.
  Pair r = run_pair("recorded_ranks", "", "");
  same_bits(r);
  const auto& gpu = r.gpu;
  INFO(gpu.err);
  // Both workers: the first call (no AdamW state yet) probed and left,
  // the second probed, the third recorded, the other nine replayed.
  CHECK(count(gpu.err, "`step`: recorded: ") == 2);
  CHECK(count(gpu.err, "`step` replayed 9 times") == 2);
  CHECK(count(gpu.err, "stand-in gpu steps: 1 recorded, 10 replays") == 2);
}

TEST_CASE("a sharded step that clips its gradients is recorded on each worker",
          "[gpu][process]") {
  // `shard params` (each worker holds half of every param, gathered where
  // read, its gradient reduce-scattered) with clip_norm, whose norm sums
  // the pieces' squares across the workers: all of it inside the
  // recorded step (Note [Norms stay on the device] in
  // interp/builtins/autodiff.cpp). The norms run from 25 to 180: max = 100
  // clips some steps and not others.
  Pair r = run_pair(
      "recorded_ranks_shard", "\n    shard params", "", "clip_norm(g, 100.0)");
  same_bits(r);
  const auto& gpu = r.gpu;
  INFO(gpu.err);
  CHECK(count(gpu.err, "`step`: recorded: ") == 2);
  CHECK(count(gpu.err, "`step` replayed 9 times") == 2);
}

TEST_CASE("a step that reads opt.step is not recorded on the workers either",
          "[gpu][process]") {
  Pair r = run_pair("recorded_ranks_reads", "", "    let s = opt.step\n");
  const auto& gpu = r.gpu;
  INFO(gpu.err);
  REQUIRE(gpu.rc == 0);
  CHECK(gpu.out == r.cpu.out);
  CHECK(r.gpu_trained == r.cpu_trained);
  CHECK(count(gpu.err, "`step`: recorded: ") == 0);
  // Each worker probes both keys (before and after AdamW has its state).
  CHECK(count(gpu.err,
              "not recorded: it reads opt.step, which changes between "
              "steps") == 4);
  // The workers' and the controller's (which records nothing).
  CHECK(count(gpu.err, "stand-in gpu steps: 0 recorded, 0 replays") == 3);
}

TEST_CASE("a replayed step whose peer is gone ends the run, not a hang",
          "[gpu][process]") {
  // Worker 1 exits before its 8th call, which worker 0 replays (calls 4
  // to 12 are replays): worker 0's recorded all-reduce meets the lost
  // peer, and the run ends with the error at the call's line (exit 3,
  // cli.md) instead of waiting. Its 5 s timeout bounds the collective;
  // the test's own, ctest's.
  std::string dir = data_test::tmp("recorded_ranks_gone");
  data_test::write_file(dir + "/gpu.ss", data_parallel("cuda[0 1]"));
  auto gpu = ss::testing::run_ss_process(
      "run gpu.ss",
      dir,
      stand_in_env("SHAPESCRIPT_COLLECTIVE_TIMEOUT=5 "
                   "SHAPESCRIPT_TEST_FAIL_CALL=1:8:exit"),
      "",
      SS_HOOKS_BINARY);
  INFO(gpu.out);
  INFO(gpu.err);
  CHECK(gpu.rc == 3);
  CHECK(gpu.err.find("gpu.ss:27:31: WorkerError: worker 1") !=
        std::string::npos);
  CHECK(gpu.err.find("exited with code 1 while running `step`") !=
        std::string::npos);
  CHECK(gpu.err.find("`step` replayed 9 times") == std::string::npos);
}
