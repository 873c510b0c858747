// The CUDA reductions' and sort's order logic (ops/core/fold_order.h) run
// on the host, split the way ops/cuda/cuda_reduce.cu's kernels split it
// (four lanes per row, one partial per chunk, one pass per merge width),
// against cpu_backend() bit for bit: Note [One fold order for every
// backend]. No GPU needed; tests/cuda/reduce_test.cpp checks the kernels.

#include <catch2/catch.hpp>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>

#include "ops/backend/backend.h"
#include "ops/core/fold_order.h"
#include "ops/core/tensor.h"

using namespace ss::ops;
namespace fo = ss::ops::fold_order;

namespace {

/// A vector element type for A (std::vector<bool> has no data()).
template <class A>
using Cell = std::conditional_t<std::is_same_v<A, bool>, uint8_t, A>;

Backend& CPU() {
  return cpu_backend();
}

/// Values whose sums round (uniform doubles, not a lattice), ints in
/// [-5, 5], bools half true; a few NaNs where [nans].
Tensor rand(const Shape& s, DType d, uint64_t seed, bool nans = false) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(-3.0, 3.0);
  std::vector<double> v(static_cast<size_t>(numel_of(s)));
  for (auto& x : v) {
    if (d == DType::Bool)
      x = (g() & 1) ? 1.0 : 0.0;
    else if (d == DType::I32 || d == DType::I64)
      x = static_cast<int>(g() % 11) - 5;
    else
      x = u(g);
    if (nans && g() % 97 == 0 && d != DType::Bool && d != DType::I32 &&
        d != DType::I64)
      x = std::nan("");
  }
  return Tensor::from_doubles(s, v, d);
}

void require_same_bits(const Tensor& want,
                       const Tensor& got,
                       const std::string& what) {
  INFO(what);
  REQUIRE(got.shape() == want.shape());
  REQUIRE(got.dtype() == want.dtype());
  REQUIRE(std::memcmp(want.raw(), got.raw(), want.nbytes()) == 0);
}

/// The row kernels: four lanes per row (or per chunk of one long row),
/// combined as the warp shuffle does, then the chunks in order.
template <class T, class A, class Op>
void emulate_rows(const T* x, T* y, const fo::Plan& p, A init, Op op) {
  auto lanes = [&](const T* row, int64_t n) {
    A a[4];
    for (int k = 0; k < 4; ++k) a[k] = fo::row_lane(row, n, k, init, op);
    return fo::combine_lanes(a[0], a[1], a[2], a[3], op);
  };
  if (int64_t chunks = fo::row_chunks(p)) {
    std::vector<Cell<A>> part(chunks);
    for (int64_t c = chunks; c-- > 0;)  // any order: chunks are independent
      part[c] = lanes(x + fo::row_chunk_begin(c), fo::row_chunk_len(p.r, c));
    y[0] = static_cast<T>(fo::combine_chunks<A>(part.data(), chunks, 1, op));
    return;
  }
  for (int64_t o = 0; o < p.outer; ++o)
    y[o] = static_cast<T>(lanes(x + o * p.r, p.r));
}

/// The column kernels: one thread per output (per chunk of rows where
/// chunked), then the chunks in order.
template <class T, class A, class Op>
void emulate_cols(const T* x, T* y, const fo::Plan& p, A init, Op op) {
  const int64_t r = p.r, inner = p.inner;
  if (int64_t chunks = fo::col_chunks(p)) {
    const int64_t rc = fo::col_row_chunk(inner);
    std::vector<Cell<A>> part(chunks * inner);
    for (int64_t c = 0; c < chunks; ++c)
      for (int64_t i = 0; i < inner; ++i)
        part[c * inner + i] = fo::col_fold(
            x + i, inner, c * rc, std::min(r, (c + 1) * rc), init, op);
    for (int64_t i = 0; i < inner; ++i)
      y[i] = static_cast<T>(
          fo::combine_chunks<A>(part.data() + i, chunks, inner, op));
    return;
  }
  for (int64_t o = 0; o < p.outer; ++o)
    for (int64_t i = 0; i < inner; ++i)
      y[o * inner + i] = static_cast<T>(
          fo::col_fold(x + o * r * inner + i, inner, 0, r, init, op));
}

template <class T, class RA, class CA, class Op>
void emulate_fold(const T* x, T* y, const fo::Plan& p, double init, Op op) {
  if (p.inner == 1)
    emulate_rows<T, RA>(x, y, p, fo::start_value<RA>(init), op);
  else
    emulate_cols<T, CA>(x, y, p, fo::start_value<CA>(init), op);
}

/// cuda::reduce's steps (ops/cuda/cuda_reduce.cu) with the kernels
/// emulated; the dtype steps run on the CPU backend.
Tensor emulate_reduce(ReduceOp op,
                      const Tensor& x_in,
                      const std::vector<int>& axes,
                      bool keepdims) {
  DType in = x_in.dtype();
  if (in == DType::BF16 || in == DType::F16) {
    Tensor r = emulate_reduce(op, CPU().cast(x_in, DType::F32), axes, keepdims);
    return r.dtype() == DType::F32 ? CPU().cast(r, in) : r;
  }
  if (in == DType::Bool && (op == ReduceOp::Sum || op == ReduceOp::Prod))
    return emulate_reduce(op, CPU().cast(x_in, DType::I64), axes, keepdims);
  Tensor x = x_in;
  if (op == ReduceOp::Any || op == ReduceOp::All)
    x = CPU().cast(x, DType::Bool);
  bool arg = op == ReduceOp::ArgMax || op == ReduceOp::ArgMin;
  DType od = arg ? DType::I64 : x.dtype();
  Shape os;
  for (size_t d = 0; d < x.rank(); ++d) {
    bool red = std::count(axes.begin(), axes.end(), static_cast<int>(d)) > 0;
    if (!red)
      os.push_back(x.shape()[d]);
    else if (keepdims)
      os.push_back(1);
  }
  fo::Plan p = fo::plan(x.shape(), axes);
  if (p.permute) x = CPU().permute(x, fo::kept_then_reduced(x.rank(), axes));
  Tensor out = Tensor::empty(os, od);
  auto typed = [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.data<T>();
    if (arg) {
      int64_t* py = out.data<int64_t>();
      for (int64_t o = 0; o < p.outer; ++o)
        for (int64_t i = 0; i < p.inner; ++i)
          py[o * p.inner + i] =
              op == ReduceOp::ArgMax
                  ? fo::arg_fold<true>(px + o * p.r * p.inner + i, p.inner, p.r)
                  : fo::arg_fold<false>(
                        px + o * p.r * p.inner + i, p.inner, p.r);
      return;
    }
    T* py = out.data<T>();
    if constexpr (std::is_same_v<T, bool>) {
      if (op == ReduceOp::Any)
        emulate_fold<T, bool, bool>(px, py, p, 0.0, fo::OrOp{});
      else if (op == ReduceOp::All)
        emulate_fold<T, bool, bool>(px, py, p, 1.0, fo::AndOp{});
      else if (op == ReduceOp::Max)
        emulate_fold<T, bool, bool>(px, py, p, 0.0, fo::MaxOp{});
      else
        emulate_fold<T, bool, bool>(px, py, p, 1.0, fo::MinOp{});
    } else {
      using RA = fo::RowAcc<T>;
      using CA = fo::ColAcc<T>;
      if (op == ReduceOp::Sum)
        emulate_fold<T, RA, CA>(px, py, p, 0.0, fo::AddOp{});
      else if (op == ReduceOp::Prod)
        emulate_fold<T, RA, CA>(px, py, p, 1.0, fo::MulOp{});
      else if (op == ReduceOp::Max)
        emulate_fold<T, T, T>(px, py, p, fo::lowest_of<T>(), fo::MaxOp{});
      else
        emulate_fold<T, T, T>(px, py, p, fo::highest_of<T>(), fo::MinOp{});
    }
  };
  switch (x.dtype()) {
    case DType::F32:
      typed(float{});
      break;
    case DType::F64:
      typed(double{});
      break;
    case DType::I32:
      typed(int32_t{});
      break;
    case DType::I64:
      typed(int64_t{});
      break;
    default:
      typed(bool{});
      break;
  }
  return out;
}

/// cuda::sort's passes: rows of (key, index) pairs, merged in runs of 1,
/// 2, 4, ... by merge_target; the indices only (the values are gathered
/// by them bytewise).
template <class T>
std::vector<int64_t> emulate_sort_row(const std::vector<T>& keys,
                                      bool descending) {
  const int64_t n = static_cast<int64_t>(keys.size());
  std::vector<T> k = keys, k2(n);
  std::vector<int64_t> ix(n), ix2(n);
  for (int64_t j = 0; j < n; ++j) ix[j] = j;
  for (int64_t w = 1; w < n; w *= 2) {
    for (int64_t j = 0; j < n; ++j) {
      int64_t to = fo::merge_target(k.data(), ix.data(), n, w, j, descending);
      k2[to] = k[j];
      ix2[to] = ix[j];
    }
    std::swap(k, k2);
    std::swap(ix, ix2);
  }
  return ix;
}

}  // namespace

TEST_CASE("fold order: reductions as the CUDA kernels split them",
          "[cuda-logic]") {
  struct Case {
    Shape shape;
    std::vector<int> axes;
  };
  // Rows, columns, chunked rows (one long row), chunked columns (a bias
  // gradient), interleaved axes (permuted), tails not a multiple of 4.
  const std::vector<Case> cases = {
      {{3, 5, 7}, {0}},
      {{3, 5, 7}, {1, 2}},
      {{3, 5, 7}, {0, 2}},
      {{3, 5, 7}, {0, 1, 2}},
      {{3, 5, 7}, {1}},
      {{100003}, {0}},
      {{40001, 3}, {0}},
      {{3, 40001}, {1}},
      {{9, 1, 11}, {1}},
      {{2, 3, 4, 5}, {0, 2}},
      {{70001, 2}, {0, 1}},
      {{1500, 70}, {0}},
      {{5000, 1100}, {0}},
      {{33, 1027}, {1}},
      {{2, 40000, 3}, {1}},
      {{1}, {0}},
  };
  const ReduceOp ops[] = {ReduceOp::Sum,
                          ReduceOp::Prod,
                          ReduceOp::Max,
                          ReduceOp::Min,
                          ReduceOp::Any,
                          ReduceOp::All};
  const DType dtypes[] = {
      DType::F32, DType::F64, DType::I32, DType::I64, DType::Bool, DType::F16};
  uint64_t seed = 1;
  for (const Case& c : cases)
    for (DType d : dtypes) {
      // Prod of many values over/underflows: keep it to small inputs.
      bool big = numel_of(c.shape) > 4096;
      Tensor x = rand(c.shape, d, seed++, /*nans=*/!big);
      for (ReduceOp op : ops) {
        if (op == ReduceOp::Prod && big && d != DType::Bool) continue;
        for (bool keep : {false, true}) {
          std::string what = shape_string(c.shape) + " op " +
                             std::to_string(static_cast<int>(op)) + " " +
                             ss::types::dtype_name(d) +
                             (keep ? " keepdims" : "");
          require_same_bits(CPU().reduce(op, x, c.axes, keep),
                            emulate_reduce(op, x, c.axes, keep),
                            what);
        }
      }
      if (c.axes.size() == 1)
        for (ReduceOp op : {ReduceOp::ArgMax, ReduceOp::ArgMin})
          require_same_bits(
              CPU().reduce(op, x, c.axes, false),
              emulate_reduce(op, x, c.axes, false),
              shape_string(c.shape) + " arg " + ss::types::dtype_name(d));
    }
}

TEST_CASE("fold order: the chunks make sums grid-independent", "[cuda-logic]") {
  // A long f32 row sums by chunks: the result is not one unchunked fold's
  // (so the chunking is really exercised) but is the CPU's.
  Tensor x = rand({100003}, DType::F32, 77);
  fo::Plan p = fo::plan(x.shape(), {0});
  REQUIRE(fo::row_chunks(p) == 7);
  Tensor want = CPU().reduce(ReduceOp::Sum, x, {0}, false);
  require_same_bits(want, emulate_reduce(ReduceOp::Sum, x, {0}, false), "sum");
  // Few columns over many rows chunk their rows.
  Tensor b = rand({50000, 3}, DType::F32, 78);
  REQUIRE(fo::col_chunks(fo::plan(b.shape(), {0})) > 1);
}

TEST_CASE("fold order: merge passes give the stable sort", "[cuda-logic]") {
  std::mt19937_64 g(5);
  for (int64_t n : {1, 2, 3, 7, 64, 100, 1000, 1037}) {
    for (bool desc : {false, true}) {
      // Few distinct values: many ties; NaNs and signed zeros among them.
      std::vector<double> v(n);
      for (auto& e : v) {
        int r = static_cast<int>(g() % 9);
        e = r == 0 ? std::nan("") : r == 1 ? -0.0 : r == 2 ? 0.0 : r - 5;
      }
      Tensor x = Tensor::from_doubles({n}, v, DType::F64);
      auto [vals, idx] = CPU().sort(x, 0, desc);
      std::vector<int64_t> got = emulate_sort_row(v, desc);
      INFO("n " << n << (desc ? " descending" : ""));
      REQUIRE(std::memcmp(idx.raw(), got.data(), n * sizeof(int64_t)) == 0);
      std::vector<int32_t> vi(n);
      for (int64_t j = 0; j < n; ++j) vi[j] = static_cast<int32_t>(g() % 5);
      std::vector<double> vd(vi.begin(), vi.end());
      auto [vals2, idx2] =
          CPU().sort(Tensor::from_doubles({n}, vd, DType::I32), 0, desc);
      std::vector<int64_t> got2 = emulate_sort_row(vi, desc);
      REQUIRE(std::memcmp(idx2.raw(), got2.data(), n * sizeof(int64_t)) == 0);
    }
  }
}
