// N devices compute what one does (devices.md item 1): programs run on 1, 2
// and 3 ranks (threads over real Gloo collectives on loopback) and their
// logged values are compared. f32 sums in another order differ by a few
// ulps a step; logged to 4 decimals through stdout(), the values agree
// exactly over these short runs, and the final evaluation to 1e-5.
#include "interp/devices/threads/data_parallel.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>

#include "interp/check/checker.h"
#include "interp/eval/interpreter.h"
#include "interp/tests/devices_process_util.h"
#include "interp/tests/process_util.h"

namespace {

std::string run_on(const std::string& text,
                   int world,
                   size_t grad_bucket_bytes = 0) {
  ss::diag::SourceMap sm;
  ss::diag::Diagnostics d;
  ss::check::Options o;
  if (world > 1) o.devices_override = world == 2 ? "cpu[0 1]" : "cpu[0 1 2]";
  auto prog = ss::check::check_source("dp.ss", text, sm, d, o);
  INFO(ss::diag::render_terminal(d, sm));
  REQUIRE(prog);
  std::ostringstream out;
  if (world == 1) {
    ss::eval::Interpreter in(*prog, sm, out);
    in.run_main({});
  } else {
    std::vector<ss::eval::FinalParams> ranks;
    ss::devices::threads::ParallelOptions po;
    po.world = world;
    po.final_params = &ranks;
    po.grad_bucket_bytes = grad_bucket_bytes;
    auto e = ss::devices::threads::run_data_parallel(*prog, sm, out, po);
    if (e) FAIL(ss::eval::render_runtime_error(*e, sm));
    // Every rank applied the same update: the copies are bit-identical.
    for (int r = 1; r < world; ++r)
      for (const auto& [name, t] : ranks[0].params) {
        INFO("rank " << r << ", " << name);
        const ss::ops::Tensor& u = ranks[r].params.at(name);
        REQUIRE(u.nbytes() == t.nbytes());
        CHECK(std::memcmp(u.raw(), t.raw(), t.nbytes()) == 0);
      }
  }
  return out.str();
}

using ss::testing::decimals;
using namespace ss::testing;

void same_logs(const std::string& program, size_t grad_bucket_bytes = 0) {
  std::string one = run_on(program, 1);
  std::vector<double> want = decimals(one);
  REQUIRE(want.size() > 5);
  for (int world : {2, 3}) {
    std::vector<double> got =
        decimals(run_on(program, world, grad_bucket_bytes));
    INFO("world " << world);
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < want.size(); ++i)
      CHECK(got[i] == Approx(want[i]).epsilon(1e-5).margin(1e-6));
  }
}

const char* kMlp = R"(dim D = 784
dim Hd = 64
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
    let train, test = synthetic_digits(Digit, 1000, seed=0).split(0.9)
    let m = Mlp.init(seed=0)
    let opt = adamw(m, lr=1e-3)
    let out = stdout()
    for batch in train.batches(64, shuffle=1):
        out.write(train_step(m, opt, batch))
    print(mean_logs(evaluate, m, test.batches(32)))
)";

}  // namespace

TEST_CASE("the README MLP logs the same on 1, 2 and 3 devices", "[dist][dp]") {
  // 900 examples in batches of 64: the last has 4 (2/1/1 on 3 devices);
  // the test batches of 32 end with 4 too.
  same_logs(kMlp);
}

const char* kLowered = R"(dim D = 784
dim C = 10

data Digit:
    img: [D] in 0.0..=1.0
    label: i64 in 0..C

model Net:
    w: [D C] = normal(std=0.05)
    bn: BatchNorm[C]

fn loss(mut m: Net, batch: [b] Digit, mode: Mode) -> f32:
    let h = batch_norm(dropout(batch.img, 0.25, mode) @ m.w, m.bn, mode)
    let centred = h - mean(h, over=b)
    return cross_entropy(centred, batch.label) + mse(h, h * 0.5) + sum(h * h) / 1000.0

fn step(mut m: Net, mut opt: SGD[Net], batch: [b] Digit, mode: Mode) -> Logs:
    let l, g = value_and_grad(loss, m, batch, mode)
    update(m, opt, g)
    return logs(loss=l, total=reduce(batch.img, over=(b, D), with=sum),
                rm=sum(m.bn.running_mean), rv=sum(m.bn.running_var))

fn main():
    let data = synthetic_digits(Digit, 350, seed=2)
    let m = Net.init(seed=3)
    let opt = sgd(m, lr=0.1, momentum=0.9)
    let out = stdout()
    let k = 0
    for batch in data.batches(50, shuffle=4):
        out.write(step(m, opt, batch, Train(seed=k)))
        k += 1
    print(float(sum(m.w)), float(sum(m.bn.g)))
)";

TEST_CASE("lowered reductions, batch_norm and dropout match one device",
          "[dist][dp]") {
  // Every lowering (mean over b, cross_entropy, mse, sum, reduce(with=sum),
  // batch_norm's statistics and running stats) inside a differentiated
  // loss, dropout keyed by each element's index in the whole batch, and
  // SGD with momentum: the logs must match one device's.
  same_logs(kLowered);
}

TEST_CASE(
    "gradient buckets sent while the backward pass goes on give the same "
    "result",
    "[dist][dp]") {
  // 16-byte buckets: each param's gradient goes to the communication
  // thread as soon as the pass has it, while the pass's own collectives
  // (the backward of mean(h, over=b) and of batch_norm's statistics) run
  // beside it on the main thread, under their own tags.
  same_logs(kLowered, 16);
}

TEST_CASE("ss run on cpu[0 1 2]: worker processes log what one device does",
          "[dist][process][dp]") {
  std::string path = "/tmp/ss_dp_" + std::to_string(getpid()) + ".ss";
  {
    std::ofstream f(path);
    f << kMlp;
  }
  auto [rc1, one, err1] = ss::testing::run_ss_process("run " + path);
  auto [rc3, three, err3] =
      ss::testing::run_ss_process("run --devices 'cpu[0 1 2]' " + path);
  std::remove(path.c_str());
  REQUIRE(rc1 == 0);
  REQUIRE(rc3 == 0);
  std::vector<double> a = decimals(one), b = decimals(three);
  REQUIRE(a.size() > 10);
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i)
    CHECK(b[i] == Approx(a[i]).epsilon(1e-5).margin(1e-6));
}

TEST_CASE("a runtime error on several devices is the program's (exit 2)",
          "[dist][process][dp]") {
  std::string path = "/tmp/ss_dp_err_" + std::to_string(getpid()) + ".ss";
  {
    std::ofstream f(path);
    f << "dim D = 4\nfn pick(x: [n D], i: int) -> [D] = x[i]\n"
         "fn main():\n    print(pick(zeros([3, D]), 7))\n";
  }
  auto [rc, out, err] =
      ss::testing::run_ss_process("run --devices 'cpu[0 1]' " + path);
  std::remove(path.c_str());
  CHECK(rc == 2);
}

TEST_CASE(
    "killing a worker at a random moment, 20 times: WorkerError "
    "within 5 s, exit 3, nothing left behind",
    "[dist][process][dp]") {
  std::string path = "/tmp/ss_dp_kill_" + std::to_string(getpid()) + ".ss";
  {
    std::ofstream f(path);
    f << long_training("");
  }
  std::mt19937 rng(7);
  for (int round = 0; round < 20; ++round) {
    INFO("round " << round);
    auto [ss, workers] = start_run(path, "");
    usleep(100000 + rng() % 600000);
    pid_t victim = workers[rng() % 3];
    kill(victim, SIGKILL);
    int st = wait_for(ss, std::chrono::seconds(5));
    REQUIRE(st != -1);
    CHECK(WIFEXITED(st));
    CHECK(WEXITSTATUS(st) == 3);
    for (pid_t w : workers) {
      // Reaped by the controller: no process, not even a zombie.
      CHECK((kill(w, 0) == -1 && errno == ESRCH));
    }
    const char* tmp = std::getenv("TMPDIR");
    CHECK(left_by(ss, tmp && *tmp ? tmp : "/tmp").empty());
  }
  std::remove(path.c_str());
}

TEST_CASE(
    "a killed worker: WorkerError names the fn, at its call, with the .ss "
    "stack",
    "[dist][process][dp]") {
  // Issue 16 item 9 (Note [A stopped worker at its call] in controller.cpp):
  // the message named only the location the worker waited at.
  std::string path = "/tmp/ss_dp_killmsg_" + std::to_string(getpid()) + ".ss";
  std::string err = path + ".err";
  std::string log = path + ".csv";
  {
    std::ofstream f(path);
    f << long_training("    let out = csv(\"" + log + "\")\n",
                       "out.write(train_step(m, opt, batch))");
  }
  auto [ss, workers] = start_run(path, err);
  wait_for_lines(log, 3);  // steps run: killed during a call
  kill(workers[1], SIGKILL);
  int st = wait_for(ss, std::chrono::seconds(5));
  REQUIRE(st != -1);
  CHECK(WEXITSTATUS(st) == 3);
  std::string text = file_text(err);
  INFO(text);
  CHECK(text.find(path + ":") == 0);
  CHECK(text.find(": WorkerError: worker 1 (pid " + std::to_string(workers[1]) +
                  ") was killed by signal 9 "
                  "(SIGKILL)") != std::string::npos);
  // During a call, or between two (the controller noticed while settling).
  CHECK(text.find("running `train_step`)") != std::string::npos);
  CHECK(text.find("   = .ss stack (most recent call last):\n       main\n"
                  "       train_step, called at " +
                  path) != std::string::npos);
  std::remove(path.c_str());
  std::remove(err.c_str());
  std::remove(log.c_str());
}

TEST_CASE("a worker killed while the controller saves: WorkerError, exit 3",
          "[dist][process][dp]") {
  // Issue 16 item 8 (Note [A worker that dies between calls] in
  // controller.cpp): the run exited 0 and said nothing.
  std::string path = "/tmp/ss_dp_killsave_" + std::to_string(getpid()) + ".ss";
  std::string err = path + ".err";
  std::string ck = path + ".safetensors";
  // After one step, only the controller works: it saves the model it
  // fetched, over and over.
  std::string program = saving_forever(ck);
  {
    std::ofstream f(path);
    f << program;
  }
  auto [ss, workers] = start_run(path, err);
  for (int i = 0; i < 1000 && !std::filesystem::exists(ck); ++i) usleep(10000);
  REQUIRE(std::filesystem::exists(ck));
  kill(workers[0], SIGKILL);
  int st = wait_for(ss, std::chrono::seconds(5));
  REQUIRE(st != -1);
  CHECK(WEXITSTATUS(st) == 3);
  std::string text = file_text(err);
  INFO(text);
  CHECK(text.find("WorkerError: worker 0 (pid " + std::to_string(workers[0]) +
                  ") was killed by signal 9 (SIGKILL)") != std::string::npos);
  // Reported at the last call the workers ran.
  CHECK(text.find("(after running `train_step`)") != std::string::npos);
  for (pid_t w : workers) CHECK((kill(w, 0) == -1 && errno == ESRCH));
  for (const std::string& p : {path, err, ck}) std::remove(p.c_str());
}

TEST_CASE("a dead controller's rendezvous directory is swept by the next run",
          "[dist][process]") {
  // Issue 16 item 10 (Note [Sweeping dead jobs] in dist/control/pool.cpp):
  // a controller killed by a signal left <TMPDIR>/ssdist.<pid>.* for good.
  pid_t child = fork();
  if (child == 0) _exit(0);
  REQUIRE(child > 0);
  waitpid(child, nullptr, 0);  // a pid that is gone
  std::string dir = "/tmp/ss_dp_sweep_" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  std::string stale =
      dir + "/ssdist." + std::to_string(child) + ".0badf00d.AbCdEf";
  std::string live =
      dir + "/ssdist." + std::to_string(getpid()) + ".0badf00d.AbCdEf";
  for (const std::string& d : {stale, live}) {
    std::filesystem::create_directories(d);
    std::ofstream(d + "/rank_0") << "x";
  }
  {
    std::ofstream f(dir + "/p.ss");
    f << "fn twice(x: [b]) -> [b]:\n    return x * 2.0\n\n"
         "fn main():\n    print(twice(tensor([1.0, 2.0, 3.0])))\n";
  }
  auto r = ss::testing::run_ss_process(
      "run --devices 'cpu[0 1]' p.ss", dir, "TMPDIR=" + dir);
  INFO(r.err);
  CHECK(r.rc == 0);
  CHECK(!std::filesystem::exists(stale));
  CHECK(std::filesystem::exists(live));  // its controller (this test) lives
  std::filesystem::remove_all(dir);
}

TEST_CASE(
    "a stopped worker: after collective_timeout(s), "
    "WorkerError says where each worker was, exit 3, nothing left behind",
    "[dist][process][dp]") {
  std::string path = "/tmp/ss_dp_stall_" + std::to_string(getpid()) + ".ss";
  std::string err = path + ".err";
  std::string log = path + ".csv";
  {
    std::ofstream f(path);
    f << long_training(
        "    collective_timeout(1.5)\n    let out = csv(\"" + log + "\")\n",
        "out.write(train_step(m, opt, batch))");
  }
  auto [ss, workers] = start_run(path, err);
  wait_for_lines(log, 4);  // once a few steps ran, at a random moment
  usleep(std::random_device{}() % 100000);
  auto t0 = std::chrono::steady_clock::now();
  kill(workers[1], SIGSTOP);  // worker 1 never gets to the next collective
  int st = wait_for(ss, std::chrono::seconds(10));
  double s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  std::string text = file_text(err);
  INFO(text);
  REQUIRE(st != -1);
  CHECK(WIFEXITED(st));
  CHECK(WEXITSTATUS(st) == 3);
  // The seed's "T + about 1 s" (issue 32 item 13: T + 1.02 to 1.07 s
  // measured); the workers' own Gloo timeout, T + 5 s or more, fails it.
  CHECK(s >= 1.4);
  CHECK(s < 1.5 + 3.0);
  CHECK(text.find("error: WorkerError: a worker failed while running "
                  "`train_step` (") != std::string::npos);
  CHECK(text.find("and worker 1 didn't finish:\n") != std::string::npos);
  CHECK(text.find("\n  worker 0: ") != std::string::npos);
  CHECK(text.find("(its process is stopped)") != std::string::npos);
  // Some worker was waiting for the others at a line of the program.
  CHECK(text.find("was waiting for the other workers at " + path + ":") !=
        std::string::npos);
  for (pid_t w : workers) CHECK((kill(w, 0) == -1 && errno == ESRCH));
  std::remove(path.c_str());
  std::remove(err.c_str());
  std::remove(log.c_str());
}
