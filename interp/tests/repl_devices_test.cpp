// `ss repl --devices 'cpu[0 1]'` as a controller (issue 14 item 1; Note
// [Repl sessions on devices]), through a pseudo-terminal: worker fns run in
// `ss worker` processes that live for the session (the same pids across
// inputs, new declarations checked there), model and optimizer handles
// live on them across inputs, an error on the workers or Ctrl-C keeps the
// session, a handle whose state went with the workers says so, and :reset
// and leaving end every process and leave nothing in /dev/shm or TMPDIR.
// Expected values are computed by hand from the program, or (random
// draws) are what `ss run` of the same file prints on one device: the
// spec's one-device oracle.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "interp/tests/devices_process_util.h"
#include "interp/tests/pty_repl.h"

using ss::testing::all_end;
using ss::testing::children_of;
using ss::testing::left_by;
using ss::testing::PtyRepl;

namespace {

// Lin's loss is mean(y) · sum(w): each w_k's gradient is the batch's
// mean(y), so SGD moves every w_k by -lr · mean(y). `bad` fails on the
// workers (label 9 of 2 classes, line 18, column 12); `spin` never ends;
// `noise` draws from randn (line 26), whose draws are keyed by the fn's
// name and the draw's position in it ("noise#0"); `drift` never ends either,
// and each worker's copy of m grows with the iterations it ran; `shift` moves
// every w_k by mean(y) and gives mean(y) · sum(w).
const char* kLin = R"(dim K = 2

data Pt:
    x: f32
    y: f32

model Lin:
    w: [K] = zeros()

fn loss(m: Lin, batch: [b] Pt) -> f32:
    return mean(batch.y) * sum(m.w)

fn step(mut m: Lin, mut opt: SGD[Lin], batch: [b] Pt):
    let l, g = value_and_grad(loss, m, batch)
    update(m, opt, g)

fn bad(m: Lin, batch: [b] Pt) -> f32:
    return cross_entropy(ones([2, K]), tensor([0, 9])) + mean(batch.y)

fn spin(mut m: Lin, batch: [b] Pt):
    let k = 0
    while true:
        k = k + 1

fn noise(m: Lin, batch: [b] Pt) -> f32:
    return sum(randn([K], seed=7)) + 0.0 * mean(batch.y) * sum(m.w)

fn drift(mut m: Lin, batch: [b] Pt):
    while true:
        m.w = m.w + 1.0

fn yloss(m: Lin, y: [b] f32) -> f32:
    return mean(y) * sum(m.w)

fn shift(mut m: Lin, y: [b] f32) -> f32:
    m.w = m.w + mean(y)
    return yloss(m, y)
)";

// Imported by sub/uses.ss, as "helpers.ss": relative to sub/, not to the
// repl's working folder. `total` is a worker fn (a batch-axis argument).
const char* kHelpers = R"(data Q:
    v: f32

fn total(batch: [b] Q) -> f32:
    return sum(batch.v)
)";

struct Folder {
  std::string dir = "/tmp/ss_repl_devices_" + std::to_string(::getpid());
  std::string tmp = dir + "/tmp";  // the repl's TMPDIR
  Folder() {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir + "/sub");
    std::filesystem::create_directories(tmp);
    std::ofstream(dir + "/lin.ss") << kLin;
    // 12 points, y = x = 0..11: batches of 4 have mean(y) 1.5, 5.5, 9.5.
    std::ofstream csv(dir + "/pts.csv");
    csv << "x,y\n";
    for (int i = 0; i < 12; ++i) csv << i << "," << i << "\n";
    std::ofstream(dir + "/sub/helpers.ss") << kHelpers;
    std::ofstream(dir + "/sub/uses.ss") << "import \"helpers.ss\"\n";
    // v = 1..8: batches of 4 sum to 10 and 26.
    std::ofstream q(dir + "/q.csv");
    q << "v\n";
    for (int i = 1; i <= 8; ++i) q << i << "\n";
  }
  ~Folder() { std::filesystem::remove_all(dir); }
  std::vector<std::string> env() const { return {"TMPDIR=" + tmp}; }
};

void line(PtyRepl& r, const std::string& text) {
  r.send(text + "\r");
  REQUIRE(r.expect("ss> "));
}

// Every test's first lines: the prompt, then `data` (pts.csv) and [lets],
// each one input (the transcript's lines 1, 2, ...).
void begin(PtyRepl& r, const Folder& f, const std::vector<std::string>& lets) {
  REQUIRE(r.expect("ss> "));
  line(r, "let data = dataset(Pt, \"" + f.dir + "/pts.csv\")");
  for (const std::string& l : lets) line(r, l);
}

// Declares [decl] (a fn's lines), calls [call] on the whole batch (one
// call) and expects `sum(m.w)` to read [sum].
void declare_and_train(PtyRepl& r,
                       const std::string& decl,
                       const std::string& call,
                       const std::string& sum) {
  r.send(decl + "\r");
  REQUIRE(r.expect("ss> "));
  r.send("for batch in data.batches(12):\r    " + call + "\r\r");
  r.send("float(sum(m.w))\r");
  CHECK(r.expect(sum + "  : float"));
  CHECK(r.expect("ss> "));
}

// Waits (up to 5 s) until killed process [pid] can be reaped by its
// parent: a zombie whose threads have all ended. Its main thread reads
// as a zombie sooner, while the others still exit (a loaded machine takes
// a while), and until they have, its parent cannot see that it died.
bool reapable(pid_t pid) {
  for (int i = 0; i < 500; ++i) {
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    if (!status) return true;  // gone
    std::string key, state;
    int threads = -1;
    while (status >> key) {
      if (key == "State:") status >> state;
      if (key == "Threads:") status >> threads;
    }
    if (state == "Z" && threads <= 1) return true;
    usleep(10000);
  }
  return false;
}

// Whether the workers spin in their call: each has used 0.3 s of CPU time
// since [before] (far more than a step, so two that spin are at different
// statements by then). Waits up to 30 s.
bool spinning(const std::vector<pid_t>& workers,
              const std::vector<long>& before) {
  return ss::testing::each_used_cpu(workers, before, 0.3);
}

// Starts [loop] (a for loop's two lines), presses Ctrl-C once [ready] says
// the workers are in their call (by default: they spin in it), and expects
// [error]; returns the workers that ran it.
std::vector<pid_t> interrupt(
    PtyRepl& r,
    const std::string& loop,
    const std::string& error,
    const std::function<bool(const std::vector<pid_t>&,
                             const std::vector<long>&)>& ready = spinning,
    int depth = 1) {
  r.send(loop + "\r\r");
  std::vector<pid_t> workers = ss::testing::descendants_at(r.pid(), depth);
  for (int i = 0; i < 500 && workers.size() != 2; ++i) {
    usleep(20000);
    workers = ss::testing::descendants_at(r.pid(), depth);
  }
  REQUIRE(workers.size() == 2);
  std::vector<long> before;
  for (pid_t w : workers) before.push_back(ss::testing::cpu_ticks(w));
  CHECK(ready(workers, before));
  r.send("\x03");
  CHECK(r.expect(error, 10));
  return workers;
}

// The session of the first test case, its workers started with [extra]
// (none: the repl's children over /dev/shm), [depth] generations below it
// (devices_process_util.h's descendants_at).
void handles_survive(const std::vector<std::string>& extra, int depth) {
  Folder f;
  std::vector<std::string> args = {"--devices", "cpu[0 1]", f.dir + "/lin.ss"};
  args.insert(args.end(), extra.begin(), extra.end());
  PtyRepl r(args);
  auto children_of = [depth](pid_t pid) {
    return ss::testing::descendants_at(pid, depth);
  };
  // 1-3
  begin(r, f, {"let m = Lin.init(seed=0)", "let opt = sgd(m, lr=0.25)"});
  // 4-6: an epoch on the workers: w_k = -0.25 · (1.5 + 5.5 + 9.5).
  r.send("for batch in data.batches(4):\r    step(m, opt, batch)\r\r");
  r.send("float(sum(m.w))\r");  // 7
  CHECK(r.expect("-8.25  : float"));
  r.send("opt.step\r");  // 8
  CHECK(r.expect("3  : int"));
  // 9-11: the next input's workers get m and opt as the last left them.
  r.send("for batch in data.batches(4):\r    step(m, opt, batch)\r\r");
  r.send("float(sum(m.w))\r");  // 12
  CHECK(r.expect("-16.5  : float"));
  // 13-16: one more step, then an error raised on a worker: located in the
  // file, called from the typed line; the session goes on with the step.
  r.send(
      "for batch in data.batches(4):\r    step(m, opt, batch)\r"
      "    print(bad(m, batch))\r\r");
  CHECK(r.expect(f.dir + "/lin.ss:18:12: ValueError: cross_entropy: label 9 "
                         "is out of range for 2 classes"));
  CHECK(r.expect("raised on worker"));
  CHECK(r.expect("bad, called at <repl>:15:11"));
  r.send("float(sum(m.w))\r");  // 17: -16.5 - 0.25 · 1.5 · 2
  CHECK(r.expect("-17.25  : float"));
  r.send("opt.step\r");  // 18
  CHECK(r.expect("7  : int"));
  // 19-21: Ctrl-C stops the workers' endless step, at its loop in
  // lin.ss; the workers live on (the same processes), and so does m on
  // them: `spin` left every copy as it was.
  std::vector<pid_t> workers =
      interrupt(r,
                "for batch in data.batches(4):\r    spin(m, batch)",
                f.dir + "/lin.ss:23:9: KeyboardInterrupt: interrupted",
                spinning,
                depth);
  CHECK(r.expect("ss> "));
  r.send("float(sum(m.w))\r");  // 22
  CHECK(r.expect("-17.25  : float"));
  CHECK(children_of(r.pid()) == workers);
  // 23-25: one more epoch on them: -17.25 - 0.25 · 16.5 · 2.
  r.send("for batch in data.batches(4):\r    step(m, opt, batch)\r\r");
  r.send("float(sum(m.w))\r");  // 26
  CHECK(r.expect("-25.5  : float"));
  CHECK(children_of(r.pid()) == workers);
  r.send(":quit\r");
  CHECK(r.wait_exit() == 0);
  CHECK(all_end(workers));
}

}  // namespace

TEST_CASE("repl on cpu[0 1]: handles survive inputs, errors keep the session",
          "[repl][repl_devices][process]") {
  handles_survive({}, 1);
}

TEST_CASE(
    "repl on cpu[0 1] over TCP: handles survive inputs, Ctrl-C reaches the "
    "workers",
    "[repl][repl_devices][process][tcp]") {
  // Issue 26: the session's workers over authenticated TCP, as on other
  // hosts (each exec'd supervisor's child): the interrupt travels as a
  // frame (kInterrupt), and the workers live on.
  handles_survive({"--hosts", "127.0.0.1:2", "--launch", "{cmd}"}, 2);
}

TEST_CASE(
    "repl on cpu[0 1]: a WorkerError keeps the session, and the state is gone",
    "[repl][repl_devices][process]") {
  // ss_test_hooks: worker 1 fails after its second call in each input's
  // workers (Note [Test hooks]).
  Folder f;
  PtyRepl r({"--devices", "cpu[0 1]", f.dir + "/lin.ss"},
            {"SHAPESCRIPT_TEST_FAIL_CALL=1:2"},
            SS_HOOKS_BINARY);
  // 1-3
  begin(r, f, {"let m = Lin.init(seed=0)", "let opt = sgd(m, lr=0.25)"});
  r.send("for batch in data.batches(4):\r    step(m, opt, batch)\r\r");
  CHECK(
      r.expect("WorkerError: worker 1 failed while running `step` "
               "(<repl>:5:5)"));
  r.send("float(sum(m.w))\r");  // 7
  CHECK(r.expect("<repl>:7:11: error[E0201]: unknown name `m`"));
  CHECK(r.expect("the devices' state of `m` is gone"));
  // 8-11: new workers; one batch of 12 (mean(y) 5.5) is one call.
  line(r, "let m = Lin.init(seed=0)");
  line(r, "let opt = sgd(m, lr=0.25)");
  r.send("for batch in data.batches(12):\r    step(m, opt, batch)\r\r");
  r.send("float(sum(m.w))\r");  // 13: -0.25 · 5.5 · 2
  CHECK(r.expect("-2.75  : float"));
  r.send(":quit\r");
  CHECK(r.wait_exit() == 0);
}

namespace {

// What `ss run` prints for [program], run on one device in [dir].
std::string ss_run(const std::string& dir, const std::string& file) {
  std::string cmd = "cd " + dir + " && " + SS_BINARY + " run " + file;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p);
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  REQUIRE(pclose(p) == 0);
  return out;
}

}  // namespace

TEST_CASE(
    "repl on cpu[0 1]: a worker fn called at the prompt runs on the workers",
    "[repl][repl_devices][process]") {
  // Issue 25, defect 5: an input without a host effect (no dataset, no
  // print) was placed on the workers itself, so the repl ran it and the
  // worker fn it calls in its own process: no worker started. What is
  // typed at the prompt is the controller's (devices.md), wherever it is.
  Folder f;
  PtyRepl r({"--devices", "cpu[0 1]", f.dir + "/lin.ss"}, f.env());
  REQUIRE(r.expect("ss> "));
  line(r, "let m = Lin.init(seed=0)");
  CHECK(children_of(r.pid()).empty());
  r.send("shift(m, ones([6]))\r");  // w = [1 1]: 1 · 2
  CHECK(r.expect("f32 2"));         // a 0-d f32 tensor prints with its dtype
  CHECK(children_of(r.pid()).size() == 2);
  r.send("float(sum(m.w))\r");
  CHECK(r.expect("2.0  : float"));
  // Device work typed at the prompt is the controller's too: E1803, as in
  // a main that prints, naming the input.
  r.send("let l, g = value_and_grad(yloss, m, ones([6]))\r");
  CHECK(
      r.expect("error[E1803]: `value_and_grad` is device work, but this "
               "input runs in the controller"));
  CHECK(
      r.expect("this input runs in the controller because the repl runs "
               "what is typed at its prompt"));
  r.send(":quit\r");
  CHECK(r.wait_exit() == 0);
}

TEST_CASE("repl on cpu[0 1]: the workers live for the session",
          "[repl][repl_devices][process]") {
  Folder f;
  std::vector<std::string> env = f.env();
  env.push_back("SHAPESCRIPT_CONTROL_STATS=1");
  PtyRepl r({"--devices", "cpu[0 1]", f.dir + "/lin.ss"}, env);
  // 1-3
  begin(r, f, {"let m = Lin.init(seed=0)", "let opt = sgd(m, lr=0.25)"});
  // Started at the first call of a worker fn, not before (devices.md).
  CHECK(children_of(r.pid()).empty());
  r.send("for batch in data.batches(4):\r    step(m, opt, batch)\r\r");
  r.send("float(sum(m.w))\r");
  CHECK(r.expect("-8.25  : float"));
  std::vector<pid_t> workers = children_of(r.pid());
  CHECK(workers.size() == 2);
  CHECK(!left_by(r.pid(), f.tmp).empty());  // their job's names, for now
  // A new fn, checked again on the running workers (they had no `twice`):
  // two steps on the whole batch, mean(y) 5.5 each: -8.25 - 2 · 0.25 ·
  // 5.5 · 2.
  declare_and_train(r,
                    "fn twice(mut m: Lin, mut opt: SGD[Lin], batch: [b] Pt):\r"
                    "    step(m, opt, batch)\r    step(m, opt, batch)\r",
                    "twice(m, opt, batch)",
                    "-13.75");
  CHECK(children_of(r.pid()) == workers);
  // A redefined loss reaches them too: its gradient is now 2 · mean(y),
  // 11 on the whole batch: -13.75 - 0.25 · 11 · 2.
  declare_and_train(r,
                    "fn loss(m: Lin, batch: [b] Pt) -> f32:\r"
                    "    return 2.0 * mean(batch.y) * sum(m.w)\r",
                    "step(m, opt, batch)",
                    "-19.25");
  CHECK(children_of(r.pid()) == workers);
  // randn on the workers draws what `ss run lin.ss` draws on one device:
  // the site is lin.ss:26, not a file the repl wrote.
  std::string dir1 = f.dir + "/one";
  std::filesystem::create_directories(dir1);
  std::ofstream(dir1 + "/lin.ss")
      << kLin
      << "\nfn main():\n    let m = Lin.init(seed=0)\n"
         "    let data = dataset(Pt, \""
      << f.dir << "/pts.csv\")\n"
      << "    for batch in data.batches(12):\n"
         "        print(noise(m, batch))\n";
  std::string drawn = ss_run(dir1, "lin.ss");
  REQUIRE(!drawn.empty());
  r.send("for batch in data.batches(12):\r    print(noise(m, batch))\r\r");
  CHECK(r.expect(drawn.substr(0, drawn.find('\n'))));
  CHECK(r.expect("ss> "));
  // A :load'ed file's import resolves relative to that file (sub/), as
  // `ss run sub/uses.ss` resolves it, and on the workers too.
  line(r, ":load " + f.dir + "/sub/uses.ss");
  line(r, "let qs = dataset(Q, \"" + f.dir + "/q.csv\")");
  r.send("for batch in qs.batches(4):\r    print(float(total(batch)))\r\r");
  CHECK(r.expect("10.0"));
  CHECK(r.expect("26.0"));
  CHECK(r.expect("ss> "));
  CHECK(children_of(r.pid()) == workers);
  // :reset ends the workers and leaves nothing of their job behind. Their
  // counters: 8 calls (3 + 1 + 1 + 1 + 2) and 3 fetches (m, read three
  // times; the models stayed on the workers between inputs); 29 messages:
  // 8 calls and 4 declarations (at the start, `twice`, `loss`, uses.ss) to
  // 2 workers, plus the start (2) and the 3 fetches (rank 0 alone).
  r.send(":reset\r");
  CHECK(r.expect("control: 8 calls, 29 messages to 2 workers, 3 fetches,"));
  CHECK(r.expect("session reset"));
  CHECK(all_end(workers));
  CHECK(left_by(r.pid(), f.tmp).empty());
  // New ones at the next need; leaving the repl ends them too.
  line(r, ":load " + f.dir + "/lin.ss");
  line(r, "let data = dataset(Pt, \"" + f.dir + "/pts.csv\")");
  line(r, "let m = Lin.init(seed=0)");
  line(r, "let opt = sgd(m, lr=0.25)");
  r.send("for batch in data.batches(12):\r    step(m, opt, batch)\r\r");
  r.send("float(sum(m.w))\r");  // -0.25 · 5.5 · 2
  CHECK(r.expect("-2.75  : float"));
  std::vector<pid_t> next = children_of(r.pid());
  CHECK(next.size() == 2);
  CHECK(next != workers);
  r.send(":quit\r");
  CHECK(r.wait_exit() == 0);
  CHECK(all_end(next));
  CHECK(left_by(r.pid(), f.tmp).empty());
}

TEST_CASE(
    "repl on cpu[0 1]: Ctrl-C with a worker that cannot stop ends the workers",
    "[repl][repl_devices][process]") {
  // ss_test_hooks: worker 1 stops its process (SIGSTOP) before answering
  // its first call, so it cannot take the interrupt; after the pool's
  // grace the workers end, and the model they held newer with them.
  Folder f;
  std::vector<std::string> env = f.env();
  env.push_back("SHAPESCRIPT_TEST_FAIL_CALL=1:1:stop");
  PtyRepl r({"--devices", "cpu[0 1]", f.dir + "/lin.ss"}, env, SS_HOOKS_BINARY);
  // 1-3
  begin(r, f, {"let m = Lin.init(seed=0)", "let opt = sgd(m, lr=0.25)"});
  // Ctrl-C once worker 1 has stopped itself in its first call.
  auto one_stopped = [](const std::vector<pid_t>& workers,
                        const std::vector<long>&) {
    return ss::testing::some_stopped(workers);
  };
  std::vector<pid_t> workers = interrupt(
      r,
      "for batch in data.batches(12):\r    step(m, opt, batch)",
      "<repl>:4:1: KeyboardInterrupt: interrupted; the workers were stopped",
      one_stopped);
  CHECK(all_end(workers));
  r.send("float(sum(m.w))\r");  // 7
  CHECK(r.expect("<repl>:7:11: error[E0201]: unknown name `m`"));
  CHECK(r.expect("the devices' state of `m` is gone"));
  // The session goes on: a model made again is read here.
  line(r, "let m = Lin.init(seed=0)");
  r.send("float(sum(m.w))\r");
  CHECK(r.expect("0.0  : float"));
  r.send(":quit\r");
  CHECK(r.wait_exit() == 0);
  CHECK(left_by(r.pid(), f.tmp).empty());
}

TEST_CASE(
    "repl on cpu[0 1]: Ctrl-C that leaves the workers' copies apart drops "
    "that model only",
    "[repl][repl_devices][process]") {
  Folder f;
  PtyRepl r({"--devices", "cpu[0 1]", f.dir + "/lin.ss"}, f.env());
  // 1-4
  begin(r,
        f,
        {"let m = Lin.init(seed=0)",
         "let kept = Lin.init(seed=0)",
         "let opt = sgd(kept, lr=0.25)"});
  // 5-7: kept trains on the workers (-0.25 · 16.5 · 2), and stays there.
  r.send("for batch in data.batches(4):\r    step(kept, opt, batch)\r\r");
  // 8-10: Ctrl-C stops each worker after however many iterations it ran:
  // their copies of m differ (two processes on a shared machine do not
  // keep step over 0.3 s of CPU time each), those of `kept` do not.
  std::vector<pid_t> workers =
      interrupt(r,
                "for batch in data.batches(12):\r    drift(m, batch)",
                f.dir + "/lin.ss:30:9: KeyboardInterrupt: interrupted");
  r.send("m\r");  // 11
  CHECK(r.expect("<repl>:11:1: error[E0201]: unknown name `m`"));
  CHECK(
      r.expect("the devices' state of `m` is gone: Ctrl-C stopped the "
               "workers at different statements, and their copies of it "
               "differ"));
  r.send("float(sum(kept.w))\r");  // 12
  CHECK(r.expect("-8.25  : float"));
  CHECK(children_of(r.pid()) == workers);
  r.send(":quit\r");
  CHECK(r.wait_exit() == 0);
}

TEST_CASE(
    "repl on cpu[0 1]: a worker killed between inputs takes only what it "
    "held newer",
    "[repl][repl_devices][process]") {
  Folder f;
  PtyRepl r({"--devices", "cpu[0 1]", f.dir + "/lin.ss"}, f.env());
  // 1-4
  begin(r,
        f,
        {"let m = Lin.init(seed=0)",
         "let opt = sgd(m, lr=0.25)",
         "let fresh = Lin.init(seed=0)"});
  // 5-8: m trains on the workers and is newer there; `fresh` goes there
  // too, and is not changed.
  r.send(
      "for batch in data.batches(4):\r    step(m, opt, batch)\r"
      "    noise(fresh, batch)\r\r");
  std::string said;
  REQUIRE(r.expect("ss> ", 10, &said));
  INFO(said);
  CHECK(said.find("Error") == std::string::npos);
  std::vector<pid_t> workers = children_of(r.pid());
  REQUIRE(workers.size() == 2);
  kill(workers[1], SIGKILL);
  REQUIRE(reapable(workers[1]));  // dead before the next input asks
  r.send("float(sum(m.w))\r");    // 9
  CHECK(r.expect("<repl>:9:1: WorkerError: worker 1 (pid " +
                 std::to_string(workers[1]) + ") was killed by signal 9"));
  CHECK(all_end(workers));
  r.send("m\r");  // 10
  CHECK(r.expect("<repl>:10:1: error[E0201]: unknown name `m`"));
  CHECK(
      r.expect("the devices' state of `m` is gone: the workers held it "
               "newer than this process and could not give it back"));
  // 11-14: `fresh`, current here, goes whole to new workers and trains
  // there: -0.25 · 16.5 · 2.
  line(r, "let opt2 = sgd(fresh, lr=0.25)");
  r.send("for batch in data.batches(4):\r    step(fresh, opt2, batch)\r\r");
  r.send("float(sum(fresh.w))\r");  // 15
  CHECK(r.expect("-8.25  : float"));
  std::vector<pid_t> next = children_of(r.pid());
  CHECK(next.size() == 2);
  CHECK(next != workers);
  r.send(":quit\r");
  CHECK(r.wait_exit() == 0);
}

TEST_CASE(
    "repl with a file's devices line: a new device list brings the state "
    "back and goes on with new workers",
    "[repl][repl_devices][process]") {
  Folder f;
  std::ofstream(f.dir + "/two.ss") << "devices cpu[0 1]\n\n" << kLin;
  PtyRepl r({f.dir + "/two.ss"}, f.env());
  // 1-3
  begin(r, f, {"let m = Lin.init(seed=0)", "let opt = sgd(m, lr=0.25)"});
  // 4-6: an epoch on the file's two workers.
  r.send("for batch in data.batches(4):\r    step(m, opt, batch)\r\r");
  REQUIRE(r.expect("ss> "));
  std::vector<pid_t> two = children_of(r.pid());
  CHECK(two.size() == 2);
  // 7: they end, their newer m and opt copied back first.
  line(r, "devices cpu[0 1 2]");
  CHECK(all_end(two));
  r.send("float(sum(m.w))\r");  // 8: -0.25 · 16.5 · 2
  CHECK(r.expect("-8.25  : float"));
  // 9-11: the next epoch on three new workers, from where m and opt were.
  r.send("for batch in data.batches(4):\r    step(m, opt, batch)\r\r");
  r.send("opt.step\r");  // 12
  CHECK(r.expect("6  : int"));
  CHECK(children_of(r.pid()).size() == 3);
  r.send("float(sum(m.w))\r");  // 13
  CHECK(r.expect("-16.5  : float"));
  r.send(":quit\r");
  CHECK(r.wait_exit() == 0);
  CHECK(left_by(r.pid(), f.tmp).empty());
}
