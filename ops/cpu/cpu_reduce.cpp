// Reductions, cumsum and sort.
//
// A reduction first merges adjacent axes that are all reduced or all kept
// (size-1 axes are layout-neutral and dropped), which turns every common
// case into [outer, r, inner] over the contiguous buffer: the last axis of
// [64 10] is (64, 10, 1), the batch axis of [64 256] is (1, 64, 256). Rows
// (inner == 1) fold with four independent accumulators; columns
// (inner > 1) fold whole rows into an accumulator row, which vectorises.
// Interleaved patterns (reduce axes 0 and 2 of [a b c d]) are permuted to
// [kept.., reduced..] first. The plan, the folds' order and the chunks are
// ops/core/fold_order.h's, which the CUDA kernels follow too (Note [One
// fold order for every backend]).

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <type_traits>

#include "ops/backend/primitive_checks.h"
#include "ops/core/fold_order.h"
#include "ops/cpu/cpu_common.h"

namespace ss::ops::cpu {

namespace {

/// A vector element type for X (std::vector<bool> has no data()).
template <class X>
using Cell = std::conditional_t<std::is_same_v<X, bool>, uint8_t, X>;

namespace fo = fold_order;

struct Plan : fo::Plan {
  Tensor x;  // the input, permuted when the pattern needed it
};

Plan plan_reduction(const Tensor& x, const std::vector<int>& axes) {
  Plan p;
  static_cast<fo::Plan&>(p) = fo::plan(x.shape(), axes);
  p.x = p.permute ? permute(x, fo::kept_then_reduced(x.rank(), axes)) : x;
  return p;
}

// Note [Reductions on threads]
// A reduction splits over threads (Note [Intra-op threads]) without its
// results depending on the thread count. Rows (inner == 1) and columns
// (inner > 1) split by output element, each folded in the same order
// whoever folds it. One long row (a tensor summed to one value) and
// columns of few outputs over many rows (a bias's gradient) split their
// reduced axis instead, into chunks of a fixed length (fo::kFoldChunk
// elements, or as many rows as hold that many): each chunk folds into its
// own partial, and the partials are folded in chunk order on the caller,
// so the sums are the same on 1 thread or many (and differ, by rounding,
// from one unchunked fold). Only reductions of at least two chunks are
// chunked. The chunks (fo::row_chunks, fo::col_chunks) and the order
// within them are ops/core/fold_order.h's: the GPU's grid does not change
// them either (Note [One fold order for every backend]).
using fo::start_value;

/// Folds [outer, r, inner] with [op]: RowAcc for rows, ColAcc for columns.
template <class T, class RowAcc, class ColAcc, class Op>
void fold(const T* x, T* y, const Plan& p, double init, Op op) {
  const int64_t outer = p.outer, r = p.r, inner = p.inner;
  if (inner == 1) {
    auto row_fold = [&](const T* row, int64_t n) {
      return fo::row_fold<RowAcc>(row, n, start_value<RowAcc>(init), op);
    };
    if (int64_t chunks = fo::row_chunks(p)) {  // one long row, by chunks
      std::vector<Cell<RowAcc>> part(chunks);
      parallel_for(chunks, 2, [&](int64_t b, int64_t e) {
        for (int64_t c = b; c < e; ++c)
          part[c] =
              row_fold(x + fo::row_chunk_begin(c), fo::row_chunk_len(r, c));
      });
      y[0] = static_cast<T>(
          fo::combine_chunks<RowAcc>(part.data(), chunks, 1, op));
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
  // [acc], which the caller filled with init: fo::col_fold's order for
  // each output, a row at a time so that it vectorises.
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
  constexpr int64_t kBlock = fo::kColBlock;  // outputs a thread folds at a time
  int64_t blocks = (inner + kBlock - 1) / kBlock;
  int64_t row_chunk = fo::col_row_chunk(inner);
  if (int64_t chunks = fo::col_chunks(p)) {  // few outputs: chunk the rows
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
    for (int64_t i = 0; i < inner; ++i)
      y[i] = static_cast<T>(
          fo::combine_chunks<ColAcc>(part.data() + i, chunks, inner, op));
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

using fo::arg_beats;

template <bool kMax, class T>
void arg_kernel(const T* x, int64_t* y, const Plan& p) {
  if (p.inner == 1) {
    for (int64_t o = 0; o < p.outer; ++o)
      y[o] = fo::arg_fold<kMax>(x + o * p.r, 1, p.r);
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
        if (arg_beats<kMax>(row[i], static_cast<T>(best[i])))
          best[i] = row[i], bi[i] = j;
    }
  }
}

template <class T>
void reduce_typed(ReduceOp op, const Plan& p, Tensor& out) {
  const T* x = p.x.data<T>();
  // Floats sum rows in double (cheap, much more accurate); ints in i64.
  using Wide = fo::RowAcc<T>;
  using Col = fo::ColAcc<T>;
  fo::MaxOp max_op;
  fo::MinOp min_op;
  constexpr double lowest = fo::lowest_of<T>();
  constexpr double highest = fo::highest_of<T>();
  switch (op) {
    case ReduceOp::Sum:
      if constexpr (!std::is_same_v<T, bool>)
        fold<T, Wide, Col>(x, out.data<T>(), p, 0.0, fo::AddOp{});
      return;
    case ReduceOp::Prod:
      if constexpr (!std::is_same_v<T, bool>)
        fold<T, Wide, Col>(x, out.data<T>(), p, 1.0, fo::MulOp{});
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
        fold<bool, bool, bool>(bx, out.data<bool>(), p, 0.0, fo::OrOp{});
      else
        fold<bool, bool, bool>(bx, out.data<bool>(), p, 1.0, fo::AndOp{});
      return;
    }
  }
}

}  // namespace

Tensor reduce(ReduceOp op,
              const Tensor& x,
              const std::vector<int>& axes,
              bool keepdims) {
  backend::check_reduce_axes(op, axes, kBackend);
  DType in = x.dtype();
  if (is_half(in)) {
    Tensor r = reduce(op, to_f32(x), axes, keepdims);
    return r.dtype() == DType::F32 ? from_f32(r, in) : r;
  }
  if (in == DType::Bool && (op == ReduceOp::Sum || op == ReduceOp::Prod))
    return reduce(op, cast(x, DType::I64), axes, keepdims);
  DType od = backend::reduce_dtype(op, in);
  Shape os = backend::reduce_shape(x.shape(), axes, keepdims);
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
        // descending (fold_order::sorts_before, the CUDA sort's order too).
        std::stable_sort(order.begin(), order.end(), [&](int64_t p, int64_t q) {
          return fo::sorts_before(at(p), at(q), descending);
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
