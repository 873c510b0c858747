// Every builtin's CPU forward (OpDef::forward, run through the fake
// ForwardCtx of ops/tests/fake_forward_ctx.h) diff-tested against the
// executable specification (ref/ref_ops.h): one table row per case, run
// twice, with the float inputs in f64 and in f32. A coverage test makes a
// builtin with a forward but no row fail. The gradients are checked in
// ref/tests/ref_grad_rows_test.cpp.
//
// Tolerances (forward): an element passes when
//   |got - want| <= rtol * max(|want|, 1),
// i.e. relative for values above 1 and absolute below (inputs are O(1), so
// a value near 0 that results from cancellation is held to the inputs'
// scale, not its own). rtol depends on the result's dtype:
// - f64 results: 1e-12 for every op. The forward computes in f64 and the
//   reference in f64 by another formula; both round about 1e-16 per
//   operation, so 1e-12 leaves room for ~1e4 accumulated roundings.
// - f32 results, against the double reference rounded to f32: f32 rounds
//   by 2^-24 ~ 6e-8 relative per operation, so n accumulated adds err by
//   at most ~n * 6e-8 and typically ~sqrt(n) * 6e-8. kElem = 1e-5 for
//   elementwise ops and reductions over up to a few hundred values;
//   kBig = 1e-4 for reductions over thousands of values and for
//   transcendental composites (gelu, softplus, log_softmax, norms, losses:
//   several f32 transcendental calls, each within a few ulp, and
//   cancellations such as 1 + erf(x) for x << 0).
// - ints and bools: exact, and the dtypes must agree.

#include <catch2/catch.hpp>
#include <set>
#include <string>
#include <vector>

#include "ref/ref_collectives.h"
#include "ref/tests/ref_table.h"

using namespace ref_table;

namespace {

// Every family's rows (ref/tests/ref_rows_*_test.cpp), in one table.
std::vector<Row> all_rows() {
  std::vector<Row> rows;
  unary_rows(rows);
  binary_rows(rows);
  matmul_rows(rows);
  reduction_rows(rows);
  along_rows(rows);
  shape_rows(rows);
  nn_rows(rows);
  losses_rows(rows);
  return rows;
}

}  // namespace

TEST_CASE("ref: every CPU forward matches the reference, f64 and f32",
          "[ref]") {
  for (const Row& r : all_rows()) {
    for (DType dt : {DType::F64, DType::F32}) {
      INFO(r.label << " (" << ss::types::dtype_name(dt) << " inputs)");
      try {
        compare(r, dt);
      } catch (const std::exception& e) {
        FAIL_CHECK("threw: " << e.what());
      }
    }
  }
}

TEST_CASE("ref: every builtin with a forward has a reference row", "[ref]") {
  std::set<std::string> covered;
  for (const Row& r : all_rows()) covered.insert(r.op);
  // The collectives run only inside an instance of an spmd fn, through its
  // mesh: their forwards are the reference collectives of
  // ref/ref_collectives.h (checked by hand in ref_collectives_test.cpp),
  // run by the simulated mesh and checked whole-program against the
  // tutorial's values in conformance/spmd/.
  for (const char* c : ss::ref::kCollectiveBuiltins) covered.insert(c);
  int with_forward = 0;
  for (const OpDef* d : all_ops()) {
    if (!d->forward) continue;
    ++with_forward;
    INFO(d->name
         << " has a forward but no row in ref/tests/ref_rows_*_test.cpp");
    CHECK(covered.count(d->name) == 1);
  }
  CHECK(with_forward > 80);
}
