// Host ints are exact 64-bit integers (Note [Host ints are exact] in
// interp/eval/eval_expr.cpp): issue 16 item 3 found `(-2^63) // -1`
// killing the process (SIGFPE) and 2^53 + 1 rounding to 2^53. Expected
// values are Python's (the language's model for host numbers), by hand.
#include <catch2/catch.hpp>

#include "interp/tests/eval_helpers.h"

using ss::testing::run_program;

namespace {

std::string run_main_body(const std::string& body) {
  auto r = run_program("fn main():\n" + body);
  return r->error.empty() ? r->out.str() : r->error_kind + ": " + r->error;
}

}  // namespace

TEST_CASE("eval: host int arithmetic is exact past 2^53", "[eval]") {
  CHECK(run_main_body("    print(9007199254740993 - 9007199254740992)\n") ==
        "1\n");
  CHECK(run_main_body("    print(9007199254740993 * 1)\n") ==
        "9007199254740993\n");
  CHECK(run_main_body("    print(3 ** 39, 2 ** 62, (-2) ** 63)\n") ==
        "4052555153018976267 4611686018427387904 -9223372036854775808\n");
  CHECK(run_main_body("    print(7 // -2, -7 // 2, -7 % 3, 7 % -3)\n") ==
        "-4 -4 2 -2\n");
  CHECK(run_main_body("    print(9007199254740993 == 9007199254740992)\n") ==
        "false\n");
  CHECK(run_main_body("    print(2 ** -1, 7 / 2)\n") == "0.5 3.5\n");
  CHECK(run_main_body("    print((-9223372036854775807 - 1) % -1)\n") == "0\n");
}

TEST_CASE("eval: host int overflow is a ValueError at the line", "[eval]") {
  for (const char* e : {"(-9223372036854775807 - 1) // -1",
                        "9223372036854775807 + 1",
                        "-9223372036854775807 - 2",
                        "4294967296 * 4294967296",
                        "2 ** 63",
                        "-(-9223372036854775807 - 1)"}) {
    INFO(e);
    std::string out = run_main_body(std::string("    print(") + e + ")\n");
    CHECK_THAT(out,
               Catch::StartsWith("ValueError: test.ss:2:11: ValueError: "
                                 "integer overflow") &&
                   Catch::Contains("does not fit in 64 bits"));
  }
  CHECK_THAT(run_main_body("    print(1 // 0)\n"),
             Catch::Contains("ValueError: division by zero"));
}
