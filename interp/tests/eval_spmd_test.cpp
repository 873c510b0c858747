// Spmd fns run simulated (spmd.md, Mesh: `devices cpu`; interp/eval/spmd/):
// each instance on its block, in lockstep at collectives, the result joined
// by the return type. Values are hand-computed (small integers, exact in
// f32: compared exactly); the whole-program cases with the tutorial's values
// are conformance/spmd/.
#include <catch2/catch.hpp>

#include "interp/tests/data_test_util.h"
#include "interp/tests/eval_helpers.h"
#include "interp/tests/process_util.h"

using ss::testing::run_program;

namespace {

// Issue 10 item 4: run once on the whole array, `a - mean(a)` gave the
// whole array's answer; per block, each pair [2k 2k+1] loses its own mean
// 2k + 0.5.
const char* kBlockMean = R"(devices cpu
mesh x=4

dim K = 8

spmd fn centre(a: [K/x]) -> [K/x]:
    return a - mean(a)

fn main():
    let a = to(arange(K), f32)
    print(centre(a))
)";

// Instance x=1 takes element 5 of its block of 2 (out of range, at 6:13)
// while instance x=0 waits at psum for it.
const char* kBadInstance = R"(devices cpu
mesh x=2

spmd fn bad(a: [n/x]) -> [n/x]:
    let k = axis_index(x) * 5
    let v = take(a, k, over=n)
    return psum(a, x) + v

fn main():
    print(bad(tensor([1.0, 2.0, 3.0, 4.0])))
)";

}  // namespace

TEST_CASE("spmd: each instance computes on its own block", "[eval][spmd]") {
  auto r = run_program(kBlockMean);
  INFO(r->error);
  REQUIRE(r->error.empty());
  CHECK(r->out.str() == "[8] f32\n[-0.5 0.5 -0.5 0.5 -0.5 0.5 -0.5 0.5]\n");
}

TEST_CASE("spmd: prints are prefixed with the mesh index, in instance order",
          "[eval][spmd]") {
  // Note [Prints of instances]: every instance's first print, then every
  // instance's second. Instance (x, y) of mesh x=2 y=2 holds a[2x + y].
  auto r = run_program(R"(devices cpu
mesh x=2 y=2

spmd fn show(a: [n/(x y)]) -> [n/(x y)]:
    print("before", a)
    let s = psum(a, (x, y))
    print("after", s)
    return a

fn main():
    let a = tensor([1.0, 2.0, 3.0, 4.0])
    let b = show(a)
)");
  INFO(r->error);
  REQUIRE(r->error.empty());
  CHECK(r->out.str() ==
        "[x=0 y=0] before [1] f32 (n/(x y)=1)\n[x=0 y=0] [1]\n"
        "[x=0 y=1] before [1] f32 (n/(x y)=1)\n[x=0 y=1] [2]\n"
        "[x=1 y=0] before [1] f32 (n/(x y)=1)\n[x=1 y=0] [3]\n"
        "[x=1 y=1] before [1] f32 (n/(x y)=1)\n[x=1 y=1] [4]\n"
        "[x=0 y=0] after [1] f32 (n/(x y)=1)\n[x=0 y=0] [10]\n"
        "[x=0 y=1] after [1] f32 (n/(x y)=1)\n[x=0 y=1] [10]\n"
        "[x=1 y=0] after [1] f32 (n/(x y)=1)\n[x=1 y=0] [10]\n"
        "[x=1 y=1] after [1] f32 (n/(x y)=1)\n[x=1 y=1] [10]\n");
}

TEST_CASE("spmd: a model spec splits the named fields and replicates the rest",
          "[eval][spmd]") {
  // Net{w/s}: w's rows 2s..2s+1 on instance s, b whole on both. Each
  // instance returns sum(w block) + sum(b) = (its rows' sum) + 10, psummed:
  // sum(w) + 2·10 = 28 + 20.
  auto r = run_program(R"(devices cpu
mesh s=2

model Net:
    w: [4 2] = zeros()
    b: [4] = zeros()

spmd fn total(m: Net{w/s}) -> []:
    return psum(sum(m.w) + sum(m.b), s)

spmd fn rows(m: Net/s) -> [r/s]:
    return m.b * 1.0

fn main():
    let m = Net.init(seed=0)
    m.w = to(reshape(arange(8), [4, 2]), f32)
    m.b = tensor([1.0, 2.0, 3.0, 4.0])
    print(total(m))
    print(rows(m))
)");
  INFO(r->error);
  REQUIRE(r->error.empty());
  CHECK(r->out.str() == "f32 48\n[4] f32 (r=4)\n[1 2 3 4]\n");
}

TEST_CASE("spmd: an error in one instance is the call's, with its mesh index",
          "[eval][spmd]") {
  // Instance 1 takes element 5 of its block of 2 and fails; instance 0,
  // waiting at psum for it, stops instead of hanging, and the call reports
  // instance 1's error.
  auto r = run_program(kBadInstance);
  INFO(r->error);
  CHECK(r->error_kind == "ValueError");
  CHECK(r->error.find("test.ss:6:13") != std::string::npos);
  CHECK(r->error.find("in the instance at x=1 of 2") != std::string::npos);
  CHECK(r->out.str().empty());
}

TEST_CASE(
    "spmd: ss run of an spmd call on cpu[N] runs an instance on each worker",
    "[eval][spmd]") {
  // Each block of two is centred on its own mean: -0.5, 0.5 (by hand), on
  // the workers of cpu[4] as on `devices cpu`.
  std::string dir = data_test::tmp("spmd_call");
  data_test::write_file(dir + "/p.ss", kBlockMean);
  for (const char* devices : {"", " --devices 'cpu[0 1 2 3]'"}) {
    auto p =
        ss::testing::run_ss_process(std::string("run p.ss") + devices, dir);
    INFO(devices << ": " << p.err);
    CHECK(p.rc == 0);
    CHECK(p.out == "[8] f32\n[-0.5 0.5 -0.5 0.5 -0.5 0.5 -0.5 0.5]\n");
  }
}

TEST_CASE(
    "spmd: an error in an instance on a worker names its mesh index, its "
    "worker and its .ss location",
    "[eval][spmd]") {
  // Instance x=1 takes element 5 of its block of 2 (out of range) while
  // instance x=0 waits at psum for it: the run stops with x=1's error, a
  // runtime error (exit 2, cli.md), not a hang or the other's failure.
  std::string dir = data_test::tmp("spmd_worker_error");
  data_test::write_file(dir + "/bad.ss", kBadInstance);
  auto p = ss::testing::run_ss_process("run bad.ss --devices 'cpu[0 1]'", dir);
  INFO(p.err);
  CHECK(p.rc == 2);
  CHECK(p.out.empty());
  CHECK(p.err.find("bad.ss:6:13: ValueError: take: index 5 is out of range") !=
        std::string::npos);
  CHECK(p.err.find("in the instance at x=1 of 2") != std::string::npos);
  CHECK(p.err.find("raised on worker 1 of 2") != std::string::npos);
}

TEST_CASE(
    "spmd: what the instances printed before an error shows, merged, on "
    "workers as simulated",
    "[eval][spmd]") {
  // Both instances print their block and k, then x=1 takes element 5 of
  // its block of 2 while x=0 waits at psum: main's line, then every
  // instance's prints in instance order (by hand: blocks [1 2] and [3 4],
  // k = 0 and 5), then x=1's error. On cpu[2] x=0's worker fails in the
  // psum x=1 left, and its prints come back with that failure.
  std::string dir = data_test::tmp("spmd_prints_before_error");
  data_test::write_file(dir + "/bad.ss", R"(devices cpu
mesh x=2

spmd fn bad(a: [n/x]) -> [n/x]:
    print(a)
    let k = axis_index(x) * 5
    print(k)
    let v = take(a, k, over=n)
    return psum(a, x) + v

fn main():
    print("before")
    print(bad(tensor([1.0, 2.0, 3.0, 4.0])))
)");
  for (const char* devices : {"", " --devices 'cpu[0 1]'"}) {
    auto p =
        ss::testing::run_ss_process(std::string("run bad.ss") + devices, dir);
    INFO(devices << ": " << p.err);
    CHECK(p.rc == 2);
    CHECK(p.out ==
          "before\n"
          "[x=0] [2] f32 (n/x=2)\n"
          "[x=0] [1 2]\n"
          "[x=1] [2] f32 (n/x=2)\n"
          "[x=1] [3 4]\n"
          "[x=0] i32 0\n"
          "[x=1] i32 5\n");
    CHECK(
        p.err.find("bad.ss:8:13: ValueError: take: index 5 is out of range") !=
        std::string::npos);
    CHECK(p.err.find("in the instance at x=1 of 2") != std::string::npos);
  }
}
