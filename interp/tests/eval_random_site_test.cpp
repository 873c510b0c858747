// rand/randn draw from (seed, call site); the site names the file by its
// name, so the same program draws the same however its path is written
// (language.md, Randomness). The runs are compared with each other: the
// property is path independence, whatever the draws are.
#include <catch2/catch.hpp>

#include "interp/tests/data_test_util.h"
#include "interp/tests/process_util.h"

TEST_CASE("eval: rand draws do not depend on how the file's path is written",
          "[eval]") {
  std::string dir = data_test::tmp("random_site");
  data_test::write_file(dir + "/sub/r.ss",
                        "dim N = 4\n\nfn main():\n"
                        "    print(float(sum(rand([N], seed=3) * "
                        "arange(N))))\n");
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
