// `ss repl --devices 'cpu[0 1]'` as a controller (issue 14 item 1, in
// part; Note [Repl inputs on devices]), through a pseudo-terminal: worker
// fns run in `ss worker` processes, model and optimizer handles survive
// across inputs, an error on the workers or Ctrl-C keeps the session, and
// a handle whose state went with the workers says so. Expected values are
// computed by hand from the program.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "interp/tests/pty_repl.h"

using ss::testing::PtyRepl;

namespace {

// Lin's loss is mean(y) · sum(w): each w_k's gradient is the batch's
// mean(y), so SGD moves every w_k by -lr · mean(y). `bad` fails on the
// workers (label 9 of 2 classes, line 18, column 12); `spin` never ends.
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
)";

struct Folder {
  std::string dir = "/tmp/ss_repl_devices_" + std::to_string(::getpid());
  Folder() {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    std::ofstream(dir + "/lin.ss") << kLin;
    // 12 points, y = x = 0..11: batches of 4 have mean(y) 1.5, 5.5, 9.5.
    std::ofstream csv(dir + "/pts.csv");
    csv << "x,y\n";
    for (int i = 0; i < 12; ++i) csv << i << "," << i << "\n";
  }
  ~Folder() { std::filesystem::remove_all(dir); }
};

void line(PtyRepl& r, const std::string& text) {
  r.send(text + "\r");
  REQUIRE(r.expect("ss> "));
}

}  // namespace

TEST_CASE("repl on cpu[0 1]: handles survive inputs, errors keep the session",
          "[repl][repl_devices][process]") {
  Folder f;
  PtyRepl r({"--devices", "cpu[0 1]", f.dir + "/lin.ss"});
  REQUIRE(r.expect("ss> "));
  line(r, "let data = dataset(Pt, \"" + f.dir + "/pts.csv\")");  // 1
  line(r, "let m = Lin.init(seed=0)");                           // 2
  line(r, "let opt = sgd(m, lr=0.25)");                          // 3
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
  // 19-21: Ctrl-C stops the workers' endless step; m went with them.
  r.send("for batch in data.batches(4):\r    spin(m, batch)\r\r");
  usleep(1500000);
  r.send("\x03");
  CHECK(r.expect("KeyboardInterrupt", 20));
  r.send("m\r");  // 22
  CHECK(r.expect("<repl>:22:1: error[E0201]: unknown name `m`"));
  CHECK(r.expect("the devices' state of `m` is gone"));
  r.send("1 + 1\r");  // 23
  CHECK(r.expect("2  : int"));
  line(r, "let m = Lin.init(seed=0)");  // 24
  r.send("float(sum(m.w))\r");          // 25
  CHECK(r.expect("0.0  : float"));
  r.send(":quit\r");
  CHECK(r.wait_exit() == 0);
}

TEST_CASE(
    "repl on cpu[0 1]: a WorkerError keeps the session; the state is gone",
    "[repl][repl_devices][process]") {
  // ss_test_hooks: worker 1 fails after its second call in each input's
  // workers (Note [Test hooks]).
  Folder f;
  PtyRepl r({"--devices", "cpu[0 1]", f.dir + "/lin.ss"},
            {"SHAPESCRIPT_TEST_FAIL_CALL=1:2"},
            SS_HOOKS_BINARY);
  REQUIRE(r.expect("ss> "));
  line(r, "let data = dataset(Pt, \"" + f.dir + "/pts.csv\")");  // 1
  line(r, "let m = Lin.init(seed=0)");                           // 2
  line(r, "let opt = sgd(m, lr=0.25)");                          // 3
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
