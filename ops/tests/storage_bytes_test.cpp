// The storages' byte counter and peak (ops/core/storage_bytes.h), the big
// blocks' cache (ops/core/big_blocks.h), and that the seed scales a
// leaf's gradient without a second copy of it (Note [Scaling a leaf's
// gradient in place] in ops/autodiff/tape.cpp). Oracles: the padded sizes
// and the products, computed by hand here.

#include "ops/core/storage_bytes.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "ops/api.h"
#include "ops/core/big_blocks.h"

namespace {

using namespace ss::ops;
using ss::types::DType;

TEST_CASE(
    "storage bytes: a tensor's bytes, padded to 64, are counted while "
    "it lives",
    "[storage_bytes]") {
  const int64_t before = storage_bytes().live;
  reset_storage_peak();
  {
    Tensor t = Tensor::empty({1000}, DType::F32);  // 4,000 bytes -> 4,032
    CHECK(storage_bytes().live == before + 4032);
    Tensor v = t.reshape({10, 100});  // a view: no new bytes
    CHECK(storage_bytes().live == before + 4032);
  }
  CHECK(storage_bytes().live == before);
  CHECK(storage_bytes().peak == before + 4032);
  reset_storage_peak();
  CHECK(storage_bytes().peak == before);
}

TEST_CASE(
    "big blocks: a freed big buffer goes to the next request of its "
    "size",
    "[storage_bytes]") {
  const int64_t n = int64_t{4} << 20;  // 16 MiB of f32: a big block
  static_assert((size_t{16} << 20) >= kBigBlockBytes);
  big_blocks_release();
  const void* first = nullptr;
  {
    Tensor t = Tensor::zeros({n}, DType::F32);
    first = t.raw();
    CHECK(big_blocks_cached() == 0);
  }
  CHECK(big_blocks_cached() == size_t{16} << 20);
  Tensor again = Tensor::zeros({n}, DType::F32);
  CHECK(again.raw() == first);
  CHECK(big_blocks_cached() == 0);
  // Reused bytes are what the op wrote, not the old ones.
  CHECK(again.at(n - 1) == 0.0);
  CHECK(big_blocks_release() == 0);
}

TEST_CASE(
    "big blocks: a cached block up to half again a request serves it, "
    "and goes back whole",
    "[storage_bytes]") {
  const int64_t m16 = int64_t{4} << 20, m12 = int64_t{3} << 20;  // f32
  big_blocks_release();
  const void* first = nullptr;
  { first = Tensor::zeros({m16}, DType::F32).raw(); }
  REQUIRE(big_blocks_cached() == size_t{16} << 20);
  {
    // 12 MiB asked, the cached 16 MiB block given: no new mapping.
    Tensor t = Tensor::zeros({m12}, DType::F32);
    CHECK(t.raw() == first);
    CHECK(big_blocks_cached() == 0);
    CHECK(t.at(m12 - 1) == 0.0);
  }
  // Freed, it is cached as the 16 MiB it is, and serves 16 MiB again.
  CHECK(big_blocks_cached() == size_t{16} << 20);
  CHECK(Tensor::zeros({m16}, DType::F32).raw() == first);
  // More than half again: 8 MiB asked does not take the 16 MiB block.
  {
    Tensor t = Tensor::zeros({int64_t{2} << 20}, DType::F32);
    CHECK(t.raw() != first);
  }
  big_blocks_release();
}

TEST_CASE(
    "big blocks: a miss unmaps cached blocks only past the most the "
    "tensors have held",
    "[storage_bytes]") {
  const int64_t m16 = int64_t{4} << 20, m32 = int64_t{8} << 20;  // f32
  big_blocks_release();  // the peak starts again from here
  {
    // Live together: 16 + 16 + 32 = 64 MiB, the peak from here on.
    Tensor a = Tensor::zeros({m16}, DType::F32);
    Tensor b = Tensor::zeros({m16}, DType::F32);
    Tensor c = Tensor::zeros({m32}, DType::F32);
  }
  REQUIRE(big_blocks_cached() == size_t{64} << 20);
  {
    // 40 MiB, which nothing cached fits: live 40 + cached 64 is over the
    // 64 MiB peak, so the oldest cached blocks go until it is not: c (32,
    // freed first), then b (16); a stays.
    Tensor d = Tensor::zeros({int64_t{10} << 20}, DType::F32);
    CHECK(big_blocks_cached() == size_t{16} << 20);
  }
  REQUIRE(big_blocks_cached() == size_t{56} << 20);
  {
    // 24 MiB, which neither 16 nor 40 fits (40 is more than half again):
    // 24 + 56 is over the peak, so a goes, and 24 + 40 is the peak.
    Tensor e = Tensor::zeros({int64_t{6} << 20}, DType::F32);
    CHECK(big_blocks_cached() == size_t{40} << 20);
  }
  // Freed, e joins the cache: 64 MiB held, the peak, and no more.
  CHECK(big_blocks_cached() == size_t{64} << 20);
  big_blocks_release();
}

TEST_CASE(
    "backward: the seed scales a told leaf's gradient in place, as "
    "one f32 product",
    "[storage_bytes]") {
  const int64_t n = int64_t{1} << 20;  // 4 MiB: a copy would show
  std::vector<double> wv(n);
  for (int64_t i = 0; i < n; ++i) wv[i] = 0.001 * double(i % 1000) - 0.37;
  Tensor w = Tensor::from_doubles({n}, wv, DType::F32);
  auto run = [&](double seed, std::vector<float>* got) {
    Tensor x = requires_grad(Tensor::full({n}, 1.0, DType::F32));
    Tensor loss = sum(mul(x, w));
    reset_storage_peak();
    const int64_t start = storage_bytes().live;
    backward(
        loss,
        {x},
        [&](size_t, const Tensor& g) {
          if (got)
            for (int64_t i = 0; i < n; ++i) got->push_back(g.data<float>()[i]);
        },
        seed);
    return storage_bytes().peak - start;
  };
  const int64_t unscaled = run(1.0, nullptr);
  std::vector<float> got;
  const int64_t scaled = run(1.0 / 3.0, &got);
  // Scaling adds no bytes to the pass's peak.
  CHECK(scaled == unscaled);
  // Each element is w_i (as f32) times 1/3 (as f32), rounded once: the
  // backend's Mul of two f32 values. Exact equality: the same product.
  const float third = static_cast<float>(1.0 / 3.0);
  REQUIRE(got.size() == size_t(n));
  for (int64_t i = 0; i < n; i += 4099)
    CHECK(got[i] == static_cast<float>(wv[i]) * third);
}

}  // namespace
