// The file sinks write what was logged, typed as logged (Note [JSON
// numbers] in interp/builtins/output.cpp): issue 10 item 8 found int
// tensors written as floats (`{"ids": [0.0, 1.0]}`), so a torch reader got
// float labels. Expected lines are written by hand from the values.
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "interp/tests/data_test_util.h"
#include "interp/tests/eval_helpers.h"

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("sinks: jsonl and csv keep ints, bools and float dtypes", "[eval]") {
  std::string jl = data_test::tmp("sinks/o.jsonl");
  std::string cs = data_test::tmp("sinks/o.csv");
  data_test::write_file(jl, "");
  auto r = ss::testing::run_program(R"(
fn main():
    let out = jsonl(")" + jl + R"(")
    let c = csv(")" + cs + R"(")
    let ids = arange(3)
    let x = to(arange(3), f32) / 10.0
    let d = to(arange(3), f64) / 10.0
    let l = logs(ids=ids, x=x, d=d, m=ids > 0, n=sum(ids), k=3, f=0.5,
                 third=to(1.0, f32) / 3.0, big=to(1.0, f64) / 3.0,
                 bad=log(to(0.0, f32)))
    out.write(l)
    c.write(logs(n=sum(ids), s=sum(x), on=sum(ids) > 1))
)");
  INFO(r->error);
  REQUIRE(r->error.empty());
  // f32 values in their own shortest form (0.1, 0.33333334); f64 in its
  // (0.1, 0.3333333333333333); ints exact; -inf as Python's json reads it.
  CHECK(slurp(jl) ==
        "{\"step\": 0, \"ids\": [0, 1, 2], \"x\": [0.0, 0.1, 0.2], "
        "\"d\": [0.0, 0.1, 0.2], \"m\": [false, true, true], \"n\": 3, "
        "\"k\": 3, \"f\": 0.5, \"third\": 0.33333334, "
        "\"big\": 0.3333333333333333, \"bad\": -Infinity}\n");
  CHECK(slurp(cs) == "step,n,s,on\n0,3,0.3,true\n");
}

TEST_CASE("sinks: tee writes each record to every sink, with one step",
          "[eval]") {
  std::string jl = data_test::tmp("sinks/tee.jsonl");
  std::string cs = data_test::tmp("sinks/tee.csv");
  data_test::write_file(jl, "");  // makes the folder
  auto r = ss::testing::run_program(R"(
fn main():
    let out = tee(stdout(), jsonl(")" +
                                    jl + R"("), csv(")" + cs + R"("))
    out.write(logs(loss=0.5, n=3))
    out.write(logs(loss=0.25, n=4), step=10)
)");
  INFO(r->error);
  REQUIRE(r->error.empty());
  CHECK(r->out.str() ==
        "step 0  loss 0.5000  n 3\nstep 10  loss 0.2500  n 4\n");
  CHECK(slurp(jl) ==
        "{\"step\": 0, \"loss\": 0.5, \"n\": 3}\n"
        "{\"step\": 10, \"loss\": 0.25, \"n\": 4}\n");
  CHECK(slurp(cs) == "step,loss,n\n0,0.5,3\n10,0.25,4\n");
}

TEST_CASE("sinks: stdout writes one line per write, a tensor's rows included",
          "[eval]") {
  // library.md: stdout() is "one aligned line per write". A tensor's print
  // form spans lines (its type, then numpy's rows); here it is joined by
  // single spaces, so each record stays one line for grep and tail.
  auto r = ss::testing::run_program(R"(
fn main():
    let out = stdout()
    out.write(logs(w=tensor([[1.0, 2.0], [3.0, 4.0]]), n=3))
    out.write(logs(v=arange(3)))
)");
  INFO(r->error);
  REQUIRE(r->error.empty());
  CHECK(r->out.str() ==
        "step 0  w [2 2] f32 [[1 2] [3 4]]  n 3\n"
        "step 1  v [3] i64 [0 1 2]\n");
}
