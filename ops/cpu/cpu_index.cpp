// Indexing: take / take_add (embedding and its transpose) and gather /
// scatter_add (take_along_axis and its transpose). Indices may be i64 or
// i32; they are in range (callers check).

#include <cstring>
#include <type_traits>

#include "ops/backend/primitive_checks.h"
#include "ops/cpu/cpu_common.h"

namespace ss::ops::cpu {

namespace {

Tensor as_i64(const Tensor& idx, const char* op) {
  return backend::index_as_i64(idx, kBackend, op, &cast);
}

template <class T>
inline void add_into(T& d, T s) {
  if constexpr (std::is_same_v<T, bool>)
    d = d || s;
  else
    d += s;
}

/// Strides of [shape] with [axis] set to 0 (the index supplies it).
std::vector<int64_t> strides_without(const Shape& shape, int axis) {
  std::vector<int64_t> s = contiguous_strides(shape);
  s[axis] = 0;
  return s;
}

}  // namespace

Tensor take(const Tensor& x, const Tensor& idx_in, int axis) {
  Tensor idx = as_i64(idx_in, "take");
  AxisSplit s = split_at(x.shape(), axis);
  Shape os(x.shape().begin(), x.shape().begin() + axis);
  os.insert(os.end(), idx.shape().begin(), idx.shape().end());
  os.insert(os.end(), x.shape().begin() + axis + 1, x.shape().end());
  Tensor out = Tensor::empty(os, x.dtype());
  if (out.numel() == 0) return out;
  const int64_t* pi = idx.data<int64_t>();
  int64_t ni = idx.numel();
  size_t es = types::dtype_size(x.dtype());
  size_t run = s.inner * es;
  const char* src = x.data<char>();
  char* dst = out.data<char>();
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t t = 0; t < ni; ++t)
      std::memcpy(dst + (o * ni + t) * run, src + (o * s.n + pi[t]) * run, run);
  return out;
}

Tensor take_add(const Tensor& v, const Tensor& idx_in, int axis, int64_t n) {
  if (is_half(v.dtype()))
    return from_f32(take_add(to_f32(v), idx_in, axis, n), v.dtype());
  Tensor idx = as_i64(idx_in, "take_add");
  size_t ir = idx.rank();
  Shape os(v.shape().begin(), v.shape().begin() + axis);
  os.push_back(n);
  os.insert(os.end(), v.shape().begin() + axis + ir, v.shape().end());
  Tensor out = Tensor::zeros(os, v.dtype());
  if (v.numel() == 0) return out;
  AxisSplit s = split_at(os, axis);
  const int64_t* pi = idx.data<int64_t>();
  int64_t ni = idx.numel();
  visit(v.dtype(), "take_add", [&](auto tag) {
    using T = decltype(tag);
    const T* pv = v.data<T>();
    T* po = out.data<T>();
    for (int64_t o = 0; o < s.outer; ++o)
      for (int64_t t = 0; t < ni; ++t) {
        const T* src = pv + (o * ni + t) * s.inner;
        T* dst = po + (o * n + pi[t]) * s.inner;
        for (int64_t i = 0; i < s.inner; ++i) add_into(dst[i], src[i]);
      }
  });
  return out;
}

Tensor gather(const Tensor& x, const Tensor& idx_in, int axis) {
  Tensor idx = as_i64(idx_in, "gather");
  if (idx.rank() != x.rank()) fail("gather", "idx must have x's rank");
  Tensor out = Tensor::empty(idx.shape(), x.dtype());
  if (out.numel() == 0) return out;
  int64_t axis_stride = contiguous_strides(x.shape())[axis];
  const int64_t* pi = idx.data<int64_t>();
  visit_bytes(x.dtype(), [&](auto tag) {
    using B = decltype(tag);
    const B* px = x.data<B>();
    B* po = out.data<B>();
    std::array<std::vector<int64_t>, 2> st = {strides_without(x.shape(), axis),
                                              contiguous_strides(idx.shape())};
    for_rows<2>(idx.shape(), st, [&](auto off, int64_t len, auto in) {
      for (int64_t t = 0; t < len; ++t) {
        int64_t i = off[1] + t * in[1];
        po[i] = px[off[0] + t * in[0] + pi[i] * axis_stride];
      }
    });
  });
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
  Tensor out = Tensor::zeros(shape, v.dtype());
  if (v.numel() == 0) return out;
  int64_t axis_stride = contiguous_strides(shape)[axis];
  const int64_t* pi = idx.data<int64_t>();
  visit(v.dtype(), "scatter_add", [&](auto tag) {
    using T = decltype(tag);
    const T* pv = v.data<T>();
    T* po = out.data<T>();
    std::array<std::vector<int64_t>, 2> st = {strides_without(shape, axis),
                                              contiguous_strides(idx.shape())};
    for_rows<2>(idx.shape(), st, [&](auto off, int64_t len, auto in) {
      for (int64_t t = 0; t < len; ++t) {
        int64_t i = off[1] + t * in[1];
        add_into(po[off[0] + t * in[0] + pi[i] * axis_stride], pv[i]);
      }
    });
  });
  return out;
}

}  // namespace ss::ops::cpu
