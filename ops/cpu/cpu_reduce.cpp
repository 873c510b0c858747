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

/// Folds [outer, r, inner] with [op]: RowAcc for rows, ColAcc for columns.
template <class T, class RowAcc, class ColAcc, class Op>
void fold(const T* x, T* y, const Plan& p, double init, Op op) {
  if (p.inner == 1) {
    for (int64_t o = 0; o < p.outer; ++o) {
      const T* row = x + o * p.r;
      RowAcc a0 = static_cast<RowAcc>(init), a1 = a0, a2 = a0, a3 = a0;
      int64_t j = 0;
      for (; j + 4 <= p.r; j += 4) {
        a0 = op(a0, static_cast<RowAcc>(row[j]));
        a1 = op(a1, static_cast<RowAcc>(row[j + 1]));
        a2 = op(a2, static_cast<RowAcc>(row[j + 2]));
        a3 = op(a3, static_cast<RowAcc>(row[j + 3]));
      }
      for (; j < p.r; ++j) a0 = op(a0, static_cast<RowAcc>(row[j]));
      y[o] = static_cast<T>(op(op(a0, a1), op(a2, a3)));
    }
    return;
  }
  std::vector<Cell<ColAcc>> acc(p.inner);
  for (int64_t o = 0; o < p.outer; ++o) {
    std::fill(acc.begin(), acc.end(), static_cast<ColAcc>(init));
    Cell<ColAcc>* a = acc.data();
    for (int64_t j = 0; j < p.r; ++j) {
      const T* row = x + (o * p.r + j) * p.inner;
      for (int64_t i = 0; i < p.inner; ++i)
        a[i] = op(static_cast<ColAcc>(a[i]), static_cast<ColAcc>(row[i]));
    }
    T* out = y + o * p.inner;
    for (int64_t i = 0; i < p.inner; ++i) out[i] = static_cast<T>(a[i]);
  }
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
