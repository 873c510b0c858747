// Data movement: permute, broadcast_to, slice, concat, pad; the CUDA twin
// of ops/cpu/cpu_shape.cpp. These only move bytes, so they dispatch on the
// element size (visit_bytes: halves need no widening). Each output element
// is one thread's copy from the offset the input's strides give it
// (ops/cuda/cuda_index.h's coalesced walk), except a transpose of the last
// two axes, which goes through shared memory (Note [Tiled transposes]).

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include "ops/backend/primitive_checks.h"
#include "ops/core/broadcast.h"
#include "ops/cuda/cuda_common.cuh"

namespace ss::ops::cuda {

namespace {

// out[i] = x[base + walk's offset of i]: the general strided gather.
template <class B>
void gather_walk(const Tensor& x,
                 Tensor& out,
                 const StridedWalk<1>& w,
                 const char* op,
                 int64_t base = 0) {
  const B* src = ptr<B>(x) + base;
  B* dst = ptr<B>(out);
  for_each(out.numel(), op, [=] __device__(int64_t i) {
    int64_t off[1];
    w.offsets(i, off);
    dst[i] = src[off[0]];
  });
}

// Note [Tiled transposes]
// A permute whose coalesced walk reads the input's contiguous axis as the
// output's second-to-last axis (a transpose of the last two axes, the
// matmul VJPs' and attention's kᵀ, batched or not) would read or write
// with a stride in the one-thread-per-element copy. Instead each block
// stages a 32x32 tile in shared memory: read along the input's rows and
// written along the output's, both coalesced (the +1 column keeps the
// tile's column reads off one bank).
constexpr int kTile = 32;
constexpr int kTileRows = 8;

// Per batch b (the walk [batch]'s offset into x), out[b][p][q] =
// x[b + p + q * sq], out's batches [P Q] contiguous. Grid-stride over the
// tiles and batches, so any size fits the grid's limits.
template <class B>
__global__ void transpose_tiles(const B* x,
                                B* out,
                                int64_t batches,
                                int64_t P,
                                int64_t Q,
                                int64_t sq,
                                StridedWalk<1> batch) {
  __shared__ B tile[kTile][kTile + 1];
  const int64_t tiles_p = (P + kTile - 1) / kTile;
  const int64_t tiles_q = (Q + kTile - 1) / kTile;
  for (int64_t b = blockIdx.z; b < batches; b += gridDim.z) {
    int64_t boff[1];
    batch.offsets(b, boff);
    const B* xb = x + boff[0];
    B* ob = out + b * P * Q;
    for (int64_t tq = blockIdx.y; tq < tiles_q; tq += gridDim.y)
      for (int64_t tp = blockIdx.x; tp < tiles_p; tp += gridDim.x) {
        const int64_t p0 = tp * kTile, q0 = tq * kTile;
        // Read: threadIdx.x along p, the input's contiguous axis.
        for (int k = threadIdx.y; k < kTile; k += kTileRows) {
          int64_t p = p0 + threadIdx.x, q = q0 + k;
          if (p < P && q < Q) tile[k][threadIdx.x] = xb[p + q * sq];
        }
        __syncthreads();
        // Write: threadIdx.x along q, the output's contiguous axis.
        for (int k = threadIdx.y; k < kTile; k += kTileRows) {
          int64_t p = p0 + k, q = q0 + threadIdx.x;
          if (p < P && q < Q) ob[p * Q + q] = tile[threadIdx.x][k];
        }
        __syncthreads();
      }
  }
}

template <class B>
void transpose_run(const Tensor& x, Tensor& out, const StridedWalk<1>& w) {
  const int r = w.rank;
  const int64_t P = w.sizes[r - 2], Q = w.sizes[r - 1];
  const int64_t sq = w.strides[0][r - 1];
  StridedWalk<1> batch;  // the walk's leading axes
  batch.rank = r - 2;
  int64_t batches = 1;
  for (int d = 0; d < r - 2; ++d) {
    batch.sizes[d] = w.sizes[d];
    batch.strides[0][d] = w.strides[0][d];
    batches *= w.sizes[d];
  }
  dim3 grid(
      static_cast<unsigned>(std::min<int64_t>((P + kTile - 1) / kTile, 65535)),
      static_cast<unsigned>(std::min<int64_t>((Q + kTile - 1) / kTile, 65535)),
      static_cast<unsigned>(std::min<int64_t>(batches, 65535)));
  transpose_tiles<B><<<grid, dim3(kTile, kTileRows), 0, stream()>>>(
      ptr<B>(x), ptr<B>(out), batches, P, Q, sq, batch);
  after_launch("permute");
}

template <class B>
void permute_run(const Tensor& x, Tensor& out, const StridedWalk<1>& w) {
  const int r = w.rank;
  if (r >= 2 && w.strides[0][r - 2] == 1 && w.sizes[r - 2] >= kTile / 2 &&
      w.sizes[r - 1] >= kTile / 2)
    transpose_run<B>(x, out, w);
  else
    gather_walk<B>(x, out, w, "permute");
}

// The bits of one element of [dtype] holding [value], converted on the
// host by Tensor::set itself (the CPU's Tensor::full in pad).
template <class B>
B bits_of(double value, DType dtype) {
  Tensor one = Tensor::full({}, value, dtype);
  B b;
  std::memcpy(&b, one.raw(), sizeof(B));
  return b;
}

template <class B>
void concat_one(
    const Tensor& x, Tensor& out, int64_t run, int64_t orow, int64_t at) {
  const B* src = ptr<B>(x);
  B* dst = ptr<B>(out) + at;
  for_each(x.numel(), "concat", [=] __device__(int64_t i) {
    int64_t o = i / run;
    dst[o * orow + (i - o * run)] = src[i];
  });
}

template <class B>
void pad_run(const Tensor& x,
             Tensor& out,
             const AxisSplit& s,
             int64_t before,
             int64_t total,
             B fill) {
  const B* src = ptr<B>(x);
  B* dst = ptr<B>(out);
  const int64_t n = s.n, inner = s.inner;
  for_each(out.numel(), "pad", [=] __device__(int64_t i) {
    int64_t j = i % inner, rest = i / inner;
    int64_t a = rest % total, o = rest / total;
    int64_t k = a - before;
    dst[i] = k >= 0 && k < n ? src[(o * n + k) * inner + j] : fill;
  });
}

}  // namespace

Tensor permute(const Tensor& x, const std::vector<int>& perm) {
  if (perm.size() != x.rank()) fail("permute", "perm length != rank");
  Shape os(perm.size());
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) {
    os[i] = x.shape()[perm[i]];
    identity = identity && perm[i] == static_cast<int>(i);
  }
  if (identity) return x.detach();
  Tensor out = empty(os, x.dtype());
  if (out.numel() == 0) return out;
  std::vector<int64_t> in_stride = contiguous_strides(x.shape());
  std::vector<int64_t> s(perm.size());  // input stride of each output axis
  for (size_t i = 0; i < perm.size(); ++i) s[i] = in_stride[perm[i]];
  const StridedWalk<1> w = make_walk<1>(os, {s}, "permute");
  visit_bytes(x.dtype(), [&](auto t) { permute_run<decltype(t)>(x, out, w); });
  return out;
}

Tensor broadcast_to(const Tensor& x, const Shape& shape) {
  if (x.shape() == shape) return x.detach();
  std::optional<Shape> b = broadcast_sizes(x.shape(), shape);
  if (!b || *b != shape)
    fail("broadcast_to",
         "cannot broadcast " + shape_string(x.shape()) + " to " +
             shape_string(shape));
  Tensor out = empty(shape, x.dtype());
  if (out.numel() == 0) return out;
  // Note [Broadcast without materialising] (ops/cpu/cpu_common.h).
  const StridedWalk<1> w = make_walk<1>(
      shape, {broadcast_strides(x.shape(), shape)}, "broadcast_to");
  visit_bytes(x.dtype(), [&](auto t) {
    gather_walk<decltype(t)>(x, out, w, "broadcast_to");
  });
  return out;
}

Tensor slice(
    const Tensor& x, int axis, int64_t start, int64_t stop, int64_t step) {
  const backend::SliceGeometry g =
      backend::slice_geometry(x.shape(), axis, start, stop, step, kBackend);
  const AxisSplit& s = g.split;
  const int64_t len = g.len;
  start = g.start;
  Tensor out = empty(g.out, x.dtype());
  if (out.numel() == 0) return out;
  // [outer len inner] read at (o * n + start + j * step) * inner + k: the
  // walk merges the runs (all of it when step is 1 and outer is 1).
  const int64_t base = start * s.inner;
  const StridedWalk<1> w = make_walk<1>(
      {s.outer, len, s.inner}, {{s.n * s.inner, step * s.inner, 1}}, "slice");
  visit_bytes(x.dtype(), [&](auto t) {
    gather_walk<decltype(t)>(x, out, w, "slice", base);
  });
  return out;
}

Tensor concat(const std::vector<Tensor>& xs, int axis) {
  if (xs.empty()) fail("concat", "no tensors");
  Shape os = xs[0].shape();
  os[axis] = 0;
  for (const Tensor& x : xs) {
    if (x.dtype() != xs[0].dtype() || x.rank() != os.size())
      fail("concat", "dtypes or ranks differ");
    os[axis] += x.shape()[axis];
  }
  Tensor out = empty(os, xs[0].dtype());
  if (out.numel() == 0) return out;
  AxisSplit so = split_at(os, axis);
  const int64_t orow = so.n * so.inner;  // one outer row of the output
  int64_t at = 0;  // where this input's run starts in each row
  // One launch per input, each copying its [outer, run] block into the
  // output's rows: no host table of pointers to upload.
  for (const Tensor& x : xs) {
    const int64_t run = x.shape()[axis] * so.inner;
    if (run > 0)
      visit_bytes(out.dtype(), [&](auto t) {
        concat_one<decltype(t)>(x, out, run, orow, at);
      });
    at += run;
  }
  return out;
}

Tensor pad(
    const Tensor& x, int axis, int64_t before, int64_t after, double value) {
  if (before < 0 || after < 0) fail("pad", "negative padding");
  Shape os = x.shape();
  os[axis] += before + after;
  Tensor out = empty(os, x.dtype());
  if (out.numel() == 0) return out;
  AxisSplit s = split_at(x.shape(), axis);
  // One pass over the output: each element is x's or the value, so the
  // output is written once (the CPU fills, then copies the runs).
  visit_bytes(x.dtype(), [&](auto t) {
    using B = decltype(t);
    pad_run<B>(x, out, s, before, os[axis], bits_of<B>(value, x.dtype()));
  });
  return out;
}

}  // namespace ss::ops::cuda
