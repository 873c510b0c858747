// What a repl user expects (issue 14 item 2), through a pseudo-terminal:
// redefining a declaration replaces it (Note [Repl redefinition] in
// interp/cli/repl.cpp), and errors point at what the user typed or loaded
// (Note [Source origins] in diag/source.cpp). Every expected text is
// written by hand: values computed from the inputs, positions counted in
// the typed lines (the transcript's lines count over the session, ghci's
// way).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "interp/tests/pty_repl.h"
#include "ops/core/philox.h"
#include "ref/ref_ops.h"

using ss::testing::PtyRepl;

namespace {

std::string temp_file(const std::string& name, const std::string& text) {
  std::string path =
      "/tmp/ss_repl_session_" + std::to_string(getpid()) + "_" + name;
  std::ofstream(path) << text;
  return path;
}

// Sends one line and waits for a prompt.
void line(PtyRepl& r, const std::string& text) {
  r.send(text + "\r");
  REQUIRE(r.expect("ss> "));
}

// Sends a block (a header line ending in ':' and its lines), ended by an
// empty line.
void block(PtyRepl& r, const std::vector<std::string>& lines) {
  std::string keys;
  for (const std::string& l : lines) keys += l + "\r";
  r.send(keys + "\r");
  REQUIRE(r.expect("ss> "));
}

void quit(PtyRepl& r) {
  r.send(":quit\r");
  CHECK(r.wait_exit() == 0);
}

}  // namespace

TEST_CASE(
    "repl: a redefinition replaces, and values that still fit keep working",
    "[repl][redefine]") {
  PtyRepl r;
  REQUIRE(r.expect("ss> "));
  line(r, "dim D = 3");                          // 1
  line(r, "fn f(x: [b D]) -> [b D] = x * 2.0");  // 2
  r.send("float(sum(f(ones([2, D]))))\r");       // 3: 2·3 ones, doubled
  CHECK(r.expect("12.0  : float"));
  line(r, "fn f(x: [b D]) -> [b D] = x * 3.0");  // 4: not E0202
  r.send("float(sum(f(ones([2, D]))))\r");       // 5: now tripled
  CHECK(r.expect("18.0  : float"));
  block(r, {"model Lin:", "    w: [D] = ones()"});  // 6-8
  line(r, "let m = Lin.init(seed=0)");              // 9
  line(r, "let opt = sgd(m, lr=0.5)");              // 10
  // 11-13: the same fields, another initializer: m keeps its values.
  block(r, {"model Lin:", "    w: [D] = zeros()"});
  r.send("float(sum(m.w))\r");  // 14: m was made with ones
  CHECK(r.expect("3.0  : float"));
  r.send("float(sum(Lin.init(seed=0).w))\r");  // 15: the new init
  CHECK(r.expect("0.0  : float"));
  // 16-17: zeros_like(m) of a model is a zero Grads[Lin] (library.md).
  line(r, "let g = zeros_like(m)");
  r.send("float(sum(g.w))\r");
  CHECK(r.expect("0.0  : float"));
  // 18-21: a new field: m, opt and g no longer fit Lin and are dropped.
  block(r, {"model Lin:", "    w: [D] = ones()", "    b: [D] = zeros()"});
  r.send("m\r");  // 22
  CHECK(r.expect("<repl>:22:1: error[E0201]: unknown name `m`"));
  CHECK(r.expect(
      "22 | m\r\n"
      "   | ^ dropped by a redefinition\r\n"
      "   = note: `m` was made with an earlier definition of `Lin`, replaced "
      "at <repl>:18:1; its fields or shapes changed, so the session dropped "
      "it\r\n"
      "   = help: make it again with the new definition\r\n"));
  r.send("float(opt.step)\r");  // 23
  CHECK(r.expect("<repl>:23:7: error[E0201]: unknown name `opt`"));
  CHECK(r.expect("`opt` was made with an earlier definition of `Lin`"));
  line(r, "let m = Lin.init(seed=0)");     // 24
  r.send("float(sum(m.w) + sum(m.b))\r");  // 25: 3 ones, 3 zeros
  CHECK(r.expect("3.0  : float"));
  // 26: D's size changes m's shapes; f follows the new D.
  line(r, "dim D = 4");
  r.send("m\r");  // 27
  CHECK(r.expect("<repl>:27:1: error[E0201]: unknown name `m`"));
  CHECK(r.expect("earlier definition of `D`, replaced at <repl>:26:1"));
  r.send("float(sum(f(ones([2, D]))))\r");  // 28: 2·4 ones, tripled
  CHECK(r.expect("24.0  : float"));
  quit(r);
}

TEST_CASE("repl: a redefinition that breaks its users is refused",
          "[repl][redefine]") {
  PtyRepl r;
  REQUIRE(r.expect("ss> "));
  line(r, "dim D = 3");                                // 1
  line(r, "fn f(x: [b D]) -> [b D] = x * 2.0");        // 2
  line(r, "fn g(x: [b D]) -> [b D] = f(x) + 1.0");     // 3
  r.send("fn f(x: [b D]) -> [b] = sum(x, over=D)\r");  // 4
  // g's body no longer fits g's result: the error is in g, where it was
  // typed, and the session keeps the old f.
  CHECK(r.expect("<repl>:3:27: error[E0303]"));
  CHECK(r.expect("3 | fn g(x: [b D]) -> [b D] = f(x) + 1.0"));
  r.send("float(sum(g(ones([2, D]))))\r");  // 5: (2·1 + 1)·6
  CHECK(r.expect("18.0  : float"));
  quit(r);
}

TEST_CASE("repl: :load again after editing the file replaces its declarations",
          "[repl][redefine]") {
  std::string path = temp_file("reload.ss",
                               "dim D = 2\n"
                               "fn scale(x: [b D]) -> [b D] = x * 2.0\n");
  PtyRepl r;
  REQUIRE(r.expect("ss> "));
  line(r, ":load " + path);
  r.send("float(sum(scale(ones([1, D]))))\r");  // 2 ones, doubled
  CHECK(r.expect("4.0  : float"));
  std::ofstream(path) << "dim D = 2\n"
                         "fn scale(x: [b D]) -> [b D] = x * 5.0\n";
  line(r, ":load " + path);
  r.send("float(sum(scale(ones([1, D]))))\r");  // 2 ones, times 5
  CHECK(r.expect("10.0  : float"));
  // A name declared twice in one file is still E0202, at the file's
  // lines.
  std::string dup = temp_file("dup.ss",
                              "fn twice() -> f32 = 1.0\n"
                              "\n"
                              "fn twice() -> f32 = 2.0\n");
  r.send(":load " + dup + "\r");
  CHECK(r.expect(dup + ":3:4: error[E0202]: fn `twice` is declared twice"));
  CHECK(r.expect("first declared here (at " + dup + ":1:4)"));
  quit(r);
  std::remove(path.c_str());
  std::remove(dup.c_str());
}

TEST_CASE("repl: errors are located in what the user typed",
          "[repl][locations]") {
  PtyRepl r;
  REQUIRE(r.expect("ss> "));
  line(r, "let x = ones([2, 3])");  // 1
  // 2: the matmul's span is the whole `x @ x` (errors/E0302.md).
  r.send("x @ x\r");
  CHECK(r.expect("<repl>:2:1: error[E0302]"));
  CHECK(r.expect("2 | x @ x\r\n  | ^^^^^"));
  // 3: typed after three spaces.
  r.send("   x @ x\r");
  CHECK(r.expect("<repl>:3:4: error[E0302]"));
  CHECK(r.expect("3 |    x @ x\r\n  |    ^^^^^"));
  // 4-6: the second line of a block; `nope` is after "    print(i + ".
  r.send("for i in range(2):\r    print(i + nope)\r\r");
  CHECK(r.expect("<repl>:5:15: error[E0201]: unknown name `nope`"));
  CHECK(r.expect("5 |     print(i + nope)\r\n  |               ^^^^"));
  // 7: :type's expression starts at column 7.
  r.send(":type x @ x\r");
  CHECK(r.expect("<repl>:7:7: error[E0302]"));
  CHECK(r.expect("7 | :type x @ x\r\n  |       ^^^^^"));
  quit(r);
}

TEST_CASE("repl: errors from a loaded file carry the file's name and lines",
          "[repl][locations]") {
  // Line 5's `x @ x` starts after "fn broken(x: [b D]) -> [b D] = ", 31
  // characters.
  std::string path = temp_file("broken.ss",
                               "dim D = 3\n"
                               "\n"
                               "fn ok(x: [b D]) -> [b D] = x\n"
                               "\n"
                               "fn broken(x: [b D]) -> [b D] = x @ x\n");
  // Given on the command line, as `ss repl FILE`, and by :load.
  PtyRepl r({path});
  CHECK(r.expect(path + ":5:32: error[E0302]"));
  CHECK(
      r.expect("5 | fn broken(x: [b D]) -> [b D] = x @ x\r\n"
               "  |                                ^^^^^"));
  REQUIRE(r.expect("ss> "));
  r.send(":load " + path + "\r");  // typed line 1
  CHECK(r.expect(path + ":5:32: error[E0302]"));
  REQUIRE(r.expect("ss> "));
  // A runtime error in a loaded fn: at the file's line, called from the
  // typed line. Label 9 of 4 classes; `cross_entropy` starts at column 12.
  std::string pick = temp_file("pick.ss",
                               "dim C = 4\n"
                               "\n"
                               "fn pick(z: [b C], y: [b] i64) -> f32:\n"
                               "    return cross_entropy(z, y)\n");
  line(r, ":load " + pick);                        // 2
  r.send("pick(ones([2, C]), tensor([0, 9]))\r");  // 3
  CHECK(r.expect(pick + ":4:12: ValueError"));
  CHECK(
      r.expect("4 |     return cross_entropy(z, y)\r\n"
               "  |            ^^^^^^^^^^^^^^^^^^^"));
  CHECK(r.expect("pick, called at <repl>:3:1"));
  quit(r);
  std::remove(path.c_str());
  std::remove(pick.c_str());
}

TEST_CASE("repl: a loaded file's randn draws from its call site",
          "[repl][locations]") {
  // language.md: randn(T, seed=) draws (seed, call site, element index),
  // the site being the fn's name and the call's position among its draws
  // (Note [A draw's site] in interp/check/calls.cpp), so the repl draws
  // what `ss run FILE` draws, whatever else the session holds. Before the
  // source origins, the site was the wrapped text's line, which moved
  // with the session's other declarations (main's repl printed 1.7238...,
  // ss run 2.8959...). draw's first draw: "draw#0".
  std::string path =
      temp_file("draw.ss",
                "dim K = 4\n"
                "fn draw() -> f32 = float(sum(randn([K], seed=7)))\n");
  std::string site = "draw#0";
  // The oracle: ref/'s Box-Muller on Philox words under that key (stream
  // and offset 0, as the evaluator passes them), summed in double.
  double want = 0;
  for (double v : ss::ref::randn({4},
                                 ss::types::DType::F64,
                                 ss::ops::philox::key_for(7, site.c_str()),
                                 0)
                      .to_doubles())
    want += v;
  PtyRepl r({path});
  REQUIRE(r.expect("ss> "));
  line(r, "let unrelated = 1");  // typed lines do not move the file's sites
  r.send("draw()\r");
  std::string shown;
  REQUIRE(r.expect("  : f32", 10, &shown));
  shown = shown.substr(shown.find_last_of('\n') + 1);  // the value's line
  double got = std::stod(shown);
  // The sum of four f32 draws: f32 rounding of each and of the sum, ~1e-6
  // relative on values of size ~1.
  CHECK(got == Approx(want).margin(1e-5));
  quit(r);
  std::remove(path.c_str());
}

TEST_CASE("repl: :explain shows the devices report for the session's devices",
          "[repl][explain]") {
  PtyRepl r({"--devices", "cpu[0 1 2]"});
  REQUIRE(r.expect("ss> "));
  line(r, "dim D = 4");                                        // 1
  line(r, "dim C = 3");                                        // 2
  block(r, {"data Pt:", "    x: [D]", "    y: i64 in 0..C"});  // 3-6
  block(r, {"model Lin:", "    w: [D C] = normal(std=0.1)"});  // 7-9
  block(r,
        {"fn loss(m: Lin, batch: [b] Pt) -> f32:",  // 10-12
         "    return cross_entropy(batch.x @ m.w, batch.y)"});
  r.send(":explain loss\r");  // 13
  CHECK(r.expect("fn loss(m: Lin, batch: [b] Pt) -> f32  # on the workers"));
  CHECK(r.expect("Devices: cpu[0 1 2] (3 devices), data parallel"));
  // cross_entropy's mean over the batch all-reduces its sum and count:
  // 2 f32 values, 8 bytes. m's copy is w, 4·3 f32 = 48 bytes.
  CHECK(r.expect(
      "fn loss (<repl>:10) runs on the workers and sends 8 bytes per call."));
  CHECK(r.expect("m: Lin \xe2\x80\x94 a copy on every device: 48 bytes"));
  CHECK(r.expect("<repl>:11: return cross_entropy(batch.x @ m.w, batch.y)"));
  CHECK(r.expect("Sent between the 3 devices on this line, per call:"));
  CHECK(r.expect("2 \xc3\x97 f32 = 8 bytes"));
  CHECK(r.expect("In all: 8 bytes."));
  quit(r);
}
