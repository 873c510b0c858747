// bf16 and f16 in the collectives data parallelism uses (Note
// [Half-precision reductions] in dist/comm/communicator.cpp), on thread
// ranks over InprocComm and over Gloo: a reduction sums in f32 and rounds
// once, every rank gets the same bits, and the data-moving collectives copy
// half values as they are. Bool still cannot be reduced.
#include <catch2/catch.hpp>
#include <cmath>

#include "dist/tests/comm_test_util.h"

namespace {

// Hand-computed: with 3 ranks holding 1, 2^-8 and 2^-8, the f32 sum is
// 1 + 2^-7, which bf16 (8 significant bits) holds exactly. Rounding after
// each addition would give 1: 1 + 2^-8 is a tie that rounds to even (1),
// and so is the next addition. f16 (11 bits) holds 1 + 2^-7 either way,
// so for it the values are scaled to sit at the same tie: 1, 2^-11, 2^-11
// sum to 1 + 2^-10, one f16 ulp above 1.
double part(int rank, DType dt) {
  double tiny = dt == DType::BF16 ? std::ldexp(1.0, -8) : std::ldexp(1.0, -11);
  return rank == 0 ? 1.0 : tiny;
}

// The sum rounded once: with 2 ranks 1 + tiny is itself the tie, which
// rounds to even (1); with 3 ranks 1 + 2·tiny is exact.
double want_sum(int n, DType dt) {
  return n == 3 ? 1.0 + 2 * part(1, dt) : 1.0;
}

void half_suite(Communicator& c) {
  const int r = c.rank(), n = c.size();
  for (DType dt : {DType::BF16, DType::F16}) {
    // all-reduce: the tie case, and a max/min that widening keeps exact.
    Tensor t = Tensor::from_doubles({2}, {part(r, dt), -0.5 * r}, dt);
    c.all_reduce(t, ReduceOp::Sum, opt());
    EXPECT(t.dtype() == dt);
    EXPECT_VALUES(t,
                  (std::vector<double>{want_sum(n, dt), -0.25 * n * (n - 1)}));
    Tensor m = Tensor::from_doubles({1}, {1.5 + r}, dt);
    c.all_reduce(m, ReduceOp::Max, opt());
    EXPECT_VALUES(m, (std::vector<double>{1.5 + (n - 1)}));

    // reduce-scatter: each rank's block of the same sums.
    // Scaling by a power of two keeps the tie where it was.
    std::vector<double> in;
    for (int k = 0; k < n; ++k) in.push_back(part(r, dt) * (1 << k));
    Tensor out;
    c.reduce_scatter(
        Tensor::from_doubles({n}, in, dt), out, ReduceOp::Sum, opt());
    EXPECT(out.dtype() == dt);
    EXPECT_VALUES(out, (std::vector<double>{want_sum(n, dt) * (1 << r)}));

    // all-gather and all-gather-v move half values unchanged.
    Tensor g;
    c.all_gather(Tensor::from_doubles({1}, {0.125 * (r + 1)}, dt), g, opt());
    std::vector<double> want_g;
    for (int k = 0; k < n; ++k) want_g.push_back(0.125 * (k + 1));
    EXPECT_VALUES(g, want_g);
    std::vector<int64_t> rows;
    for (int k = 0; k < n; ++k) rows.push_back(k % 2);
    std::vector<double> mine(rows[r], 3.0 + r);
    Tensor gv;
    c.all_gather_v(Tensor::from_doubles({rows[r]}, mine, dt), gv, rows, opt());
    std::vector<double> want_v;
    for (int k = 0; k < n; ++k)
      if (rows[k]) want_v.push_back(3.0 + k);
    EXPECT_VALUES(gv, want_v);
  }
  // The payload log counts the half dtype's bytes: what was handed over.
  bool logged = false;
  for (const auto& e : c.log())
    if (e.op == CollectiveOp::AllReduce && e.dtype == DType::BF16)
      logged = logged || e.bytes == 4;
  EXPECT(logged);
}

}  // namespace

TEST_CASE("bf16 and f16 collectives: summed in f32, rounded once",
          "[dist][half]") {
  for (int n = 1; n <= 3; ++n) {
    INFO("ranks " << n);
    require_ok(run_inproc(n, half_suite));
    require_ok(run_gloo(n, half_suite));
  }
}

TEST_CASE("bool cannot be all-reduced, but can be gathered", "[dist][half]") {
  auto hub = std::make_shared<InprocHub>(1);
  InprocComm c(hub, 0);
  Tensor b = Tensor::zeros({2}, DType::Bool);
  CHECK_THROWS_AS(c.all_reduce(b, ReduceOp::Sum, opt()), CollectiveError);
  Tensor out;
  c.all_gather(b, out, opt());
  CHECK(out.dtype() == DType::Bool);
  CHECK(out.numel() == 2);
}
