// Data movement: permute, broadcast_to, slice, concat, pad. These only move
// bytes, so they dispatch on the element size (halves need no widening).
// permute walks the output with an odometer; broadcast_to walks the
// output by the input's broadcast strides (Note [Broadcast without
// materialising]); slice, concat and pad copy contiguous runs of [outer, axis,
// inner].

#include <algorithm>
#include <cstring>

#include "ops/backend/primitive_checks.h"
#include "ops/cpu/cpu_common.h"

namespace ss::ops::cpu {

Tensor permute(const Tensor& x, const std::vector<int>& perm) {
  if (perm.size() != x.rank()) fail("permute", "perm length != rank");
  Shape os(perm.size());
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) {
    os[i] = x.shape()[perm[i]];
    identity = identity && perm[i] == static_cast<int>(i);
  }
  if (identity) return x.detach();
  Tensor out = Tensor::empty(os, x.dtype());
  if (out.numel() == 0) return out;
  // A 2-d transpose is the hot case (matmul VJPs): a blocked loop.
  if (x.rank() == 2) {
    int64_t R = x.shape()[0], C = x.shape()[1];
    visit_bytes(x.dtype(), [&](auto t) {
      using B = decltype(t);
      const B* src = x.data<B>();
      B* dst = out.data<B>();
      constexpr int64_t kBlock = 32;
      for (int64_t r0 = 0; r0 < R; r0 += kBlock)
        for (int64_t c0 = 0; c0 < C; c0 += kBlock)
          for (int64_t r = r0; r < std::min(R, r0 + kBlock); ++r)
            for (int64_t c = c0; c < std::min(C, c0 + kBlock); ++c)
              dst[c * R + r] = src[r * C + c];
    });
    return out;
  }
  // N-d: walk the output in order with an odometer over its outer axes;
  // the last output axis is a memcpy when it is the input's last axis too,
  // else a strided copy. (xtensor's generic strided assign was ~10x slower
  // on the batched transposes of attention's rearranges.)
  size_t r = os.size();
  std::vector<int64_t> in_stride(x.rank(), 1);
  for (int i = static_cast<int>(x.rank()) - 2; i >= 0; --i)
    in_stride[i] = in_stride[i + 1] * x.shape()[i + 1];
  std::vector<int64_t> s(r);  // input stride of each output axis
  for (size_t i = 0; i < r; ++i) s[i] = in_stride[perm[i]];
  visit_bytes(x.dtype(), [&](auto t) {
    using B = decltype(t);
    const B* src = x.data<B>();
    B* dst = out.data<B>();
    int64_t inner = os[r - 1], step = s[r - 1];
    int64_t rows = out.numel() / std::max<int64_t>(inner, 1);
    std::vector<int64_t> idx(r - 1, 0);
    int64_t base = 0;
    for (int64_t row = 0; row < rows; ++row) {
      if (step == 1) {
        std::memcpy(dst, src + base, sizeof(B) * inner);
      } else {
        const B* p = src + base;
        for (int64_t j = 0; j < inner; ++j) dst[j] = p[j * step];
      }
      dst += inner;
      for (int k = static_cast<int>(r) - 2; k >= 0; --k) {
        base += s[k];
        if (++idx[k] < os[k]) break;
        base -= s[k] * os[k];
        idx[k] = 0;
      }
    }
  });
  return out;
}

Tensor broadcast_to(const Tensor& x, const Shape& shape) {
  if (x.shape() == shape) return x.detach();
  if (broadcast_shapes(x.shape(), shape, "broadcast_to") != shape)
    fail("broadcast_to",
         "cannot broadcast " + shape_string(x.shape()) + " to " +
             shape_string(shape));
  Tensor out = Tensor::empty(shape, x.dtype());
  if (out.numel() == 0) return out;
  // Note [Broadcast without materialising] (cpu_common.h): the coalesced
  // walk's rows are runs (copied) or one value repeated (filled).
  visit_bytes(x.dtype(), [&](auto t) {
    using B = decltype(t);
    const B* src = x.data<B>();
    B* dst = out.data<B>();
    auto [walk, st] = broadcast_walk<1>(shape, {&x.shape()});
    for_rows<2>(walk, st, [&](auto off, int64_t len, auto in) {
      if (in[1] == 1)
        std::memcpy(dst + off[0], src + off[1], len * sizeof(B));
      else if (in[1] == 0)
        std::fill(dst + off[0], dst + off[0] + len, src[off[1]]);
      else
        for (int64_t i = 0; i < len; ++i)
          dst[off[0] + i] = src[off[1] + i * in[1]];
    });
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
  Tensor out = Tensor::empty(g.out, x.dtype());
  if (out.numel() == 0) return out;
  size_t es = types::dtype_size(x.dtype());
  const char* src = x.data<char>();
  char* dst = out.data<char>();
  size_t run = s.inner * es;
  for (int64_t o = 0; o < s.outer; ++o) {
    if (step == 1) {
      std::memcpy(
          dst + o * len * run, src + (o * s.n + start) * run, len * run);
      continue;
    }
    for (int64_t j = 0; j < len; ++j)
      std::memcpy(dst + (o * len + j) * run,
                  src + (o * s.n + start + j * step) * run,
                  run);
  }
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
  Tensor out = Tensor::empty(os, xs[0].dtype());
  if (out.numel() == 0) return out;
  size_t es = types::dtype_size(out.dtype());
  AxisSplit so = split_at(os, axis);
  char* dst = out.data<char>();
  for (int64_t o = 0; o < so.outer; ++o)
    for (const Tensor& x : xs) {
      size_t run = x.shape()[axis] * so.inner * es;
      std::memcpy(dst, x.data<char>() + o * run, run);
      dst += run;
    }
  return out;
}

Tensor pad(
    const Tensor& x, int axis, int64_t before, int64_t after, double value) {
  if (before < 0 || after < 0) fail("pad", "negative padding");
  Shape os = x.shape();
  os[axis] += before + after;
  Tensor out = Tensor::full(os, value, x.dtype());
  if (x.numel() == 0) return out;
  AxisSplit s = split_at(x.shape(), axis);
  size_t es = types::dtype_size(x.dtype());
  size_t run = s.n * s.inner * es, orow = os[axis] * s.inner * es;
  for (int64_t o = 0; o < s.outer; ++o)
    std::memcpy(out.data<char>() + o * orow + before * s.inner * es,
                x.data<char>() + o * run,
                run);
  return out;
}

}  // namespace ss::ops::cpu
