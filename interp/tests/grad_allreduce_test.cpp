// The gradient all-reduce's buckets (interp/eval/grad_allreduce.h): full
// buckets go to the communication thread as gradients arrive, the rest at
// finish(); every rank ends with the sums, in the gradients' order.
#include "interp/eval/grad_allreduce.h"

#include <catch2/catch.hpp>
#include <thread>

#include "dist/comm/inproc_comm.h"
#include "interp/eval/devices.h"

using namespace ss;

TEST_CASE("gradient buckets: full ones overlap, all are summed", "[dp]") {
  constexpr int kWorld = 3;
  auto hub = std::make_shared<dist::InprocHub>(kWorld);
  std::vector<std::vector<ops::Tensor>> out(kWorld);
  std::vector<int> overlapped(kWorld);
  std::vector<std::thread> ranks;
  for (int r = 0; r < kWorld; ++r)
    ranks.emplace_back([&, r] {
      dist::InprocComm comm(hub, r);
      eval::DeviceContext d;
      d.rank = r;
      d.world = kWorld;
      d.comm = &comm;
      d.grad_bucket_bytes = 32;  // 8 f32
      eval::GradAllReduce sum(d, 4);
      auto t = [&](std::vector<double> v, types::DType dt) {
        for (double& x : v) x *= r + 1;
        return ops::Tensor::from_doubles({int64_t(v.size())}, v, dt);
      };
      // Handed over in the pass's order: 3, 1, 0, 2.
      sum.ready(3, t({1, 2, 3, 4, 5, 6, 7, 8, 9}, types::DType::F32));  // full
      sum.ready(1, t({1, 1}, types::DType::F64));
      sum.ready(0, t({2, 2, 2, 2, 2, 2, 2, 2}, types::DType::F32));  // full
      sum.ready(2, t({0.5}, types::DType::F32));
      out[r] = sum.finish();
      overlapped[r] = sum.overlapped();
    });
  for (auto& t : ranks) t.join();
  for (int r = 0; r < kWorld; ++r) {
    INFO("rank " << r);
    REQUIRE(out[r].size() == 4);
    CHECK(overlapped[r] == 2);  // the two full f32 buckets
    // Each rank sent (r + 1) x v: the sum is 6 v.
    CHECK(out[r][0].to_doubles() ==
          std::vector<double>{12, 12, 12, 12, 12, 12, 12, 12});
    CHECK(out[r][1].to_doubles() == std::vector<double>{6, 6});
    CHECK(out[r][1].dtype() == types::DType::F64);
    CHECK(out[r][2].to_doubles() == std::vector<double>{3});
    CHECK(out[r][3].to_doubles() ==
          std::vector<double>{6, 12, 18, 24, 30, 36, 42, 48, 54});
  }
}

TEST_CASE(
    "gradient buckets: one that fills with the last gradient goes at "
    "finish(), from the calling thread",
    "[dp]") {
  constexpr int kWorld = 2;
  auto hub = std::make_shared<dist::InprocHub>(kWorld);
  std::vector<std::vector<ops::Tensor>> out(kWorld);
  std::vector<int> overlapped(kWorld);
  std::vector<std::thread> ranks;
  for (int r = 0; r < kWorld; ++r)
    ranks.emplace_back([&, r] {
      dist::InprocComm comm(hub, r);
      eval::DeviceContext d;
      d.rank = r;
      d.world = kWorld;
      d.comm = &comm;
      d.grad_bucket_bytes = 32;  // 8 f32
      eval::GradAllReduce sum(d, 3);
      auto t = [&](double v, int64_t n) {
        return ops::Tensor::full({n}, v * (r + 1), types::DType::F32);
      };
      sum.ready(2, t(1, 8));  // full: overlaps
      sum.ready(0, t(2, 3));
      sum.ready(1, t(3, 9));  // the last: fills the bucket, nothing to overlap
      out[r] = sum.finish();
      overlapped[r] = sum.overlapped();
    });
  for (auto& t : ranks) t.join();
  for (int r = 0; r < kWorld; ++r) {
    CHECK(overlapped[r] == 1);
    CHECK(out[r][0].to_doubles() == std::vector<double>(3, 6));
    CHECK(out[r][1].to_doubles() == std::vector<double>(9, 9));
    CHECK(out[r][2].to_doubles() == std::vector<double>(8, 3));
  }
}
