// `ss repl --deterministic` (issue 28; Note [Deterministic mode] in
// interp/devices/lower/chunks.h) through a pseudo-terminal, as a user at a
// terminal runs it: the same session typed on `cpu` and on `cpu[0 1 2]`
// (workers that live for the session) prints the same params, bit for bit
// (a float prints every digit of its double). The oracle is one device in
// the mode; the control is the same session on three devices without it,
// whose sums round their own way.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "interp/tests/pty_repl.h"

using ss::testing::PtyRepl;

namespace {

const char* kMlp = R"(dim D = 784
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

fn step(mut m: Mlp, mut opt: AdamW[Mlp], batch: [b] Digit) -> f32:
    let l, g = value_and_grad(loss, m, batch)
    update(m, opt, g)
    return l
)";

struct Folder {
  std::string dir = "/tmp/ss_repl_det_" + std::to_string(::getpid());
  Folder() {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir + "/tmp");
    std::ofstream(dir + "/mlp.ss") << kMlp;
  }
  ~Folder() { std::filesystem::remove_all(dir); }
};

// The session typed on [devices] (with --deterministic when [det]): what
// the last input prints, the sum of w1's squares after 4 AdamW steps on
// batches of 60, 60, 60 and 20.
std::string session(const Folder& f, const std::string& devices, bool det) {
  std::vector<std::string> args = {"--devices", devices};
  if (det) args.push_back("--deterministic");
  args.push_back(f.dir + "/mlp.ss");
  PtyRepl r(args, {"TMPDIR=" + f.dir + "/tmp"});
  REQUIRE(r.expect("ss> "));
  for (const char* l : {"let data = synthetic_digits(Digit, 200, seed=3)",
                        "let m = Mlp.init(seed=0)",
                        "let opt = adamw(m, lr=1e-2)"}) {
    r.send(std::string(l) + "\r");
    REQUIRE(r.expect("ss> "));
  }
  r.send("for batch in data.batches(60):\r    step(m, opt, batch)\r\r");
  REQUIRE(r.expect("ss> ", 60));
  r.send("float(sum(m.w1 * m.w1)) + float(sum(m.w2))\r");
  std::string printed;
  REQUIRE(r.expect("  : float", 30, &printed));
  r.send(":quit\r");
  CHECK(r.wait_exit() == 0);
  // The value is the last line before the type.
  const size_t nl = printed.find_last_of('\n');
  return nl == std::string::npos ? printed : printed.substr(nl + 1);
}

}  // namespace

TEST_CASE(
    "repl --deterministic: three devices print one device's bits, a session "
    "at a time",
    "[repl][repl_devices][process][deterministic]") {
  Folder f;
  const std::string one = session(f, "cpu", true);
  INFO("one device printed " << one);
  REQUIRE(one.find('.') != std::string::npos);
  CHECK(session(f, "cpu[0 1 2]", true) == one);
  // The control: the comparison sees three devices' rounding without the
  // mode.
  CHECK(session(f, "cpu[0 1 2]", false) != one);
}
