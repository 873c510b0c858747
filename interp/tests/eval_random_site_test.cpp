// rand/randn draw from (seed, call site), the site being the fn's name and
// the call's position among that fn's draws (Note [A draw's site] in
// interp/check/calls.cpp): the same program draws the same however its
// path is written, in a renamed copy, and after edits that change nothing
// (comments, blank lines, other declarations above). The values are
// checked against ref/'s Philox and Box-Muller under the named key.
#include <catch2/catch.hpp>

#include "interp/tests/data_test_util.h"
#include "interp/tests/process_util.h"
#include "ops/core/philox.h"
#include "ref/ref_ops.h"

namespace {

// main prints sum(rand([N], seed=3) * arange(N)) and randn's first value,
// and init_w's two draws; a helper's draws are its own.
const char* kProgram =
    "dim N = 4\n\n"
    "fn init_w() -> [N]:\n"
    "    return randn([N], seed=5) + randn([N], seed=5)\n\n"
    "fn main():\n"
    "    print(float(sum(rand([N], seed=3) * to(arange(N), f32))))\n"
    "    print(float(sum(init_w())))\n";

// The same program after edits that change nothing: a comment and blank
// lines above every draw, an unrelated fn (with a draw of its own) first.
const char* kEdited =
    "# A comment that moves every line.\n\n"
    "dim N = 4\n\n"
    "fn unrelated() -> [N]:\n"
    "    return randn([N], seed=5)\n\n"
    "fn init_w() -> [N]:\n"
    "    # the weights\n"
    "    return randn([N], seed=5) + randn([N], seed=5)\n\n\n"
    "fn main():\n"
    "    # one line more\n"
    "    print(float(sum(rand([N], seed=3) * to(arange(N), f32))))\n"
    "    print(float(sum(init_w())))\n";

}  // namespace

TEST_CASE("eval: rand draws do not depend on how the file's path is written",
          "[eval]") {
  std::string dir = data_test::tmp("random_site");
  data_test::write_file(dir + "/sub/r.ss", kProgram);
  auto rel = ss::testing::run_ss_process("run sub/r.ss", dir);
  auto dot = ss::testing::run_ss_process("run ./sub/../sub/r.ss", dir);
  auto abs = ss::testing::run_ss_process("run " + dir + "/sub/r.ss");
  auto here = ss::testing::run_ss_process("run r.ss", dir + "/sub");
  REQUIRE(rel.rc == 0);
  CHECK(!rel.out.empty());
  CHECK(dot.out == rel.out);
  CHECK(abs.out == rel.out);
  CHECK(here.out == rel.out);
}

TEST_CASE(
    "eval: rand draws survive a renamed copy and edits that change "
    "nothing",
    "[eval]") {
  std::string dir = data_test::tmp("random_edits");
  data_test::write_file(dir + "/a.ss", kProgram);
  data_test::write_file(dir + "/renamed_copy.ss", kProgram);
  data_test::write_file(dir + "/edited.ss", kEdited);
  auto a = ss::testing::run_ss_process("run a.ss", dir);
  auto copy = ss::testing::run_ss_process("run renamed_copy.ss", dir);
  auto edited = ss::testing::run_ss_process("run edited.ss", dir);
  REQUIRE(a.rc == 0);
  CHECK(copy.out == a.out);
  CHECK(edited.out == a.out);
  // And on three devices (the draws are the same on any device count).
  data_test::write_file(dir + "/three.ss",
                        std::string("devices cpu[0 1 2]\n\n") + kEdited);
  auto three = ss::testing::run_ss_process("run three.ss", dir);
  CHECK(three.out == a.out);

  // The oracle: ref/'s draws under the keys the rule names, summed in
  // double. main's only rand is "main#0"; init_w's two randn are
  // "init_w#0" and "init_w#1", so they differ though their seed is one.
  using ss::ops::philox::key_for;
  double want_rand = 0;
  std::vector<double> u =
      ss::ref::rand({4}, ss::types::DType::F32, key_for(3, "main#0"), 0)
          .to_doubles();
  for (int i = 0; i < 4; ++i) want_rand += u[i] * i;
  double want_w = 0;
  for (const char* site : {"init_w#0", "init_w#1"})
    for (double v :
         ss::ref::randn({4}, ss::types::DType::F32, key_for(5, site), 0)
             .to_doubles())
      want_w += v;
  std::vector<double> got = ss::testing::decimals(a.out);
  REQUIRE(got.size() == 2);
  // f32 draws and sums: ~1e-6 relative on values of size ~1.
  CHECK(got[0] == Approx(want_rand).margin(1e-5));
  CHECK(got[1] == Approx(want_w).margin(1e-5));
}
