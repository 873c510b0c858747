// Recorded steps (Note [Recorded steps] in
// interp/devices/recorded_calls.cpp) on the stand-in GPU, whose steps are
// closures that keep a CUDA graph's contract (Note [Recorded steps on the
// stand-in] in tests/stand_in_gpu/stand_in_steps.cpp). The oracle is the
// same program on the CPU: the stand-in computes with the CPU backend, so
// a replay that read a moved input, missed the optimizer's step count or
// constants, or overwrote a kept result differs in the printed bits.

#include <catch2/catch.hpp>
#include <string>

#include "interp/tests/data_test_util.h"
#include "interp/tests/process_util.h"

namespace {

// A regression net trained by [update] (AdamW or SGD with momentum), each
// step on a new batch; the first step's loss is kept and printed last.
std::string regression(const std::string& opt,
                       const std::string& extra,
                       const std::string& keep = "") {
  return "devices cuda[0]\n"
         "\n"
         "dim D = 8\n"
         "dim H = 16\n"
         "\n"
         "model Net:\n"
         "    w1: [D H] = normal(std=0.3)\n"
         "    w2: [H] = normal(std=0.3)\n"
         "\n"
         "fn loss(m: Net, x: [b D], y: [b]) -> f32:\n"
         "    return mse(tanh(x @ m.w1) @ m.w2, y)\n"
         "\n"
         "fn step(mut m: Net, mut opt: " +
         opt +
         ", x: [b D], y: [b]) -> f32:\n"
         "    let l, g = value_and_grad(loss, m, x, y)\n"
         "    update(m, opt, g)\n" +
         extra +
         "    return l\n"
         "\n"
         "fn inputs(i: int) -> [32 D] = randn([32 D], seed=i)\n"
         "\n"
         "fn main():\n"
         "    let m = Net.init(seed=0)\n"
         "    let opt = " +
         (opt.rfind("AdamW", 0) == 0 ? "adamw(m, lr=0.01)"
                                     : "sgd(m, lr=0.05, momentum=0.9)") +
         "\n"
         "    let first = step(m, opt, inputs(100), sum(inputs(100), over=D))\n"
         "    let total = 0.0\n" +
         keep +
         "    for i in range(12):\n"
         "        let x = inputs(i)\n"
         "        total = total + float(step(m, opt, x, sum(x * x, over=D)))\n"
         "    print(total)\n"
         "    print(opt.step)\n"
         "    print(m.w1)\n"
         "    print(m.w2)\n"
         "    print(first)\n";
}

struct Runs {
  ss::testing::ProcessRun gpu, cpu;
};

Runs run_both(const std::string& name,
              const std::string& program,
              const std::string& flags = "") {
  std::string dir = data_test::tmp(name);
  data_test::write_file(dir + "/p.ss", program);
  const std::string env = std::string("SS_CUDA_MODULE='") + SS_STAND_IN_GPU +
                          "' SS_STAND_IN_REPORT=1 "
                          "SHAPESCRIPT_RECORD_STEPS=verbose";
  return {ss::testing::run_ss_process("run p.ss" + flags, dir, env),
          ss::testing::run_ss_process("run p.ss --devices cpu" + flags, dir)};
}

bool has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("a step recorded once is replayed with the eager bits", "[gpu]") {
  for (const char* opt : {"AdamW[Net]", "SGD[Net]"}) {
    INFO(opt);
    Runs r = run_both("recorded_steps", regression(opt, ""));
    INFO(r.gpu.err);
    REQUIRE(r.gpu.rc == 0);
    REQUIRE(r.cpu.rc == 0);
    CHECK(r.gpu.out == r.cpu.out);
    // The first call's key (no optimizer state yet) is probed and left; the
    // next is probed, the one after recorded, and the last ten replayed,
    // each patching the fused update of both params.
    CHECK(has(r.gpu.err, "`step`: recorded: "));
    CHECK(has(r.gpu.err, ", 2 patched per replay"));
    CHECK(has(r.gpu.err, "`step` replayed 10 times"));
  }
}

TEST_CASE("a step is recorded in deterministic mode too", "[gpu]") {
  // cuda[0] deterministic runs a rank of one, its reductions by the
  // batch's canonical chunks: recorded, its bits are still the CPU's in
  // that mode (which cuda[0 1 2] deterministic matches:
  // conformance_stand_in_gpu_deterministic).
  Runs r = run_both("recorded_steps_deterministic",
                    regression("AdamW[Net]", ""),
                    " --deterministic");
  INFO(r.gpu.err);
  REQUIRE(r.gpu.rc == 0);
  REQUIRE(r.cpu.rc == 0);
  CHECK(r.gpu.out == r.cpu.out);
  CHECK(has(r.gpu.err, "`step` replayed 10 times"));
}

TEST_CASE("a step that reads its optimizer's step is not recorded", "[gpu]") {
  Runs r = run_both("recorded_steps_reads",
                    regression("AdamW[Net]", "    let s = opt.step\n"));
  INFO(r.gpu.err);
  REQUIRE(r.gpu.rc == 0);
  CHECK(r.gpu.out == r.cpu.out);
  CHECK(has(r.gpu.err,
            "not recorded: it reads opt.step, which changes between steps"));
  CHECK(!has(r.gpu.err, "`step` replayed"));
}

namespace {

// The README's classifier on small data: cross_entropy's label check,
// made on the device inside a recording (Note [Checks a recording
// defers] in ops/api.cpp). [then] runs after each step's labels y are
// drawn.
std::string classifier(const std::string& then) {
  return "devices cuda[0]\n"
         "\n"
         "dim D = 12\n"
         "dim Hd = 16\n"
         "dim C = 10\n"
         "\n"
         "model Mlp:\n"
         "    w1: [D Hd] = normal(std=1 / sqrt(D))\n"
         "    w2: [Hd C] = normal(std=1 / sqrt(Hd))\n"
         "\n"
         "fn loss(m: Mlp, x: [b D], y: [b] i64) -> f32:\n"
         "    return cross_entropy(relu(x @ m.w1) @ m.w2, y)\n"
         "\n"
         "fn train_step(mut m: Mlp, mut opt: AdamW[Mlp], x: [b D], "
         "y: [b] i64) -> f32:\n"
         "    let l, g = value_and_grad(loss, m, x, y)\n"
         "    update(m, opt, g)\n"
         "    return l\n"
         "\n"
         "fn main():\n"
         "    let m = Mlp.init(seed=0)\n"
         "    let opt = adamw(m, lr=1e-2)\n"
         "    let total = 0.0\n"
         "    for i in range(8):\n"
         "        let x = randn([32 D], seed=i)\n"
         "        let y = argmax(x @ randn([D C], seed=99), over=C)\n" +
         then +
         "        total = total + float(train_step(m, opt, x, y))\n"
         "    print(total)\n"
         "    print(m.w2)\n";
}

}  // namespace

TEST_CASE("a classifier's step is recorded, its label check on the device",
          "[gpu]") {
  Runs r = run_both("recorded_steps_labels", classifier(""));
  INFO(r.gpu.err);
  REQUIRE(r.gpu.rc == 0);
  CHECK(r.gpu.out == r.cpu.out);
  CHECK(has(r.gpu.err, "`train_step`: recorded: "));
  CHECK(has(r.gpu.err, "`train_step` replayed 5 times"));
}

TEST_CASE("a bad label in a replayed step is raised at the next read",
          "[gpu]") {
  // Step 6's labels are out of range. As it comes, cross_entropy names
  // the label at its line; replayed, the device's error word has it, and
  // the loss read after the step raises it.
  Runs r = run_both("recorded_steps_bad_label",
                    classifier("        if i == 6:\n"
                               "            y = y + 10\n"));
  INFO(r.gpu.err);
  INFO(r.cpu.err);
  CHECK(r.cpu.rc != 0);
  CHECK(has(r.cpu.err, "is out of range for 10 classes"));
  CHECK(r.gpu.rc == r.cpu.rc);
  CHECK(has(r.gpu.err, "ValueError"));
  CHECK(has(r.gpu.err, "a class label out of range"));
  CHECK(has(r.gpu.err, "`train_step`: recorded: "));
}

TEST_CASE("a param another value holds is not overwritten by a replay",
          "[gpu]") {
  const std::string loop = "    for i in range(12):\n";
  auto with_w = [&](const std::string& take) {
    std::string p = regression("AdamW[Net]", "", "    let w = m.w1 * 1.0\n");
    p.replace(p.find(loop), loop.size(), loop + take);
    return p + "    print(w)\n";
  };
  // Held as each step is called: update copies the param rather than
  // change w (values are immutable), and a replay would write w's bytes:
  // not recorded.
  Runs kept =
      run_both("recorded_steps_kept_param", with_w("        w = m.w1\n"));
  INFO(kept.gpu.err);
  REQUIRE(kept.gpu.rc == 0);
  CHECK(kept.gpu.out == kept.cpu.out);
  CHECK(has(kept.gpu.err,
            "not recorded: it replaces a model's or "
            "optimizer's tensor that another value holds"));
  // Taken between replays: those after it run as they come.
  std::string later = with_w("        if i == 8:\n            w = m.w1\n");
  Runs taken = run_both("recorded_steps_taken_param", later);
  INFO(taken.gpu.err);
  REQUIRE(taken.gpu.rc == 0);
  CHECK(taken.gpu.out == taken.cpu.out);
  CHECK(has(taken.gpu.err, "`step`: recorded: "));
  CHECK(!has(taken.gpu.err, "`step` replayed 10 times"));
}
