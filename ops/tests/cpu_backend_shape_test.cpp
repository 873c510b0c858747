// The CPU backend against naive loops: shape ops, indexing, random draws,
// conv2d and backend dispatch.

#include <catch2/catch.hpp>

#include "ops/tests/cpu_test_util.h"

using namespace ss::ops;
using namespace cpu_test;

// ---------------------------------------------------------------- shape ops

TEST_CASE("permute, broadcast_to, slice, concat, pad", "[cpu]") {
  Tensor x = rnd({2, 3, 4}, DType::F32, 8);
  std::vector<double> v = x.to_doubles();
  for (std::vector<int> perm : std::vector<std::vector<int>>{
           {2, 0, 1}, {1, 0, 2}, {0, 2, 1}, {2, 1, 0}, {0, 1, 2}}) {
    Shape os = {x.shape()[perm[0]], x.shape()[perm[1]], x.shape()[perm[2]]};
    std::vector<double> want;
    for (int64_t i = 0; i < os[0]; ++i)
      for (int64_t j = 0; j < os[1]; ++j)
        for (int64_t k = 0; k < os[2]; ++k) {
          int64_t idx[3];
          idx[perm[0]] = i, idx[perm[1]] = j, idx[perm[2]] = k;
          want.push_back(v[(idx[0] * 3 + idx[1]) * 4 + idx[2]]);
        }
    check_close(B().permute(x, perm), os, want, 0);
  }
  for (DType d : {DType::F64, DType::F16, DType::Bool}) {
    Tensor m = rnd({37, 41}, d, 2);
    std::vector<double> mv = m.to_doubles(), want;
    for (int64_t j = 0; j < 41; ++j)
      for (int64_t i = 0; i < 37; ++i) want.push_back(mv[i * 41 + j]);
    check_close(B().permute(m, {1, 0}), {41, 37}, want, 0);
  }
  for (auto& [from, to] :
       std::vector<std::pair<Shape, Shape>>{{{3}, {2, 3}},
                                            {{2, 1}, {2, 3}},
                                            {{}, {2, 2}},
                                            {{1, 3}, {4, 2, 3}}}) {
    Tensor s = rnd(from, DType::BF16, 1);
    std::vector<double> sv = s.to_doubles(), want;
    for (int64_t i = 0; i < numel_of(to); ++i)
      want.push_back(sv[bidx(from, to, i)]);
    check_close(B().broadcast_to(s, to), to, want, 0);
  }
  Tensor r = T({2, 5}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, DType::I32);
  check_close(B().slice(r, 1, 1, 5, 2), {2, 2}, {1, 3, 6, 8}, 0);
  check_close(B().slice(r, 1, 1, 4, 1), {2, 3}, {1, 2, 3, 6, 7, 8}, 0);
  check_close(B().slice(r, 0, 1, 2, 1), {1, 5}, {5, 6, 7, 8, 9}, 0);
  check_close(B().slice(r, 1, 4, 4, 1), {2, 0}, {}, 0);
  check_close(B().slice(r, 1, 0, 5, 3), {2, 2}, {0, 3, 5, 8}, 0);
  Tensor c1 = T({2, 1}, {1, 2}), c2 = T({2, 2}, {3, 4, 5, 6});
  check_close(B().concat({c1, c2}, 1), {2, 3}, {1, 3, 4, 2, 5, 6}, 0);
  check_close(B().concat({c2, c2}, 0), {4, 2}, {3, 4, 5, 6, 3, 4, 5, 6}, 0);
  check_close(B().pad(c2, 1, 1, 2, -1),
              {2, 5},
              {-1, 3, 4, -1, -1, -1, 5, 6, -1, -1},
              0);
  check_close(
      B().pad(T({2}, {1, 2}, DType::BF16), 0, 1, 0, 0.5), {3}, {0.5, 1, 2}, 0);
}

// ---------------------------------------------------------------- indexing

TEST_CASE("take, take_add, gather, scatter_add", "[cpu]") {
  Tensor emb = T({4, 2}, {0, 1, 10, 11, 20, 21, 30, 31}, DType::F32);
  Tensor idx = T({2, 2}, {3, 0, 1, 3}, DType::I64);
  check_close(
      B().take(emb, idx, 0), {2, 2, 2}, {30, 31, 0, 1, 10, 11, 30, 31}, 0);
  check_close(B().take(emb, T({3}, {1, 1, 0}, DType::I64), 1),
              {4, 3},
              {1, 1, 0, 11, 11, 10, 21, 21, 20, 31, 31, 30},
              0);
  // take_add is take's transpose: <take(x), v> == <x, take_add(v)>.
  for (DType d : {DType::F64, DType::F32, DType::I64, DType::BF16}) {
    Tensor g = T({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}, d);
    check_close(
        B().take_add(g, idx, 0, 4), {4, 2}, {3, 4, 5, 6, 0, 0, 8, 10}, 0);
  }
  Tensor v2 = T({4, 3}, std::vector<double>(12, 1));
  check_close(B().take_add(v2, T({3}, {1, 1, 0}, DType::I64), 1, 2),
              {4, 2},
              {1, 2, 1, 2, 1, 2, 1, 2},
              0);
  // gather = take_along_axis, naive.
  Tensor x = rnd({3, 4}, DType::F64, 12);
  Tensor gi = T({3, 2}, {3, 0, 1, 1, 0, 2}, DType::I64);
  std::vector<double> xv = x.to_doubles();
  check_close(B().gather(x, gi, 1),
              {3, 2},
              {xv[3], xv[0], xv[5], xv[5], xv[8], xv[10]},
              0);
  Tensor gi0 = T({2, 4}, {2, 0, 1, 2, 0, 0, 2, 1}, DType::I64);
  check_close(B().gather(x, gi0, 0),
              {2, 4},
              {xv[8], xv[1], xv[6], xv[11], xv[0], xv[1], xv[10], xv[7]},
              0);
  // scatter_add: repeated indices add up.
  Tensor sv = T({3, 2}, {1, 2, 3, 4, 5, 6});
  check_close(B().scatter_add({3, 4}, gi, sv, 1),
              {3, 4},
              {2, 0, 0, 1, 0, 7, 0, 0, 5, 0, 6, 0},
              0);
  check_close(
      B().scatter_add({3, 4}, gi0, T({2, 4}, std::vector<double>(8, 1)), 0),
      {3, 4},
      {1, 2, 0, 0, 0, 0, 1, 1, 1, 0, 1, 1},
      0);
}

// ---------------------------------------------------------------- random

TEST_CASE("random draws are counter-based", "[cpu]") {
  for (bool normal : {false, true})
    for (DType d : kAllFloats) {
      Tensor a = B().random({10}, d, 42, 7, 0, normal);
      Tensor b = B().random({10}, d, 42, 7, 0, normal);
      CHECK(a.dtype() == d);
      CHECK(a.to_doubles() == b.to_doubles());
      Tensor shifted = B().random({7}, d, 42, 7, 3, normal);
      std::vector<double> av = a.to_doubles();
      CHECK(std::vector<double>(av.begin() + 3, av.end()) ==
            shifted.to_doubles());
      CHECK(B().random({10}, d, 43, 7, 0, normal).to_doubles() != av);
      CHECK(B().random({10}, d, 42, 8, 0, normal).to_doubles() != av);
    }
  // Exactly the contract: element i is philox(key, (offset + i, stream)).
  Tensor u = B().random({2, 3}, DType::F64, 5, 1, 100, false);
  Tensor z = B().random({4}, DType::F32, 5, 1, 100, true);
  for (int i = 0; i < 4; ++i) {
    auto blk = philox::draw(5, 100 + i, 1);
    if (i < 6) CHECK(u.at(i) == double(philox::to_uniform(blk[0])));
    CHECK(z.at(i) == double(float(philox::to_normal(blk))));
  }
  CHECK_THROWS(B().random({2}, DType::I32, 1, 1, 0, false));
}

TEST_CASE("random statistics over 100k draws", "[cpu]") {
  const int64_t n = 100000;
  // sigma / sqrt(n): uniform 0.289 / 316 = 0.0009, normal 1 / 316 = 0.003.
  for (DType d : kFloats) {
    std::vector<double> u = B().random({n}, d, 123, 0, 0, false).to_doubles();
    double mean = 0, lo = 1, hi = 0;
    for (double x : u) mean += x, lo = std::min(lo, x), hi = std::max(hi, x);
    mean /= n;
    CHECK(std::abs(mean - 0.5) < 0.005);
    CHECK(lo >= 0);
    CHECK(hi < 1);
    std::vector<double> g = B().random({n}, d, 123, 1, 0, true).to_doubles();
    double m = 0, sq = 0;
    for (double x : g) m += x;
    m /= n;
    for (double x : g) sq += (x - m) * (x - m);
    double sd = std::sqrt(sq / (n - 1));
    CHECK(std::abs(m) < 0.015);
    CHECK(std::abs(sd - 1) < 0.01);
  }
  for (DType d : {DType::BF16, DType::F16}) {
    std::vector<double> u = B().random({n}, d, 9, 0, 0, false).to_doubles();
    CHECK(*std::max_element(u.begin(), u.end()) < 1.0);
    CHECK(*std::min_element(u.begin(), u.end()) >= 0.0);
  }
}

// ---------------------------------------------------------------- conv2d

namespace {

struct ConvCase {
  Shape x, k;
  int stride, padding, dilation = 1, groups = 1;
  ConvShape shape() const {
    return ConvShape::square(stride, padding, dilation, groups);
  }
};

// The definition, output by output: out[b, o, i, j] sums x[b, c, i·s - p +
// u·d, j·s - p + w·d] k[o, c - c0, u, w] over the group's channels c.
std::vector<double> naive_conv(const Tensor& x,
                               const Tensor& k,
                               const ConvCase& c,
                               Shape* os) {
  const int64_t s = c.stride, p = c.padding, d = c.dilation, G = c.groups;
  int64_t Bn = x.shape()[0], C = x.shape()[1], H = x.shape()[2],
          W = x.shape()[3];
  int64_t O = k.shape()[0], kh = k.shape()[2], kw = k.shape()[3];
  int64_t H2 = (H + 2 * p - d * (kh - 1) - 1) / s + 1,
          W2 = (W + 2 * p - d * (kw - 1) - 1) / s + 1;
  int64_t Cg = C / G, Og = O / G;
  *os = {Bn, O, H2, W2};
  std::vector<double> xv = x.to_doubles(), kv = k.to_doubles(), out;
  for (int64_t b = 0; b < Bn; ++b)
    for (int64_t o = 0; o < O; ++o)
      for (int64_t i = 0; i < H2; ++i)
        for (int64_t j = 0; j < W2; ++j) {
          double acc = 0;
          for (int64_t cg = 0; cg < Cg; ++cg)
            for (int64_t u = 0; u < kh; ++u)
              for (int64_t w = 0; w < kw; ++w) {
                int64_t c0 = (o / Og) * Cg + cg;
                int64_t iy = i * s - p + u * d, ix = j * s - p + w * d;
                if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                acc += xv[((b * C + c0) * H + iy) * W + ix] *
                       kv[((o * Cg + cg) * kh + u) * kw + w];
              }
          out.push_back(acc);
        }
  return out;
}

const std::vector<ConvCase> kConvCases = {
    {{2, 3, 5, 5}, {4, 3, 3, 3}, 1, 0},
    {{1, 2, 6, 7}, {3, 2, 3, 2}, 2, 1},
    {{2, 1, 4, 4}, {2, 1, 1, 1}, 1, 0},
    {{1, 2, 5, 4}, {2, 2, 3, 3}, 2, 2},
    {{2, 4, 7, 6}, {6, 2, 3, 2}, 1, 1, 1, 2},  // two groups
    {{1, 3, 6, 6}, {3, 1, 3, 3}, 1, 1, 1, 3},  // depthwise
    {{1, 2, 9, 8}, {3, 2, 3, 3}, 1, 2, 2},     // dilation 2
    {{2, 4, 9, 9}, {4, 2, 2, 3}, 2, 1, 3, 2},  // all at once
};

}  // namespace

TEST_CASE("conv2d against a naive loop", "[cpu]") {
  for (DType d : {DType::F32, DType::F64, DType::BF16})
    for (const ConvCase& c : kConvCases) {
      Tensor x = rnd(c.x, d, 21), k = rnd(c.k, d, 22);
      Shape os;
      std::vector<double> want = naive_conv(x, k, c, &os);
      Tensor y = B().conv2d(x, k, c.shape());
      CHECK(y.dtype() == d);
      check_close(y, os, want, d == DType::BF16 ? 1e-2 : tol_of(d));
    }
}

TEST_CASE("conv2d grads against finite differences (f64)", "[cpu]") {
  for (const ConvCase& c : kConvCases) {
    Tensor x = rnd(c.x, DType::F64, 31), k = rnd(c.k, DType::F64, 32);
    Tensor y = B().conv2d(x, k, c.shape());
    Tensor w = rnd(y.shape(), DType::F64, 33);  // L = sum(y * w)
    auto loss = [&](const Tensor& xx, const Tensor& kk) {
      std::vector<double> yv = B().conv2d(xx, kk, c.shape()).to_doubles();
      std::vector<double> wv = w.to_doubles();
      double s = 0;
      for (size_t i = 0; i < yv.size(); ++i) s += yv[i] * wv[i];
      return s;
    };
    Tensor gx = B().conv2d_grad_input(w, k, c.x, c.shape());
    Tensor gk = B().conv2d_grad_kernel(w, x, c.k, c.shape());
    REQUIRE(gx.shape() == c.x);
    REQUIRE(gk.shape() == c.k);
    const double h = 1e-4;
    for (int64_t i = 0; i < x.numel(); ++i) {
      Tensor xp = x.clone(), xm = x.clone();
      xp.set(i, x.at(i) + h);
      xm.set(i, x.at(i) - h);
      double fd = (loss(xp, k) - loss(xm, k)) / (2 * h);
      INFO("dx " << i);
      CHECK(std::abs(fd - gx.at(i)) < 1e-6 * std::max(1.0, std::abs(fd)));
    }
    for (int64_t i = 0; i < k.numel(); ++i) {
      Tensor kp = k.clone(), km = k.clone();
      kp.set(i, k.at(i) + h);
      km.set(i, k.at(i) - h);
      double fd = (loss(x, kp) - loss(x, km)) / (2 * h);
      INFO("dk " << i);
      CHECK(std::abs(fd - gk.at(i)) < 1e-6 * std::max(1.0, std::abs(fd)));
    }
  }
}

// ---------------------------------------------------------------- dispatch

TEST_CASE("backend_for picks the CPU backend, and CUDA loads or says why",
          "[cpu]") {
  CHECK(std::string(backend_for(Device{}).name()) == "cpu");
  CHECK(&backend_for(Device{}) == &cpu_backend());
  // Without the CUDA module (no toolkit at build time) the stub says so;
  // with it, this binary (which does not export ss_ops's symbols to it,
  // unlike ss) or a machine without a GPU says why it cannot load.
  try {
    Backend& b = backend_for(Device{Device::Kind::Cuda, 0});
    CHECK(std::string(b.name()) == "cuda");
  } catch (const std::runtime_error& e) {
    std::string why = e.what();
    INFO(why);
    CHECK((why.find("built without CUDA") != std::string::npos ||
           why.find("the CUDA backend could not be loaded from") !=
               std::string::npos ||
           why.find("no CUDA device answers") != std::string::npos));
    CHECK_THROWS_AS(
        Tensor::empty({2}, DType::F32, Device{Device::Kind::Cuda, 0}),
        std::runtime_error);
  }
}
