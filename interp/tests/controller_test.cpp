// `ss run --devices 'cpu[0 1 2]'` with the controller running main
// (devices.md items 2, 6, 11): a model in the controller is a handle whose
// fields are copied from the first worker when read, save/load write and
// read the same file as one device, and each call of a worker fn is one
// message per worker.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "interp/tests/process_util.h"

namespace {

using Run = ss::testing::ProcessRun;

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

Run ss_in(const std::string& dir,
          const std::string& args,
          const std::string& env = "") {
  return ss::testing::run_ss_process(args, dir, env);
}

std::vector<double> numbers(const std::string& s) {
  std::vector<double> v;
  std::regex num(R"(-?\d+(\.\d+)?(e-?\d+)?)");
  for (auto it = std::sregex_iterator(s.begin(), s.end(), num);
       it != std::sregex_iterator();
       ++it)
    v.push_back(std::stod(it->str()));
  return v;
}

std::string scratch(const std::string& name) {
  std::string d = "/tmp/ss_ctl_" + name + "_" + std::to_string(getpid());
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

// Trains on the workers, reads fields and the optimizer's step in the
// controller, saves, loads the checkpoint (a new handle, sent whole) and
// trains it further. 300 examples in batches of 64: 5 steps a loop.
const char* kProgram = R"(dim D = 784
dim Hd = 32
dim C = 10

data Digit:
    img: [D] in 0.0..=1.0
    label: i64 in 0..C

model Mlp:
    w1: [D Hd] = normal(std=1/sqrt(D))
    w2: [Hd C] = normal(std=1/sqrt(Hd))

fn forward(m: Mlp, x: [b D]) -> [b C]:
    return relu(x @ m.w1) @ m.w2

fn loss(m: Mlp, batch: [b] Digit) -> f32:
    return cross_entropy(forward(m, batch.img), batch.label)

fn train_step(mut m: Mlp, mut opt: AdamW[Mlp], batch: [b] Digit) -> Logs:
    let l, g = value_and_grad(loss, m, batch)
    update(m, opt, g)
    return logs(loss=l)

fn evaluate(m: Mlp, batch: [b] Digit) -> Logs:
    let logits = forward(m, batch.img)
    return logs(loss=cross_entropy(logits, batch.label),
                acc=mean(argmax(logits, over=C) == batch.label))

fn main():
    let train = synthetic_digits(Digit, 300, seed=0)
    let m = Mlp.init(seed=0)
    let opt = adamw(m, lr=1e-3)
    for batch in train.batches(64, shuffle=1):
        train_step(m, opt, batch)
    print(float(sum(m.w1)), float(sum(m.w2 * m.w2)), opt.step)
    print(m.w2[0])
    save("ckpt.safetensors", m, opt)
    let m2, opt2 = load("ckpt.safetensors", Mlp, adamw)
    print(float(sum(m2.w1)), opt2.step)
    for batch in train.batches(64, shuffle=2):
        train_step(m2, opt2, batch)
    print(float(sum(m2.w1)), float(sum(m2.w2 * m2.w2)), opt2.step)
    print(mean_logs(evaluate, m2, train.batches(100)))
)";

}  // namespace

TEST_CASE(
    "the controller reads a trained model's fields, saves and loads it: "
    "as one device",
    "[dist][process][dp][controller]") {
  std::string d1 = scratch("one"), d3 = scratch("three");
  {
    std::ofstream(d1 + "/p.ss") << kProgram;
    std::ofstream(d3 + "/p.ss") << kProgram;
  }
  Run one = ss_in(d1, "run p.ss");
  Run three = ss_in(d3, "run --devices 'cpu[0 1 2]' p.ss");
  INFO(one.err);
  INFO(three.err);
  REQUIRE(one.rc == 0);
  REQUIRE(three.rc == 0);
  std::vector<double> a = numbers(one.out), b = numbers(three.out);
  REQUIRE(a.size() > 20);
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i)
    CHECK(b[i] == Approx(a[i]).epsilon(1e-5).margin(1e-6));
  // The steps: 5, then 5 after loading, 10 in all.
  CHECK(three.out.find(" 5\n") != std::string::npos);
  CHECK(three.out.find(" 10\n") != std::string::npos);
  // The checkpoints: the same metadata and tensors (within rounding).
  std::string c1 = slurp(d1 + "/ckpt.safetensors");
  std::string c3 = slurp(d3 + "/ckpt.safetensors");
  REQUIRE(c1.size() > 1000);
  CHECK(c1.size() == c3.size());
  uint64_t n = 0;
  std::memcpy(&n, c1.data(), 8);
  CHECK(c1.substr(0, 8 + n) == c3.substr(0, 8 + n));
  // The 3-device checkpoint loads on one device and the other way round.
  std::filesystem::copy_file(d3 + "/ckpt.safetensors",
                             d1 + "/ckpt3.safetensors");
  std::ofstream(d1 + "/load.ss")
      << "dim D = 784\ndim Hd = 32\ndim C = 10\n"
         "model Mlp:\n    w1: [D Hd] = normal(std=1/sqrt(D))\n"
         "    w2: [Hd C] = normal(std=1/sqrt(Hd))\n"
         "fn main():\n    let m, opt = load(\"ckpt3.safetensors\", Mlp, "
         "adamw)\n    print(float(sum(m.w1)), opt.step)\n";
  Run back = ss_in(d1, "run load.ss");
  INFO(back.err);
  CHECK(back.rc == 0);
  CHECK(numbers(back.out).size() == 2);
  CHECK(numbers(back.out)[0] == Approx(a[0]).epsilon(1e-5).margin(1e-6));
  std::filesystem::remove_all(d1);
  std::filesystem::remove_all(d3);
}

TEST_CASE(
    "each call of a worker fn is one message per worker, and reading a "
    "trained model copies it once",
    "[dist][process][dp][controller]") {
  std::string d = scratch("count");
  std::ofstream(d + "/p.ss") << kProgram;
  Run r = ss_in(
      d, "run --devices 'cpu[0 1 2]' p.ss", "SHAPESCRIPT_CONTROL_STATS=1");
  INFO(r.err);
  REQUIRE(r.rc == 0);
  std::smatch mt;
  std::regex stats(
      R"(control: (\d+) calls, (\d+) messages to (\d+) workers, (\d+) fetches, (\d+) calls sent ahead)");
  REQUIRE(std::regex_search(r.err, mt, stats));
  long calls = std::stol(mt[1]), messages = std::stol(mt[2]),
       workers = std::stol(mt[3]), fetches = std::stol(mt[4]);
  CHECK(workers == 3);
  // 10 train_step calls and 3 evaluate calls (batches of 100).
  CHECK(calls == 13);
  // Reading m (fields) and opt (step) after training, then m2 and opt2:
  // one fetch each; save reads what was fetched already.
  CHECK(fetches == 4);
  // Start-up (one each), one per worker per call, fetches go to rank 0.
  CHECK(messages == workers * (1 + calls) + fetches);
  // A training loop's calls after its first go before the one before has
  // answered (async dispatch); evaluate's results are read at once.
  CHECK(std::stol(mt[5]) == 8);
  std::filesystem::remove_all(d);
}

TEST_CASE(
    "Train modes, batch_norm's buffers and SGD state through the "
    "controller: the logs of one device",
    "[dist][process][dp][controller]") {
  // Each call sends the mode with the controller's entry count, so the
  // dropout masks are the ones one device draws.
  const char* prog = R"(dim D = 784
dim C = 10

data Digit:
    img: [D] in 0.0..=1.0
    label: i64 in 0..C

model Net:
    w: [D C] = normal(std=0.05)
    bn: BatchNorm[C]

fn loss(mut m: Net, batch: [b] Digit, mode: Mode) -> f32:
    let h = batch_norm(dropout(batch.img, 0.25, mode) @ m.w, m.bn, mode)
    return cross_entropy(h, batch.label)

fn step(mut m: Net, mut opt: SGD[Net], batch: [b] Digit, mode: Mode) -> Logs:
    let l, g = value_and_grad(loss, m, batch, mode)
    update(m, opt, g)
    return logs(loss=l, rm=sum(m.bn.running_mean))

fn main():
    let data = synthetic_digits(Digit, 250, seed=2)
    let m = Net.init(seed=3)
    let opt = sgd(m, lr=0.1, momentum=0.9)
    let mode = Train(seed=5)
    let out = stdout()
    for batch in data.batches(50, shuffle=4):
        out.write(step(m, opt, batch, mode))
    print(float(sum(m.w * m.w)), float(sum(m.bn.running_var)), opt.step)
)";
  std::string d = scratch("modes");
  std::ofstream(d + "/p.ss") << prog;
  Run one = ss_in(d, "run p.ss");
  Run three = ss_in(d, "run --devices 'cpu[0 1 2]' p.ss");
  INFO(one.err);
  INFO(three.err);
  REQUIRE(one.rc == 0);
  REQUIRE(three.rc == 0);
  std::vector<double> a = numbers(one.out), b = numbers(three.out);
  REQUIRE(a.size() > 10);
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i)
    CHECK(b[i] == Approx(a[i]).epsilon(1e-5).margin(1e-6));
  std::filesystem::remove_all(d);
}
