// Indexing on the GPU: take / take_add (embedding and its transpose) and
// gather / scatter_add (take_along_axis and its transpose), the twins of
// ops/cpu/cpu_index.cpp. Indices may be i64 or i32. Callers check them on
// the host, but a kernel never reads or writes out of bounds on a bad one:
// it skips it and raises kIndexOutOfRange in the device error word (Note
// [Errors found on the device] in cuda_memory.cu).
//
// Note [Deterministic index sums]
// take_add and scatter_add add many values into one element. Float
// atomics would add them in whatever order the threads arrive, so the
// bits would change from run to run; instead each output element is
// summed by one thread, in the CPU's order (increasing position in the
// index tensor, from 0), so the results are the CPU's bit for bit.
// take_add first sorts (index value, position) pairs (cuda::sort, stable),
// so the positions hitting output slice k are one run in increasing order,
// found by binary search: one thread per output element, work
// proportional to the hits. scatter_add's hits on an output column
// (every coordinate but the axis fixed) come only from the same column of
// the indices, so one thread walks each index column in order and owns
// its output column: no two threads write one element. (A single column
// of very many indices is then one thread's serial loop: fine for
// take_along_axis's uses, a sort's VJP or a label's pick.)

#include <cuda_runtime.h>

#include <algorithm>
#include <type_traits>

#include "ops/backend/primitive_checks.h"
#include "ops/cuda/cuda_common.cuh"

namespace ss::ops::cuda {

namespace {

unsigned blocks_for(int64_t n) {
  int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(std::clamp<int64_t>(b, 1, 65536));
}

#define SS_GRID_STRIDE(u, n)                                            \
  for (int64_t u =                                                      \
           blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; \
       u < (n);                                                         \
       u += static_cast<int64_t>(gridDim.x) * blockDim.x)

Tensor as_i64(const Tensor& idx, const char* op) {
  return backend::index_as_i64(idx, kBackend, op, &cast);
}

/// cpu_index.cpp's add_into: bools add as "or".
template <class T>
__device__ __forceinline__ T add(T a, T b) {
  if constexpr (std::is_same_v<T, bool>)
    return a || b;
  else
    return a + b;
}

__device__ __forceinline__ bool in_range(int64_t k, int64_t n) {
  return k >= 0 && k < n;
}

__device__ __forceinline__ void out_of_range(unsigned* err) {
  atomicOr(err, static_cast<unsigned>(kIndexOutOfRange));
}

std::vector<int64_t> strides_without(const Shape& shape, int axis) {
  std::vector<int64_t> s = contiguous_strides(shape);
  s[axis] = 0;
  return s;
}

/// Each axis of [idx] but [axis] at most [shape]'s (torch's rule for
/// take_along_axis and scatter_add): otherwise the walk leaves the tensor.
void check_fits(const Shape& idx,
                const Shape& shape,
                int axis,
                const char* op) {
  if (idx.size() != shape.size()) fail(op, "idx must have x's rank");
  for (size_t d = 0; d < idx.size(); ++d)
    if (static_cast<int>(d) != axis && idx[d] > shape[d])
      fail(op, "idx is larger than x off the axis");
}

template <class B>
__global__ void take_kernel(const B* x,
                            const int64_t* idx,
                            B* y,
                            int64_t total,
                            int64_t ni,
                            int64_t n,
                            int64_t inner,
                            unsigned* err) {
  SS_GRID_STRIDE(u, total) {
    const int64_t o = u / (ni * inner), rest = u % (ni * inner);
    const int64_t t = rest / inner, i = rest % inner;
    const int64_t k = idx[t];
    if (!in_range(k, n)) {
      out_of_range(err);
      y[u] = B(0);
      continue;
    }
    y[u] = x[(o * n + k) * inner + i];
  }
}

__global__ void check_kernel(const int64_t* idx,
                             int64_t count,
                             int64_t n,
                             unsigned* err) {
  SS_GRID_STRIDE(t, count) {
    if (!in_range(idx[t], n)) out_of_range(err);
  }
}

/// The first of [count] sorted keys not below [k].
__device__ __forceinline__ int64_t lower_bound(const int64_t* keys,
                                               int64_t count,
                                               int64_t k) {
  int64_t lo = 0, hi = count;
  while (lo < hi) {
    int64_t m = lo + (hi - lo) / 2;
    if (keys[m] < k)
      lo = m + 1;
    else
      hi = m;
  }
  return lo;
}

/// Output element (o, k, i) of take_add: v's slices at the positions
/// [pos] whose sorted index values [keys] equal k, in position order
/// (Note [Deterministic index sums]).
template <class T>
__global__ void take_add_kernel(const T* v,
                                const int64_t* keys,
                                const int64_t* pos,
                                T* y,
                                int64_t total,
                                int64_t ni,
                                int64_t n,
                                int64_t inner) {
  SS_GRID_STRIDE(u, total) {
    const int64_t o = u / (n * inner), rest = u % (n * inner);
    const int64_t k = rest / inner, i = rest % inner;
    const int64_t lo = lower_bound(keys, ni, k),
                  hi = lower_bound(keys, ni, k + 1);
    T acc = T(0);
    for (int64_t p = lo; p < hi; ++p)
      acc = add(acc, v[(o * ni + pos[p]) * inner + i]);
    y[u] = acc;
  }
}

template <class B>
__global__ void gather_kernel(const B* x,
                              const int64_t* idx,
                              B* y,
                              int64_t total,
                              StridedWalk<1> walk,
                              int64_t axis_stride,
                              int64_t n,
                              unsigned* err) {
  SS_GRID_STRIDE(u, total) {
    int64_t off[1];
    walk.offsets(u, off);
    const int64_t k = idx[u];
    if (!in_range(k, n)) {
      out_of_range(err);
      y[u] = B(0);
      continue;
    }
    y[u] = x[off[0] + k * axis_stride];
  }
}

/// One thread per index column: its [m] indices in order, each adding its
/// value into the thread's own output column (Note [Deterministic index
/// sums]). walk's operand 0 is the output, 1 the indices and values.
template <class T>
__global__ void scatter_add_kernel(const int64_t* idx,
                                   const T* v,
                                   T* y,
                                   int64_t columns,
                                   StridedWalk<2> walk,
                                   int64_t m,
                                   int64_t idx_axis_stride,
                                   int64_t out_axis_stride,
                                   int64_t n,
                                   unsigned* err) {
  SS_GRID_STRIDE(c, columns) {
    int64_t off[2];
    walk.offsets(c, off);
    for (int64_t a = 0; a < m; ++a) {
      const int64_t e = off[1] + a * idx_axis_stride;
      const int64_t k = idx[e];
      if (!in_range(k, n)) {
        out_of_range(err);
        continue;
      }
      T& d = y[off[0] + k * out_axis_stride];
      d = add(d, v[e]);
    }
  }
}

}  // namespace

Tensor take(const Tensor& x, const Tensor& idx_in, int axis) {
  Tensor idx = as_i64(idx_in, "take");
  const Shape& xs = x.shape();
  Shape os(xs.begin(), xs.begin() + axis);
  os.insert(os.end(), idx.shape().begin(), idx.shape().end());
  os.insert(os.end(), xs.begin() + axis + 1, xs.end());
  Tensor out = empty(os, x.dtype());
  const int64_t total = out.numel();
  if (total == 0) return out;
  int64_t inner = 1;
  for (size_t d = axis + 1; d < xs.size(); ++d) inner *= xs[d];
  visit_bytes(x.dtype(), [&](auto tag) {
    using B = decltype(tag);
    take_kernel<B>
        <<<blocks_for(total), kThreads, 0, stream()>>>(ptr<B>(x),
                                                       ptr<int64_t>(idx),
                                                       ptr<B>(out),
                                                       total,
                                                       idx.numel(),
                                                       xs[axis],
                                                       inner,
                                                       device_error_word());
  });
  after_launch("take");
  return out;
}

Tensor take_add(const Tensor& v, const Tensor& idx_in, int axis, int64_t n) {
  if (is_half(v.dtype()))
    return from_f32(take_add(to_f32(v), idx_in, axis, n), v.dtype());
  Tensor idx = as_i64(idx_in, "take_add");
  const size_t ir = idx.rank();
  const Shape& vs = v.shape();
  Shape os(vs.begin(), vs.begin() + axis);
  os.push_back(n);
  os.insert(os.end(), vs.begin() + axis + ir, vs.end());
  if (v.numel() == 0) return zeros(os, v.dtype());
  const int64_t ni = idx.numel();
  int64_t inner = 1;
  for (size_t d = axis + 1; d < os.size(); ++d) inner *= os[d];
  check_kernel<<<blocks_for(ni), kThreads, 0, stream()>>>(
      ptr<int64_t>(idx), ni, n, device_error_word());
  after_launch("take_add");
  // Positions grouped by index value, each group in position order.
  auto [keys, pos] = sort(idx.reshape({ni}), 0, false);
  Tensor out = empty(os, v.dtype());
  const int64_t total = out.numel();
  if (total == 0) return out;
  visit(v.dtype(), "take_add", [&](auto tag) {
    using T = decltype(tag);
    take_add_kernel<T>
        <<<blocks_for(total), kThreads, 0, stream()>>>(ptr<T>(v),
                                                       ptr<int64_t>(keys),
                                                       ptr<int64_t>(pos),
                                                       ptr<T>(out),
                                                       total,
                                                       ni,
                                                       n,
                                                       inner);
  });
  after_launch("take_add");
  return out;
}

Tensor gather(const Tensor& x, const Tensor& idx_in, int axis) {
  Tensor idx = as_i64(idx_in, "gather");
  check_fits(idx.shape(), x.shape(), axis, "gather");
  Tensor out = empty(idx.shape(), x.dtype());
  const int64_t total = out.numel();
  if (total == 0) return out;
  StridedWalk<1> walk =
      make_walk<1>(idx.shape(), {strides_without(x.shape(), axis)}, "gather");
  const int64_t axis_stride = contiguous_strides(x.shape())[axis];
  visit_bytes(x.dtype(), [&](auto tag) {
    using B = decltype(tag);
    gather_kernel<B>
        <<<blocks_for(total), kThreads, 0, stream()>>>(ptr<B>(x),
                                                       ptr<int64_t>(idx),
                                                       ptr<B>(out),
                                                       total,
                                                       walk,
                                                       axis_stride,
                                                       x.shape()[axis],
                                                       device_error_word());
  });
  after_launch("gather");
  return out;
}

Tensor scatter_add(const Shape& shape,
                   const Tensor& idx_in,
                   const Tensor& v,
                   int axis) {
  if (is_half(v.dtype()))
    return from_f32(scatter_add(shape, idx_in, to_f32(v), axis), v.dtype());
  Tensor idx = as_i64(idx_in, "scatter_add");
  backend::check_scatter_add_operands(idx, v, kBackend);
  check_fits(idx.shape(), shape, axis, "scatter_add");
  Tensor out = zeros(shape, v.dtype());
  if (v.numel() == 0) return out;
  // The index columns: idx's shape with the axis walked by the thread.
  Shape cols = idx.shape();
  const int64_t m = cols[axis];
  cols[axis] = 1;
  const int64_t columns = numel_of(cols);
  StridedWalk<2> walk =
      make_walk<2>(cols,
                   {contiguous_strides(shape), contiguous_strides(idx.shape())},
                   "scatter_add");
  const int64_t idx_axis_stride = contiguous_strides(idx.shape())[axis];
  const int64_t out_axis_stride = contiguous_strides(shape)[axis];
  visit(v.dtype(), "scatter_add", [&](auto tag) {
    using T = decltype(tag);
    scatter_add_kernel<T>
        <<<blocks_for(columns), kThreads, 0, stream()>>>(ptr<int64_t>(idx),
                                                         ptr<T>(v),
                                                         ptr<T>(out),
                                                         columns,
                                                         walk,
                                                         m,
                                                         idx_axis_stride,
                                                         out_axis_stride,
                                                         shape[axis],
                                                         device_error_word());
  });
  after_launch("scatter_add");
  return out;
}

void flag_if(const Tensor& flag, unsigned code) {
  const Tensor f = flag.dtype() == DType::Bool ? flag : cast(flag, DType::Bool);
  const bool* pf = ptr<bool>(f);
  unsigned* err = device_error_word();
  for_each(1, "flag_if", [=] __device__(int64_t) {
    if (*pf) atomicOr(err, code);
  });
}

}  // namespace ss::ops::cuda
