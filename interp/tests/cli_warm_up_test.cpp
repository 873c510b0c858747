// A run that ends before the CPU backend's warm-up does (Note [oneDNN's
// start-up off the first step] in ops/cpu/cpu_onednn.cpp) exits cleanly:
// ss's main waits for the warm-up's thread, so exit's destructors never
// free oneDNN's kernels under it. Before that wait, `print(1)` died of a
// segfault in about 1 run of 5; 20 runs all passing has a chance of about
// 0.8^20 = 1% of missing that. The warm-up's delay is 0 here
// (SHAPESCRIPT_WARM_UP_MS), so that a program this short ends during it;
// with the usual 20 ms, one ending first cancels it.
#include <catch2/catch.hpp>
#include <string>

#include "interp/tests/data_test_util.h"
#include "interp/tests/process_util.h"

TEST_CASE("cli: a run shorter than the backend's warm-up exits cleanly",
          "[cli]") {
  std::string dir = data_test::tmp("cli_warm_up");
  data_test::write_file(dir + "/p.ss", "fn main():\n    print(1)\n");
  int clean = 0;
  for (int i = 0; i < 20; ++i) {
    auto r = ss::testing::run_ss_process(
        "run --threads 1 p.ss", dir, "SHAPESCRIPT_WARM_UP_MS=0");
    INFO("run " << i << ": exit " << r.rc << ", stderr " << r.err);
    CHECK(r.rc == 0);
    CHECK(r.out == "1\n");
    clean += r.rc == 0;
  }
  CHECK(clean == 20);
}
