// The gradient all-reduce's buckets (interp/devices/lower/grad_allreduce.h):
// full buckets go to the communication thread as gradients arrive, the rest at
// finish(); every rank ends with the sums, in the gradients' order.
#include "interp/devices/lower/grad_allreduce.h"

#include <catch2/catch.hpp>
#include <functional>
#include <thread>

#include "dist/comm/inproc_comm.h"
#include "interp/devices/lower/lowering.h"

using namespace ss;

namespace {

// Runs [body] on [world] thread ranks over one InprocHub, each with a
// GradAllReduce of [n_grads] gradients and 32-byte (8 f32) buckets;
// returns each rank's summed gradients and its count of overlapped buckets.
struct RankResult {
  std::vector<ops::Tensor> grads;
  int overlapped = 0;
};
std::vector<RankResult> run_buckets(
    int world,
    size_t n_grads,
    const std::function<void(int rank, devices::lower::GradAllReduce&)>& body) {
  auto hub = std::make_shared<dist::InprocHub>(world);
  std::vector<RankResult> out(world);
  std::vector<std::thread> ranks;
  for (int r = 0; r < world; ++r)
    ranks.emplace_back([&, r] {
      dist::InprocComm comm(hub, r);
      devices::lower::DeviceContext d;
      d.rank = r;
      d.world = world;
      d.comm = &comm;
      d.grad_bucket_bytes = 32;  // 8 f32
      devices::lower::GradAllReduce sum(d, n_grads);
      body(r, sum);
      out[r].grads = sum.finish();
      out[r].overlapped = sum.overlapped();
    });
  for (auto& t : ranks) t.join();
  return out;
}

}  // namespace

TEST_CASE("gradient buckets: full ones overlap, all are summed", "[dp]") {
  constexpr int kWorld = 3;
  auto out =
      run_buckets(kWorld, 4, [](int r, devices::lower::GradAllReduce& sum) {
        auto t = [&](std::vector<double> v, types::DType dt) {
          for (double& x : v) x *= r + 1;
          return ops::Tensor::from_doubles({int64_t(v.size())}, v, dt);
        };
        // Handed over in the pass's order: 3, 1, 0, 2.
        sum.ready(3,
                  t({1, 2, 3, 4, 5, 6, 7, 8, 9}, types::DType::F32));  // full
        sum.ready(1, t({1, 1}, types::DType::F64));
        sum.ready(0, t({2, 2, 2, 2, 2, 2, 2, 2}, types::DType::F32));  // full
        sum.ready(2, t({0.5}, types::DType::F32));
      });
  for (int r = 0; r < kWorld; ++r) {
    INFO("rank " << r);
    const auto& g = out[r].grads;
    REQUIRE(g.size() == 4);
    CHECK(out[r].overlapped == 2);  // the two full f32 buckets
    // Each rank sent (r + 1) x v: the sum is 6 v.
    CHECK(g[0].to_doubles() ==
          std::vector<double>{12, 12, 12, 12, 12, 12, 12, 12});
    CHECK(g[1].to_doubles() == std::vector<double>{6, 6});
    CHECK(g[1].dtype() == types::DType::F64);
    CHECK(g[2].to_doubles() == std::vector<double>{3});
    CHECK(g[3].to_doubles() ==
          std::vector<double>{6, 12, 18, 24, 30, 36, 42, 48, 54});
  }
}

TEST_CASE(
    "gradient buckets: one that fills with the last gradient goes at "
    "finish(), from the calling thread",
    "[dp]") {
  auto out = run_buckets(2, 3, [](int r, devices::lower::GradAllReduce& sum) {
    auto t = [&](double v, int64_t n) {
      return ops::Tensor::full({n}, v * (r + 1), types::DType::F32);
    };
    sum.ready(2, t(1, 8));  // full: overlaps
    sum.ready(0, t(2, 3));
    sum.ready(1, t(3, 9));  // the last: fills the bucket, nothing to overlap
  });
  for (int r = 0; r < 2; ++r) {
    CHECK(out[r].overlapped == 1);
    CHECK(out[r].grads[0].to_doubles() == std::vector<double>(3, 6));
    CHECK(out[r].grads[1].to_doubles() == std::vector<double>(9, 9));
    CHECK(out[r].grads[2].to_doubles() == std::vector<double>(8, 3));
  }
}
