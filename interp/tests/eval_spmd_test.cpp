// Until manual SPMD runs (spmd.md), calling an spmd fn is a clear error at
// the call (Note [No spmd fn runs yet] in interp/eval/interpreter.cpp):
// issue 10 item 4 found `a - mean(a)` returning the whole array's answer
// instead of each block's.
#include <catch2/catch.hpp>

#include "interp/tests/data_test_util.h"
#include "interp/tests/eval_helpers.h"
#include "interp/tests/process_util.h"

using ss::testing::run_program;

namespace {

const char* kBlockMean = R"(devices cpu
mesh x=4

dim K = 8

spmd fn centre(a: [K/x]) -> [K/x]:
    return a - mean(a)

fn main():
    let a = to(arange(K), f32)
    print(centre(a))
)";

}  // namespace

TEST_CASE("eval: calling an spmd fn is an error at the call, not a value",
          "[eval]") {
  auto r = run_program(kBlockMean);
  INFO(r->error);
  CHECK(r->error_kind == "ValueError");
  CHECK(r->error.find("test.ss:11:11") != std::string::npos);
  CHECK(r->error.find("`centre` is an spmd fn") != std::string::npos);
  // Nothing was printed: no wrong value reached the user.
  CHECK(r->out.str().empty());
}

TEST_CASE("eval: ss run of a program calling an spmd fn exits with the error",
          "[eval]") {
  std::string dir = data_test::tmp("spmd_call");
  data_test::write_file(dir + "/p.ss", kBlockMean);
  auto p = ss::testing::run_ss_process("run p.ss", dir);
  INFO(p.err);
  CHECK(p.rc == 2);
  CHECK(p.out.empty());
  CHECK(p.err.find("p.ss:11:11") != std::string::npos);
  CHECK(p.err.find("ValueError") != std::string::npos);
}
