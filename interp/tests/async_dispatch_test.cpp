// Async dispatch in the controller (Note [Async dispatch] in
// interp/devices/controller/async_dispatch.cpp): a loop of
// `out.write(step(...))` sends each call before the last one's result is back,
// and the program prints, logs and fails exactly as on one device.
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "interp/tests/process_util.h"

namespace {

using ss::testing::decimals;
using ss::testing::ProcessRun;
using ss::testing::run_ss_process;

// 640 examples in batches of 64: 10 steps an epoch, 2 epochs. `step`
// divides by (k - BAD): with BAD = 99 it never fails, with BAD = 3 its
// fourth call raises a ValueError on every worker.
const char* kProgram = R"(dim D = 784
dim Hd = 16
dim C = 10

data Digit:
    img: [D] in 0.0..=1.0
    label: i64 in 0..C

model Mlp:
    w1: [D Hd] = normal(std=1/sqrt(D))
    w2: [Hd C] = normal(std=1/sqrt(Hd))

fn loss(m: Mlp, batch: [b] Digit) -> f32:
    return cross_entropy(relu(batch.img @ m.w1) @ m.w2, batch.label)

fn step(mut m: Mlp, mut opt: AdamW[Mlp], batch: [b] Digit, k: i64) -> Logs:
    let l, g = value_and_grad(loss, m, batch)
    update(m, opt, g)
    return logs(loss=l, q=10 // (k - BAD))

fn main():
    let train = synthetic_digits(Digit, 640, seed=0)
    let m = Mlp.init(seed=0)
    let opt = adamw(m, lr=1e-3)
    let out = stdout()
    let k = 0
    for epoch in range(2):
        for batch in progress(train.batches(64, shuffle=epoch)):
            out.write(step(m, opt, batch, k))
            k += 1
            if k == 6:
                print("six steps")
        print("epoch", epoch, float(sum(m.w2)))
    print(opt.step)
)";

std::string scratch(const std::string& name) {
  std::string d = "/tmp/ss_async_" + name + "_" + std::to_string(getpid());
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

std::string program(int bad) {
  std::string p = kProgram;
  return std::regex_replace(p, std::regex("BAD"), std::to_string(bad));
}

// [s] with each logged float as "#": the text and order of the output.
std::string shape_of(const std::string& s) {
  return std::regex_replace(s, std::regex(R"(-?\d+\.\d+(e-?\d+)?)"), "#");
}

void same_output(const std::string& many, const std::string& one) {
  CHECK(shape_of(many) == shape_of(one));
  std::vector<double> a = decimals(many), b = decimals(one);
  REQUIRE(a.size() == b.size());
  // f32 sums over 2 shares against 1: a few ulps after 20 AdamW steps.
  for (size_t i = 0; i < a.size(); ++i)
    CHECK(a[i] == Approx(b[i]).epsilon(1e-4).margin(1e-5));
}

// `ss run --devices DEVICES p.ss` in [dir] with a worker made to fail by
// SHAPESCRIPT_TEST_FAIL_CALL=[fail] and the collective timeout [timeout];
// also how long it took, in seconds. A run that hangs is ended after 60 s
// (exit 124), so the test fails instead of waiting for ctest's timeout.
std::pair<ProcessRun, double> run_failing(const std::string& dir,
                                          const std::string& devices,
                                          const std::string& fail,
                                          const std::string& timeout) {
  auto t0 = std::chrono::steady_clock::now();
  ProcessRun r = run_ss_process(
      "run --devices '" + devices + "' p.ss",
      dir,
      "SHAPESCRIPT_TEST_FAIL_CALL=" + fail +
          " SHAPESCRIPT_COLLECTIVE_TIMEOUT=" + timeout + " timeout -k 5 60",
      "",
      SS_HOOKS_BINARY);
  return {r,
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
              .count()};
}

}  // namespace

TEST_CASE(
    "async dispatch: calls go ahead of their results, and the output is "
    "one device's, in order",
    "[dist][process][dp][controller]") {
  std::string d = scratch("order");
  std::ofstream(d + "/p.ss") << program(99);
  ProcessRun one = run_ss_process("run p.ss", d);
  REQUIRE(one.rc == 0);
  ProcessRun two = run_ss_process(
      "run --devices 'cpu[0 1]' p.ss", d, "SHAPESCRIPT_CONTROL_STATS=1");
  INFO(two.err);
  REQUIRE(two.rc == 0);
  // Every logged line, "six steps" after the sixth, each epoch's line after
  // its ten steps, the step count last.
  same_output(two.out, one.out);
  CHECK(one.out.find("six steps") != std::string::npos);
  // Each progress summary shows its epoch's last logged loss.
  std::regex summary(R"(10 it in [0-9.]+ s \([0-9.]+ it/s\), loss ([0-9.]+))");
  auto s1 = std::sregex_iterator(one.err.begin(), one.err.end(), summary);
  auto s2 = std::sregex_iterator(two.err.begin(), two.err.end(), summary);
  for (int epoch = 0; epoch < 2; ++epoch, ++s1, ++s2) {
    REQUIRE(s1 != std::sregex_iterator());
    REQUIRE(s2 != std::sregex_iterator());
    CHECK(std::stod((*s2)[1]) == Approx(std::stod((*s1)[1])).margin(2e-4));
  }
  // 20 calls; in each epoch all but the first went while the one before
  // was still running, except the one after "six steps" (print waits for
  // the calls before it).
  std::smatch m;
  REQUIRE(std::regex_search(
      two.err,
      m,
      std::regex(R"(control: (\d+) calls, .* (\d+) calls sent ahead)")));
  CHECK(std::stol(m[1]) == 20);
  CHECK(std::stol(m[2]) == 17);
  std::filesystem::remove_all(d);
}

TEST_CASE(
    "async dispatch: a call that fails while the next is already sent "
    "gives one device's error and logs",
    "[dist][process][dp][controller]") {
  std::string d = scratch("fail");
  std::ofstream(d + "/p.ss") << program(3);
  ProcessRun one = run_ss_process("run p.ss", d);
  REQUIRE(one.rc == 2);
  REQUIRE(one.err.find("ValueError: division by zero") != std::string::npos);
  for (const char* devices : {"cpu[0 1]", "cpu[0 1 2]"}) {
    INFO(devices);
    ProcessRun many =
        run_ss_process(std::string("run --devices '") + devices + "' p.ss", d);
    INFO(many.err);
    CHECK(many.rc == 2);
    // Three steps logged, then the error at `step`'s line with the stack
    // main -> step, as on one device; the workers add where it was raised.
    same_output(many.out, one.out);
    CHECK(std::count(many.out.begin(), many.out.end(), '\n') == 3);
    std::string note = std::regex_replace(
        many.err, std::regex(R"(\n *= note: raised on worker \d of \d)"), "");
    CHECK(shape_of(note) == shape_of(one.err));
  }
  std::filesystem::remove_all(d);
}

TEST_CASE(
    "async dispatch: a call that fails on one worker only, while the others "
    "went on to the next, stops the workers instead of waiting",
    "[dist][process][dp][controller]") {
  std::string d = scratch("one");
  std::ofstream(d + "/p.ss") << program(99);
  // Worker 1's 5th call fails after its collectives; worker 0 finished it
  // and runs the 6th (already sent), waiting there for worker 1, which
  // skips it. Draining that call would wait for the collective timeout.
  auto [two, s] = run_failing(d, "cpu[0 1]", "1:5", "60");
  INFO(two.err);
  CHECK(two.rc == 3);
  CHECK(s < 20);
  CHECK(two.err.find("error: WorkerError: worker 1 failed while running "
                     "`step` (p.ss:29:23): failed as "
                     "SHAPESCRIPT_TEST_FAIL_CALL asked") != std::string::npos);
  // The four steps before it were written.
  CHECK(std::count(two.out.begin(), two.out.end(), '\n') == 4);
  std::filesystem::remove_all(d);
}

TEST_CASE(
    "async dispatch: a worker that stops after its call's collectives, "
    "while the others wait in the next call, is a collective timeout",
    "[dist][process][dp][controller]") {
  std::string d = scratch("stop");
  std::ofstream(d + "/p.ss") << program(99);
  // Worker 1 stops itself (SIGSTOP) after its 5th call ran, before it
  // answers; workers 0 and 2 answered and wait for it in the 6th. Only
  // the workers still on the call being collected were watched before:
  // the run then hung.
  auto [three, s] = run_failing(d, "cpu[0 1 2]", "1:5:stop", "1.5");
  INFO(three.err);
  CHECK(three.rc == 3);
  CHECK(s < 15);
  CHECK(three.err.find("error: WorkerError: a worker failed while running "
                       "`step` (p.ss:29:23), and worker 1 didn't finish:") !=
        std::string::npos);
  CHECK(three.err.find("  worker 0: had finished it, and then was waiting "
                       "for the other workers at p.ss:") != std::string::npos);
  CHECK(three.err.find("(its process is stopped)") != std::string::npos);
  std::filesystem::remove_all(d);
}

TEST_CASE(
    "a worker stopped in a call its peers finished, with nothing sent "
    "ahead, is a collective timeout",
    "[dist][process][dp][controller]") {
  // Each step's result is waited for (a `let`), so no call goes ahead:
  // worker 0 answers the 5th call and sits idle, worker 1 stops (SIGSTOP)
  // before answering it, and nobody waits in a collective. The run hung
  // (Note [A worker stopped in its call] in dist/control/pool.cpp).
  std::string d = scratch("stop_idle");
  std::string text = std::regex_replace(
      program(99),
      std::regex(R"(out\.write\(step\(m, opt, batch, k\)\))"),
      "let r = step(m, opt, batch, k)\n            out.write(r)");
  REQUIRE(text.find("let r = step(") != std::string::npos);
  std::ofstream(d + "/p.ss") << text;
  auto [two, s] = run_failing(d, "cpu[0 1]", "1:5:stop", "1.5");
  INFO(two.err);
  CHECK(two.rc == 3);
  CHECK(s < 15);
  CHECK(two.err.find("error: WorkerError: a worker failed while running "
                     "`step` (p.ss:") != std::string::npos);
  CHECK(two.err.find("and worker 1 didn't finish:") != std::string::npos);
  CHECK(two.err.find("  worker 0: had finished") != std::string::npos);
  CHECK(two.err.find("(its process is stopped)") != std::string::npos);
  std::filesystem::remove_all(d);
}
