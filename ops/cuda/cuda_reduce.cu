// Reductions, cumsum and sort on the GPU: the twins of ops/cpu/
// cpu_reduce.cpp, giving its bits. A reduction folds in the order of
// ops/core/fold_order.h, which the CPU follows too (Note [One fold order
// for every backend]): the grid only decides which thread runs which
// lane, chunk or column, never the order of the additions, so f32 and
// f64 sums are the CPU's bit for bit on any device.

#include <cuda_runtime.h>

#include <algorithm>
#include <type_traits>

#include "ops/backend/primitive_checks.h"
#include "ops/core/fold_order.h"
#include "ops/cuda/cuda_common.cuh"

namespace ss::ops::cuda {

namespace {

namespace fo = fold_order;

/// Blocks of kThreads for [n] threads of a grid-stride kernel.
unsigned blocks_for(int64_t n) {
  int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(std::clamp<int64_t>(b, 1, 65536));
}

/// The dtype of an accumulator type (for a scratch tensor of partials).
template <class A>
DType dtype_of() {
  if constexpr (std::is_same_v<A, float>)
    return DType::F32;
  else if constexpr (std::is_same_v<A, double>)
    return DType::F64;
  else if constexpr (std::is_same_v<A, int32_t>)
    return DType::I32;
  else if constexpr (std::is_same_v<A, int64_t>)
    return DType::I64;
  else
    return DType::Bool;
}

#define SS_GRID_STRIDE(u, n)                                            \
  for (int64_t u =                                                      \
           blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; \
       u < (n);                                                         \
       u += static_cast<int64_t>(gridDim.x) * blockDim.x)

template <class A>
__device__ A shfl_down(A v, unsigned d) {
  if constexpr (std::is_same_v<A, bool>)
    return __shfl_down_sync(0xffffffffu, static_cast<int>(v), d) != 0;
  else
    return __shfl_down_sync(0xffffffffu, v, d);
}

// Note [Four lanes per row]
// A row folds with four accumulators (fold_order::row_fold); here each
// accumulator is a thread: four adjacent threads of a warp take one row
// (or one chunk of a long row), each folds its lane (fo::row_lane), and
// lane 0 combines them with shuffles in row_fold's order. Four threads
// reading four adjacent elements also make the loads of a row contiguous.
// The grid is not grid-stride here (all 32 lanes of a warp must reach the
// shuffles), one thread per lane: rows * 4 threads.
template <class T, class A, class Op, class Out>
__global__ void row_lanes_kernel(
    const T* x, Out* y, int64_t units, int64_t r, bool chunked, A init, Op op) {
  const int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  const int64_t u = t / 4;
  const int lane = static_cast<int>(t % 4);
  A a = init;
  if (u < units) {
    const T* row = chunked ? x + fo::row_chunk_begin(u) : x + u * r;
    const int64_t n = chunked ? fo::row_chunk_len(r, u) : r;
    a = fo::row_lane(row, n, lane, init, op);
  }
  const A a1 = shfl_down(a, 1), a2 = shfl_down(a, 2), a3 = shfl_down(a, 3);
  if (u < units && lane == 0)
    y[u] = static_cast<Out>(fo::combine_lanes(a, a1, a2, a3, op));
}

/// One thread per output column (o, i), or per (chunk c, column i) with
/// [chunk_rows] > 0: fo::col_fold down its rows. Adjacent threads read
/// adjacent elements of a row.
template <class T, class A, class Op, class Out>
__global__ void col_kernel(const T* x,
                           Out* y,
                           int64_t units,
                           int64_t r,
                           int64_t inner,
                           int64_t chunk_rows,
                           A init,
                           Op op) {
  SS_GRID_STRIDE(u, units) {
    const int64_t o = u / inner, i = u % inner;
    if (chunk_rows == 0) {
      y[u] = static_cast<Out>(
          fo::col_fold(x + o * r * inner + i, inner, 0, r, init, op));
    } else {  // o is the chunk
      const int64_t j0 = o * chunk_rows;
      const int64_t j1 = j0 + chunk_rows < r ? j0 + chunk_rows : r;
      y[u] = static_cast<Out>(fo::col_fold(x + i, inner, j0, j1, init, op));
    }
  }
}

/// The partials of [outputs] outputs ([chunks] each, [outputs] apart, as
/// col_kernel and row_lanes_kernel leave them) combined in chunk order.
template <class T, class A, class Op>
__global__ void combine_kernel(
    const A* part, T* y, int64_t outputs, int64_t chunks, Op op) {
  SS_GRID_STRIDE(i, outputs) {
    y[i] = static_cast<T>(fo::combine_chunks<A>(part + i, chunks, outputs, op));
  }
}

template <bool kMax, class T>
__global__ void arg_kernel(
    const T* x, int64_t* y, int64_t outputs, int64_t r, int64_t inner) {
  SS_GRID_STRIDE(u, outputs) {
    const int64_t o = u / inner, i = u % inner;
    y[u] = fo::arg_fold<kMax>(x + o * r * inner + i, inner, r);
  }
}

/// Folds the planned [outer, r, inner] of [x] into [y]: RA accumulates
/// rows, CA columns (fold_order::RowAcc / ColAcc for sums).
template <class T, class RA, class CA, class Op>
void fold(const T* x, T* y, const fo::Plan& p, double init, Op op) {
  cudaStream_t s = stream();
  if (p.inner == 1) {
    const RA a0 = fo::start_value<RA>(init);
    const int64_t chunks = fo::row_chunks(p);
    const int64_t units = chunks ? chunks : p.outer;
    const unsigned blocks =
        static_cast<unsigned>((units * 4 + kThreads - 1) / kThreads);
    if (!chunks) {
      row_lanes_kernel<T, RA, Op, T>
          <<<blocks, kThreads, 0, s>>>(x, y, units, p.r, false, a0, op);
      after_launch("reduce");
      return;
    }
    Tensor part = empty({chunks}, dtype_of<RA>());
    row_lanes_kernel<T, RA, Op, RA><<<blocks, kThreads, 0, s>>>(
        x, ptr<RA>(part), units, p.r, true, a0, op);
    after_launch("reduce");
    combine_kernel<T, RA, Op><<<1, 1, 0, s>>>(ptr<RA>(part), y, 1, chunks, op);
    after_launch("reduce");
    return;
  }
  const CA a0 = fo::start_value<CA>(init);
  const int64_t chunks = fo::col_chunks(p);
  if (!chunks) {
    const int64_t units = p.outer * p.inner;
    col_kernel<T, CA, Op, T><<<blocks_for(units), kThreads, 0, s>>>(
        x, y, units, p.r, p.inner, 0, a0, op);
    after_launch("reduce");
    return;
  }
  const int64_t units = chunks * p.inner;
  Tensor part = empty({units}, dtype_of<CA>());
  col_kernel<T, CA, Op, CA>
      <<<blocks_for(units), kThreads, 0, s>>>(x,
                                              ptr<CA>(part),
                                              units,
                                              p.r,
                                              p.inner,
                                              fo::col_row_chunk(p.inner),
                                              a0,
                                              op);
  after_launch("reduce");
  combine_kernel<T, CA, Op><<<blocks_for(p.inner), kThreads, 0, s>>>(
      ptr<CA>(part), y, p.inner, chunks, op);
  after_launch("reduce");
}

/// The ops and accumulators of ops/cpu/cpu_reduce.cpp's reduce_typed.
template <class T>
void reduce_typed(ReduceOp op,
                  const Tensor& xt,
                  const fo::Plan& p,
                  Tensor& out) {
  const T* x = ptr<T>(xt);
  if (op == ReduceOp::ArgMax || op == ReduceOp::ArgMin) {
    const int64_t outputs = p.outer * p.inner;
    if (op == ReduceOp::ArgMax)
      arg_kernel<true, T><<<blocks_for(outputs), kThreads, 0, stream()>>>(
          x, ptr<int64_t>(out), outputs, p.r, p.inner);
    else
      arg_kernel<false, T><<<blocks_for(outputs), kThreads, 0, stream()>>>(
          x, ptr<int64_t>(out), outputs, p.r, p.inner);
    after_launch("reduce");
    return;
  }
  T* y = ptr<T>(out);
  if constexpr (std::is_same_v<T, bool>) {
    // Sum and Prod of bool were widened to i64 by the caller.
    switch (op) {
      case ReduceOp::Any:
      case ReduceOp::Max:
        return op == ReduceOp::Any
                   ? fold<T, bool, bool>(x, y, p, 0.0, fo::OrOp{})
                   : fold<T, bool, bool>(x, y, p, 0.0, fo::MaxOp{});
      case ReduceOp::All:
        return fold<T, bool, bool>(x, y, p, 1.0, fo::AndOp{});
      case ReduceOp::Min:
        return fold<T, bool, bool>(x, y, p, 1.0, fo::MinOp{});
      default:
        fail("reduce", "sum/prod of bool reached the bool fold");
    }
  } else {
    using RA = fo::RowAcc<T>;
    using CA = fo::ColAcc<T>;
    switch (op) {
      case ReduceOp::Sum:
        return fold<T, RA, CA>(x, y, p, 0.0, fo::AddOp{});
      case ReduceOp::Prod:
        return fold<T, RA, CA>(x, y, p, 1.0, fo::MulOp{});
      case ReduceOp::Max:
        return fold<T, T, T>(x, y, p, fo::lowest_of<T>(), fo::MaxOp{});
      case ReduceOp::Min:
        return fold<T, T, T>(x, y, p, fo::highest_of<T>(), fo::MinOp{});
      default:
        fail("reduce", "any/all reached a non-bool fold");
    }
  }
}

template <class T>
__global__ void fill_kernel(T* y, int64_t n, T v) {
  SS_GRID_STRIDE(i, n) {
    y[i] = v;
  }
}

/// Ones of [shape] (Prod and All of an empty axis).
Tensor ones(const Shape& shape, DType d) {
  Tensor t = empty(shape, d);
  const int64_t n = t.numel();
  if (n == 0) return t;
  visit(d, "reduce", [&](auto tag) {
    using T = decltype(tag);
    fill_kernel<T>
        <<<blocks_for(n), kThreads, 0, stream()>>>(ptr<T>(t), n, T(1));
  });
  after_launch("reduce");
  return t;
}

// ---------------------------------------------------------------- cumsum

/// One thread per column (o, i), down the axis in the CPU's order: a
/// float prefix sum's bits depend on its order, so it is sequential per
/// column (adjacent threads read adjacent columns).
template <class T>
__global__ void cumsum_kernel(
    const T* x, T* y, int64_t outer, int64_t n, int64_t inner, bool reverse) {
  SS_GRID_STRIDE(u, outer * inner) {
    const int64_t o = u / inner, i = u % inner;
    T acc = T(0);
    for (int64_t jj = 0; jj < n; ++jj) {
      const int64_t j = reverse ? n - 1 - jj : jj;
      const int64_t at = (o * n + j) * inner + i;
      acc += x[at];
      y[at] = acc;
    }
  }
}

// ---------------------------------------------------------------- sort

/// Rows of (key, index) pairs, contiguous per row, from the strided input.
template <class T>
__global__ void sort_load(
    const T* key, T* k, int64_t* ix, int64_t total, int64_t n, int64_t inner) {
  SS_GRID_STRIDE(u, total) {
    const int64_t row = u / n, j = u % n;
    const int64_t o = row / inner, i = row % inner;
    k[u] = key[(o * n + j) * inner + i];
    ix[u] = j;
  }
}

// Note [Sort by merge passes]
// The sort is a bottom-up merge sort of every row at once: pass w merges
// runs of w into runs of 2w, one thread per pair, each finding its place
// by a binary search of the other run (fold_order::merge_target). Sorting
// by (key, index) makes the order total, so the result is the stable
// sort's whatever the algorithm: the CPU's std::stable_sort gives the same
// indices (ops/tests/cuda_logic_reduce_test.cpp runs these passes on the
// host against it). ceil(log2 n) launches, any n, any row count, scratch
// from empty() only.
template <class T>
__global__ void sort_pass(const T* k,
                          const int64_t* ix,
                          T* k2,
                          int64_t* ix2,
                          int64_t total,
                          int64_t n,
                          int64_t w,
                          bool descending) {
  SS_GRID_STRIDE(u, total) {
    const int64_t base = u - u % n;
    const int64_t to =
        base +
        fo::merge_target(k + base, ix + base, n, w, u - base, descending);
    k2[to] = k[u];
    ix2[to] = ix[u];
  }
}

/// The sorted indices back in the input's layout, and the values gathered
/// by them bytewise (halves stay bit-exact, as the CPU's).
template <class B>
__global__ void sort_store(const B* x,
                           const int64_t* ix,
                           B* vals,
                           int64_t* idx,
                           int64_t total,
                           int64_t n,
                           int64_t inner) {
  SS_GRID_STRIDE(u, total) {
    const int64_t row = u / n, j = u % n;
    const int64_t o = row / inner, i = row % inner;
    const int64_t at = (o * n + j) * inner + i;
    idx[at] = ix[u];
    vals[at] = x[(o * n + ix[u]) * inner + i];
  }
}

}  // namespace

Tensor reduce(ReduceOp op,
              const Tensor& x,
              const std::vector<int>& axes,
              bool keepdims) {
  backend::check_reduce_axes(op, axes, kBackend);
  const DType in = x.dtype();
  if (is_half(in)) {
    Tensor r = reduce(op, to_f32(x), axes, keepdims);
    return r.dtype() == DType::F32 ? from_f32(r, in) : r;
  }
  if (in == DType::Bool && (op == ReduceOp::Sum || op == ReduceOp::Prod))
    return reduce(op, cast(x, DType::I64), axes, keepdims);
  const DType od = backend::reduce_dtype(op, in);
  const Shape os = backend::reduce_shape(x.shape(), axes, keepdims);
  if (axes.empty()) {  // a copy, as the CPU's (the result owns its bytes)
    Tensor c = cast(x, od);
    return c.same_storage(x) ? c.clone() : c;
  }
  if (x.numel() == 0) {
    switch (op) {
      case ReduceOp::Sum:
      case ReduceOp::Any:
        return zeros(os, od);
      case ReduceOp::Prod:
      case ReduceOp::All:
        return ones(os, od);
      default:
        if (numel_of(os) == 0) return empty(os, od);
        fail("reduce", "max/min/argmax/argmin of an empty axis");
    }
  }
  Tensor xs = x;
  if (op == ReduceOp::Any || op == ReduceOp::All)
    xs = in == DType::Bool ? x : cast(x, DType::Bool);
  const fo::Plan p = fo::plan(x.shape(), axes);
  if (p.permute) xs = permute(xs, fo::kept_then_reduced(x.rank(), axes));
  Tensor out = empty(os, od);
  visit(xs.dtype(), "reduce", [&](auto t) {
    reduce_typed<decltype(t)>(op, xs, p, out);
  });
  return out;
}

Tensor cumsum(const Tensor& x, int axis, bool reverse) {
  if (is_half(x.dtype()))
    return from_f32(cumsum(to_f32(x), axis, reverse), x.dtype());
  if (x.dtype() == DType::Bool)
    return cumsum(cast(x, DType::I64), axis, reverse);
  Tensor out = empty(x.shape(), x.dtype());
  if (x.numel() == 0) return out;
  const AxisSplit s = split_at(x.shape(), axis);
  visit(x.dtype(), "cumsum", [&](auto t) {
    using T = decltype(t);
    if constexpr (!std::is_same_v<T, bool>) {
      cumsum_kernel<T>
          <<<blocks_for(s.outer * s.inner), kThreads, 0, stream()>>>(
              ptr<T>(x), ptr<T>(out), s.outer, s.n, s.inner, reverse);
      after_launch("cumsum");
    }
  });
  return out;
}

std::pair<Tensor, Tensor> sort(const Tensor& x, int axis, bool descending) {
  // Keys from the (widened) values, as the CPU's; the values themselves
  // are then gathered bytewise from [x].
  Tensor key = to_f32(x);
  Tensor idx = empty(x.shape(), DType::I64);
  Tensor vals = empty(x.shape(), x.dtype());
  const int64_t total = x.numel();
  if (total == 0) return {vals, idx};
  const AxisSplit s = split_at(x.shape(), axis);
  const unsigned blocks = blocks_for(total);
  cudaStream_t st = stream();
  Tensor ix = empty({total}, DType::I64), ix2 = empty({total}, DType::I64);
  visit(key.dtype(), "sort", [&](auto t) {
    using T = decltype(t);
    Tensor k = empty({total}, key.dtype()), k2 = empty({total}, key.dtype());
    sort_load<T><<<blocks, kThreads, 0, st>>>(
        ptr<T>(key), ptr<T>(k), ptr<int64_t>(ix), total, s.n, s.inner);
    after_launch("sort");
    for (int64_t w = 1; w < s.n; w *= 2) {
      sort_pass<T><<<blocks, kThreads, 0, st>>>(ptr<T>(k),
                                                ptr<int64_t>(ix),
                                                ptr<T>(k2),
                                                ptr<int64_t>(ix2),
                                                total,
                                                s.n,
                                                w,
                                                descending);
      after_launch("sort");
      std::swap(k, k2);
      std::swap(ix, ix2);
    }
  });
  visit_bytes(x.dtype(), [&](auto t) {
    using B = decltype(t);
    sort_store<B><<<blocks, kThreads, 0, st>>>(ptr<B>(x),
                                               ptr<int64_t>(ix),
                                               ptr<B>(vals),
                                               ptr<int64_t>(idx),
                                               total,
                                               s.n,
                                               s.inner);
  });
  after_launch("sort");
  return {vals, idx};
}

}  // namespace ss::ops::cuda
