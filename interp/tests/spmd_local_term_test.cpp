// value_and_grad inside an spmd fn of a loss invariant over mesh axes with
// a term that reaches a leaf through no collective over them (Note [Local
// terms of an invariant loss] in ops/autodiff/tape.cpp): a ValueError at
// the call naming the axes and the rewrite, through `ss run` on `devices
// cpu` and on workers alike; a loss whose every path runs through the
// collectives is still differentiated. The gradients themselves are
// checked by hand in conformance/spmd/grad_local_term.ss.
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "interp/tests/data_test_util.h"
#include "interp/tests/process_util.h"

namespace {

// On a 2x2 mesh the term u·w (u varies over y only) is summed over y but
// not over x, while the loss is invariant over both: only x is uncovered.
// grad_ok's loss runs every path through psum over x and then y: by hand,
// L = sum over v's rows of v·w, dL/dv = w on each row of each block.
const char* kTwoAxes = R"(devices cpu
mesh x=2 y=2

spmd fn loss(w: [k], v: [n/(x y) k], u: [m/y k]) -> f32:
    return psum(psum(sum(v * w), x) + sum(u * w), y)

spmd fn grads(w: [k], v: [n/(x y) k], u: [m/y k]) -> [k]:
    return grad(loss, w, v, u)

spmd fn loss_ok(v: [n/(x y) k], w: [k]) -> f32:
    return psum(psum(sum(v * w), x), y)

spmd fn grad_ok(v: [n/(x y) k], w: [k]) -> [n/(x y) k]:
    return grad(loss_ok, v, w)

fn main():
    let v = ones([4, 2])
    let u = ones([2, 2])
    let w = tensor([0.5, -1.0])
    print(grad_ok(v, w))
    print(grads(w, v, u))
)";

// `ss run [file]` in [dir] on `devices cpu` and on [workers]: a runtime
// error (exit 2, cli.md) whose text holds each of [says], after [out].
void check_refused(const std::string& file,
                   const std::string& dir,
                   const char* workers,
                   const std::string& out,
                   const std::vector<std::string>& says) {
  std::filesystem::create_directories(dir);
  for (std::string devices : {std::string(), std::string(workers)}) {
    if (!devices.empty()) devices = " --devices '" + devices + "'";
    auto p = ss::testing::run_ss_process("run '" + file + "'" + devices, dir);
    INFO(devices << ": " << p.err);
    CHECK(p.rc == 2);
    CHECK(p.out == out);
    for (const std::string& s : says) CHECK(p.err.find(s) != std::string::npos);
  }
}

}  // namespace

TEST_CASE(
    "spmd: a term of an invariant loss outside its psum is a ValueError at "
    "value_and_grad, simulated and on workers",
    "[eval][spmd]") {
  // sum(w²) of the replicated w is added outside the psum over x.
  check_refused(
      std::string(SS_SOURCE_DIR) + "/conformance/spmd/grad_local_term_error.ss",
      data_test::tmp("spmd_local_term"),
      "cpu[0 1]",
      "",
      {"grad_local_term_error.ss:20:16: ValueError: value_and_grad: "
       "the loss is the same on every instance along mesh axis x",
       "psum(local + term / axis_size(x), x)"});
}

TEST_CASE(
    "spmd: on a 2-D mesh the error names the axis a term skips, after a loss "
    "summed over both is differentiated",
    "[eval][spmd]") {
  std::string dir = data_test::tmp("spmd_local_term_2d");
  data_test::write_file(dir + "/p.ss", kTwoAxes);
  check_refused("p.ss",
                dir,
                "cpu[0 1 2 3]",
                "[4 2] f32\n[[0.5 -1]\n [0.5 -1]\n [0.5 -1]\n [0.5 -1]]\n",
                {"p.ss:8:12: ValueError: grad: the loss is the same on every "
                 "instance along mesh axes x, y, but a term of it reaches the "
                 "differentiated value through no psum, pmean, pmax or pmin "
                 "over mesh axis x,"});
}
