// Reductions, cumsum and sort.
//
// A reduction first merges adjacent axes that are all reduced or all kept
// (size-1 axes are layout-neutral and dropped), which turns every common
// case into [outer, r, inner] over the contiguous buffer: the last axis of
// [64 10] is (64, 10, 1), the batch axis of [64 256] is (1, 64, 256). Rows
// (inner == 1) fold with four independent accumulators; columns
// (inner > 1) fold whole rows into an accumulator row, which vectorises.
// Interleaved patterns (reduce axes 0 and 2 of [a b c d]) are permuted to
// [kept.., reduced..] first.

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <type_traits>

#include "ops/cpu/cpu_common.h"

namespace ss::ops::cpu {

namespace {

/// A vector element type for X (std::vector<bool> has no data()).
template <class X>
using Cell = std::conditional_t<std::is_same_v<X, bool>, uint8_t, X>;

struct Plan {
  int64_t outer = 1, r = 1, inner = 1;
  Tensor x;  // the input, permuted when the pattern needed it
};

Plan plan_reduction(const Tensor& x, const std::vector<int>& axes) {
  const Shape& s = x.shape();
  std::vector<bool> red(s.size(), false);
  for (int a : axes) red[a] = true;
  std::vector<std::pair<int64_t, bool>> groups;  // (size, reduced)
  for (size_t d = 0; d < s.size(); ++d) {
    if (s[d] == 1) continue;
    if (!groups.empty() && groups.back().second == red[d])
      groups.back().first *= s[d];
    else
      groups.push_back({s[d], red[d]});
  }
  Plan p;
  p.x = x;
  if (groups.size() > 3 || (groups.size() == 3 && groups[0].second)) {
    std::vector<int> perm;
    for (size_t d = 0; d < s.size(); ++d)
      if (!red[d]) perm.push_back(static_cast<int>(d));
    for (size_t d = 0; d < s.size(); ++d)
      if (red[d]) perm.push_back(static_cast<int>(d));
    p.x = permute(x, perm);
    for (size_t d = 0; d < s.size(); ++d) (red[d] ? p.r : p.outer) *= s[d];
    return p;
  }
  size_t g = 0;
  if (g < groups.size() && !groups[g].second) p.outer = groups[g++].first;
  if (g < groups.size()) p.r = groups[g++].first;  // a reduced group
  if (g < groups.size()) p.inner = groups[g++].first;
  return p;
}

// Note [Reductions on threads]
// A reduction splits over threads (Note [Intra-op threads]) without its
// results depending on the thread count. Rows (inner == 1) and columns
// (inner > 1) split by output element, each folded in the same order
// whoever folds it. One long row (a tensor summed to one value) and
// columns of few outputs over many rows (a bias's gradient) split their
// reduced axis instead, into chunks of a fixed length (kFoldChunk
// elements, or as many rows as hold that many): each chunk folds into its
// own partial, and the partials are folded in chunk order on the caller,
// so the sums are the same on 1 thread or many (and differ, by rounding,
// from one unchunked fold). Only reductions of at least two chunks are
// chunked.
constexpr int64_t kFoldChunk = 16384;

/// A fold's start value [v] (0, 1, or a dtype's lowest or highest, given
/// as a double) in the accumulator type A: an integer's highest, 2^63 as a
/// double, is out of i64's range, and casting it is undefined (it gave
/// INT64_MIN on x86 once the cast was no longer constant-folded).
template <class A>
A start_value(double v) {
  if constexpr (std::is_integral_v<A> && !std::is_same_v<A, bool>) {
    if (v >= static_cast<double>(std::numeric_limits<A>::max()))
      return std::numeric_limits<A>::max();
    if (v <= static_cast<double>(std::numeric_limits<A>::lowest()))
      return std::numeric_limits<A>::lowest();
  }
  return static_cast<A>(v);
}

/// Folds [outer, r, inner] with [op]: RowAcc for rows, ColAcc for columns.
template <class T, class RowAcc, class ColAcc, class Op>
void fold(const T* x, T* y, const Plan& p, double init, Op op) {
  const int64_t outer = p.outer, r = p.r, inner = p.inner;
  if (inner == 1) {
    auto row_fold = [&](const T* row, int64_t n) {
      RowAcc a0 = start_value<RowAcc>(init), a1 = a0, a2 = a0, a3 = a0;
      int64_t j = 0;
      for (; j + 4 <= n; j += 4) {
        a0 = op(a0, static_cast<RowAcc>(row[j]));
        a1 = op(a1, static_cast<RowAcc>(row[j + 1]));
        a2 = op(a2, static_cast<RowAcc>(row[j + 2]));
        a3 = op(a3, static_cast<RowAcc>(row[j + 3]));
      }
      for (; j < n; ++j) a0 = op(a0, static_cast<RowAcc>(row[j]));
      return static_cast<RowAcc>(op(op(a0, a1), op(a2, a3)));
    };
    if (outer == 1 && r >= 2 * kFoldChunk) {  // one long row, by chunks
      int64_t chunks = (r + kFoldChunk - 1) / kFoldChunk;
      std::vector<Cell<RowAcc>> part(chunks);
      parallel_for(chunks, 2, [&](int64_t b, int64_t e) {
        for (int64_t c = b; c < e; ++c)
          part[c] = row_fold(x + c * kFoldChunk,
                             std::min(kFoldChunk, r - c * kFoldChunk));
      });
      RowAcc a = static_cast<RowAcc>(part[0]);
      for (int64_t c = 1; c < chunks; ++c)
        a = static_cast<RowAcc>(op(a, static_cast<RowAcc>(part[c])));
      y[0] = static_cast<T>(a);
      return;
    }
    parallel_for(outer,
                 std::max<int64_t>(1, kElementGrain / std::max<int64_t>(r, 1)),
                 [&](int64_t b, int64_t e) {
                   for (int64_t o = b; o < e; ++o)
                     y[o] = static_cast<T>(row_fold(x + o * r, r));
                 });
    return;
  }
  // Columns: rows [j0, j1) of output block [o, i0, i0 + len) folded into
  // [acc], which the caller filled with init.
  auto col_fold = [&](Cell<ColAcc>* acc,
                      int64_t o,
                      int64_t i0,
                      int64_t len,
                      int64_t j0,
                      int64_t j1) {
    for (int64_t j = j0; j < j1; ++j) {
      const T* row = x + (o * r + j) * inner + i0;
      for (int64_t i = 0; i < len; ++i)
        acc[i] = op(static_cast<ColAcc>(acc[i]), static_cast<ColAcc>(row[i]));
    }
  };
  constexpr int64_t kBlock = 1024;  // outputs a thread folds at a time
  int64_t blocks = (inner + kBlock - 1) / kBlock;
  int64_t row_chunk = std::max<int64_t>(1, kFoldChunk / inner);
  int64_t chunks = (r + row_chunk - 1) / row_chunk;
  if (outer * blocks == 1 && chunks >= 2) {  // few outputs: chunk the rows
    std::vector<Cell<ColAcc>> part(chunks * inner, start_value<ColAcc>(init));
    parallel_for(chunks, 2, [&](int64_t b, int64_t e) {
      for (int64_t c = b; c < e; ++c)
        col_fold(part.data() + c * inner,
                 0,
                 0,
                 inner,
                 c * row_chunk,
                 std::min(r, (c + 1) * row_chunk));
    });
    for (int64_t i = 0; i < inner; ++i) {
      ColAcc a = static_cast<ColAcc>(part[i]);
      for (int64_t c = 1; c < chunks; ++c)
        a = op(a, static_cast<ColAcc>(part[c * inner + i]));
      y[i] = static_cast<T>(a);
    }
    return;
  }
  int64_t grain = std::max<int64_t>(
      1, kElementGrain / std::max<int64_t>(1, r * std::min(inner, kBlock)));
  parallel_for(outer * blocks, grain, [&](int64_t b, int64_t e) {
    std::vector<Cell<ColAcc>> acc(std::min(inner, kBlock));
    for (int64_t k = b; k < e; ++k) {
      int64_t o = k / blocks, i0 = (k % blocks) * kBlock;
      int64_t len = std::min(kBlock, inner - i0);
      std::fill(acc.begin(), acc.begin() + len, start_value<ColAcc>(init));
      col_fold(acc.data(), o, i0, len, 0, r);
      T* out = y + o * inner + i0;
      for (int64_t i = 0; i < len; ++i) out[i] = static_cast<T>(acc[i]);
    }
  });
}

/// Whether [v] beats [best] for argmax/argmin: NaN is the extreme and the
/// first one wins; ties keep the earlier index.
template <bool kMax, class T>
inline bool beats(T v, T best) {
  if constexpr (std::is_floating_point_v<T>) {
    if (best != best) return false;
    if (v != v) return true;
  }
  return kMax ? v > best : v < best;
}

template <bool kMax, class T>
void arg_kernel(const T* x, int64_t* y, const Plan& p) {
  if (p.inner == 1) {
    for (int64_t o = 0; o < p.outer; ++o) {
      const T* row = x + o * p.r;
      T best = row[0];
      int64_t bi = 0;
      for (int64_t j = 1; j < p.r; ++j)
        if (beats<kMax>(row[j], best)) best = row[j], bi = j;
      y[o] = bi;
    }
    return;
  }
  std::vector<Cell<T>> best(p.inner);
  for (int64_t o = 0; o < p.outer; ++o) {
    const T* first = x + o * p.r * p.inner;
    std::copy(first, first + p.inner, best.begin());
    int64_t* bi = y + o * p.inner;
    std::fill(bi, bi + p.inner, 0);
    for (int64_t j = 1; j < p.r; ++j) {
      const T* row = first + j * p.inner;
      for (int64_t i = 0; i < p.inner; ++i)
        if (beats<kMax>(row[i], static_cast<T>(best[i])))
          best[i] = row[i], bi[i] = j;
    }
  }
}

template <class T>
void reduce_typed(ReduceOp op, const Plan& p, Tensor& out) {
  const T* x = p.x.data<T>();
  constexpr bool kFloat = std::is_floating_point_v<T>;
  // Floats sum rows in double (cheap, much more accurate); ints in i64.
  using Wide = std::conditional_t<kFloat, double, int64_t>;
  using Col = std::conditional_t<kFloat, T, int64_t>;
  auto max_op = [](auto a, auto b) { return (b > a || b != b) ? b : a; };
  auto min_op = [](auto a, auto b) { return (b < a || b != b) ? b : a; };
  constexpr double lowest =
      kFloat ? -std::numeric_limits<double>::infinity()
             : static_cast<double>(std::numeric_limits<T>::lowest());
  constexpr double highest =
      kFloat ? std::numeric_limits<double>::infinity()
             : static_cast<double>(std::numeric_limits<T>::max());
  switch (op) {
    case ReduceOp::Sum:
      if constexpr (!std::is_same_v<T, bool>)
        fold<T, Wide, Col>(
            x, out.data<T>(), p, 0.0, [](auto a, auto b) { return a + b; });
      return;
    case ReduceOp::Prod:
      if constexpr (!std::is_same_v<T, bool>)
        fold<T, Wide, Col>(
            x, out.data<T>(), p, 1.0, [](auto a, auto b) { return a * b; });
      return;
    case ReduceOp::Max:
      if constexpr (std::is_same_v<T, bool>)
        fold<T, bool, bool>(x, out.data<T>(), p, 0.0, max_op);
      else
        fold<T, T, T>(x, out.data<T>(), p, lowest, max_op);
      return;
    case ReduceOp::Min:
      if constexpr (std::is_same_v<T, bool>)
        fold<T, bool, bool>(x, out.data<T>(), p, 1.0, min_op);
      else
        fold<T, T, T>(x, out.data<T>(), p, highest, min_op);
      return;
    case ReduceOp::ArgMax:
      arg_kernel<true>(x, out.data<int64_t>(), p);
      return;
    case ReduceOp::ArgMin:
      arg_kernel<false>(x, out.data<int64_t>(), p);
      return;
    case ReduceOp::Any:
    case ReduceOp::All: {
      // Treat the input as truth values (0 is false), then fold as bool.
      Tensor b = std::is_same_v<T, bool> ? p.x : cast(p.x, DType::Bool);
      const bool* bx = b.data<bool>();
      if (op == ReduceOp::Any)
        fold<bool, bool, bool>(
            bx, out.data<bool>(), p, 0.0, [](bool a, bool c) {
              return a || c;
            });
      else
        fold<bool, bool, bool>(
            bx, out.data<bool>(), p, 1.0, [](bool a, bool c) {
              return a && c;
            });
      return;
    }
  }
}

DType reduce_dtype(ReduceOp op, DType in) {
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Prod:
      return in == DType::Bool ? DType::I64 : in;
    case ReduceOp::ArgMax:
    case ReduceOp::ArgMin:
      return DType::I64;
    case ReduceOp::Any:
    case ReduceOp::All:
      return DType::Bool;
    default:
      return in;
  }
}

}  // namespace

Tensor reduce(ReduceOp op,
              const Tensor& x,
              const std::vector<int>& axes,
              bool keepdims) {
  bool arg = op == ReduceOp::ArgMax || op == ReduceOp::ArgMin;
  if (arg && axes.size() != 1) fail("reduce", "argmax/argmin take one axis");
  DType in = x.dtype();
  if (is_half(in)) {
    Tensor r = reduce(op, to_f32(x), axes, keepdims);
    return r.dtype() == DType::F32 ? from_f32(r, in) : r;
  }
  if (in == DType::Bool && (op == ReduceOp::Sum || op == ReduceOp::Prod))
    return reduce(op, cast(x, DType::I64), axes, keepdims);
  DType od = reduce_dtype(op, in);
  Shape os;
  for (size_t d = 0; d < x.rank(); ++d) {
    bool r =
        std::find(axes.begin(), axes.end(), static_cast<int>(d)) != axes.end();
    if (!r)
      os.push_back(x.shape()[d]);
    else if (keepdims)
      os.push_back(1);
  }
  if (axes.empty()) return cast(x, od).clone();
  if (x.numel() == 0) {
    int64_t on = numel_of(os);
    switch (op) {
      case ReduceOp::Sum:
        return Tensor::zeros(os, od);
      case ReduceOp::Prod:
        return Tensor::full(os, 1.0, od);
      case ReduceOp::Any:
        return Tensor::zeros(os, od);
      case ReduceOp::All:
        return Tensor::full(os, 1.0, od);
      default:
        if (on == 0) return Tensor::empty(os, od);
        fail("reduce", "max/min/argmax/argmin of an empty axis");
    }
  }
  Plan p = plan_reduction(x, axes);
  Tensor out = Tensor::empty(os, od);
  visit(in, "reduce", [&](auto t) { reduce_typed<decltype(t)>(op, p, out); });
  return out;
}

// ---------------------------------------------------------------- cumsum

Tensor cumsum(const Tensor& x, int axis, bool reverse) {
  if (is_half(x.dtype()))
    return from_f32(cumsum(to_f32(x), axis, reverse), x.dtype());
  if (x.dtype() == DType::Bool)
    return cumsum(cast(x, DType::I64), axis, reverse);
  Tensor out = Tensor::empty(x.shape(), x.dtype());
  if (x.numel() == 0) return out;
  AxisSplit s = split_at(x.shape(), axis);
  visit(x.dtype(), "cumsum", [&](auto t) {
    using T = decltype(t);
    if constexpr (!std::is_same_v<T, bool>) {
      const T* px = x.data<T>();
      T* po = out.data<T>();
      std::vector<Cell<T>> acc(s.inner);
      for (int64_t o = 0; o < s.outer; ++o) {
        std::fill(acc.begin(), acc.end(), T(0));
        for (int64_t jj = 0; jj < s.n; ++jj) {
          int64_t j = reverse ? s.n - 1 - jj : jj;
          int64_t base = (o * s.n + j) * s.inner;
          for (int64_t i = 0; i < s.inner; ++i) {
            acc[i] += px[base + i];
            po[base + i] = acc[i];
          }
        }
      }
    }
  });
  return out;
}

// ---------------------------------------------------------------- sort

std::pair<Tensor, Tensor> sort(const Tensor& x, int axis, bool descending) {
  // Indices from the (widened) values; the values themselves are then
  // gathered bytewise from [x], so halves stay bit-exact.
  Tensor key = to_f32(x);
  Tensor idx = Tensor::empty(x.shape(), DType::I64);
  Tensor vals = Tensor::empty(x.shape(), x.dtype());
  if (x.numel() == 0) return {vals, idx};
  AxisSplit s = split_at(x.shape(), axis);
  int64_t* pi = idx.data<int64_t>();
  visit(key.dtype(), "sort", [&](auto t) {
    using T = decltype(t);
    const T* pk = key.data<T>();
    std::vector<int64_t> order(s.n);
    for (int64_t o = 0; o < s.outer; ++o)
      for (int64_t i = 0; i < s.inner; ++i) {
        const T* col = pk + o * s.n * s.inner + i;
        auto at = [&](int64_t j) { return col[j * s.inner]; };
        std::iota(order.begin(), order.end(), 0);
        // NaN sorts as the largest value (torch): last ascending, first
        // descending.
        if (descending)
          std::stable_sort(
              order.begin(), order.end(), [&](int64_t p, int64_t q) {
                T a = at(p), b = at(q);
                return b == b && (a != a || a > b);
              });
        else
          std::stable_sort(
              order.begin(), order.end(), [&](int64_t p, int64_t q) {
                T a = at(p), b = at(q);
                return a == a && (b != b || a < b);
              });
        for (int64_t j = 0; j < s.n; ++j)
          pi[(o * s.n + j) * s.inner + i] = order[j];
      }
  });
  visit_bytes(x.dtype(), [&](auto t) {
    using B = decltype(t);
    const B* px = x.data<B>();
    B* pv = vals.data<B>();
    for (int64_t o = 0; o < s.outer; ++o)
      for (int64_t j = 0; j < s.n; ++j)
        for (int64_t i = 0; i < s.inner; ++i) {
          int64_t at = (o * s.n + j) * s.inner + i;
          pv[at] = px[(o * s.n + pi[at]) * s.inner + i];
        }
  });
  return {vals, idx};
}

}  // namespace ss::ops::cpu
