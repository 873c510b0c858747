// The reference: shape ops (concat, stack, take, put, roll, pad, reshape,
// to), the makers (zeros ... causal, tensor) and the random draws.

#include <cmath>
#include <stdexcept>
#include <string>

#include "ops/core/philox.h"
#include "ref/ref_ops.h"

namespace ss::ref {

using namespace detail;

namespace {

int64_t wrap(int64_t i, int64_t n) {
  if (i < -n || i >= n)
    throw std::out_of_range("ref: index " + std::to_string(i) +
                            " for an axis of size " + std::to_string(n));
  return i < 0 ? i + n : i;
}

}  // namespace

// ---------------------------------------------------------------- shape

Tensor concat(const std::vector<Tensor>& xs, int axis) {
  if (xs.empty()) throw std::invalid_argument("ref: concat of nothing");
  int a = norm_axis(axis, xs[0].rank());
  Shape out = xs[0].shape();
  out[a] = 0;
  DType d = xs[0].dtype();
  for (const Tensor& t : xs) {
    out[a] += t.shape()[a];
    d = types::promote(d, t.dtype());
  }
  std::vector<double> r(ops::numel_of(out));
  int64_t start = 0;  // where this piece begins along a
  for (const Tensor& t : xs) {
    std::vector<double> v = t.to_doubles();
    for (int64_t i = 0; i < static_cast<int64_t>(v.size()); ++i) {
      std::vector<int64_t> p = unravel(i, t.shape());
      p[a] += start;
      r[ravel(p, out)] = v[i];
    }
    start += t.shape()[a];
  }
  return Tensor::from_doubles(out, r, d);
}

Tensor stack(const std::vector<Tensor>& xs, int axis) {
  if (xs.empty()) throw std::invalid_argument("ref: stack of nothing");
  const Shape& s = xs[0].shape();
  int a = norm_axis(axis, s.size() + 1);
  Shape out = s;
  out.insert(out.begin() + a, static_cast<int64_t>(xs.size()));
  DType d = xs[0].dtype();
  for (const Tensor& t : xs) {
    if (t.shape() != s) throw std::invalid_argument("ref: stack of unequal");
    d = types::promote(d, t.dtype());
  }
  std::vector<double> r(ops::numel_of(out));
  for (size_t k = 0; k < xs.size(); ++k) {
    std::vector<double> v = xs[k].to_doubles();
    for (int64_t i = 0; i < static_cast<int64_t>(v.size()); ++i) {
      std::vector<int64_t> p = unravel(i, s);
      p.insert(p.begin() + a, static_cast<int64_t>(k));
      r[ravel(p, out)] = v[i];
    }
  }
  return Tensor::from_doubles(out, r, d);
}

Tensor take(const Tensor& x, int64_t i, int axis) {
  int a = norm_axis(axis, x.rank());
  int64_t j = wrap(i, x.shape()[a]);
  Shape out = x.shape();
  out.erase(out.begin() + a);
  std::vector<double> v = x.to_doubles(), r(ops::numel_of(out));
  for (int64_t o = 0; o < static_cast<int64_t>(r.size()); ++o) {
    std::vector<int64_t> p = unravel(o, out);
    p.insert(p.begin() + a, j);
    r[o] = v[ravel(p, x.shape())];
  }
  return Tensor::from_doubles(out, r, x.dtype());
}

namespace {

// x's shape with [axis] replaced by [idx]'s axes.
Shape with_index_axes(const Shape& s, int a, const Shape& idx) {
  Shape out(s.begin(), s.begin() + a);
  out.insert(out.end(), idx.begin(), idx.end());
  out.insert(out.end(), s.begin() + a + 1, s.end());
  return out;
}

// For an element of the with_index_axes shape: x's multi-index, with the
// index axes [a, a + k) replaced by the index value found there.
std::vector<int64_t> source_index(const std::vector<int64_t>& p,
                                  int a,
                                  const Tensor& idx,
                                  const std::vector<double>& iv,
                                  int64_t n) {
  size_t k = idx.rank();
  std::vector<int64_t> ip(p.begin() + a, p.begin() + a + k);
  int64_t j = wrap(static_cast<int64_t>(iv[ravel(ip, idx.shape())]), n);
  std::vector<int64_t> q(p.begin(), p.begin() + a);
  q.push_back(j);
  q.insert(q.end(), p.begin() + a + k, p.end());
  return q;
}

}  // namespace

Tensor take(const Tensor& x, const Tensor& idx, int axis) {
  int a = norm_axis(axis, x.rank());
  Shape out = with_index_axes(x.shape(), a, idx.shape());
  std::vector<double> v = x.to_doubles(), iv = idx.to_doubles();
  std::vector<double> r(ops::numel_of(out));
  for (int64_t o = 0; o < static_cast<int64_t>(r.size()); ++o) {
    auto q = source_index(unravel(o, out), a, idx, iv, x.shape()[a]);
    r[o] = v[ravel(q, x.shape())];
  }
  return Tensor::from_doubles(out, r, x.dtype());
}

Tensor put(const Tensor& x, int64_t i, const Tensor& v, int axis) {
  int a = norm_axis(axis, x.rank());
  int64_t j = wrap(i, x.shape()[a]);
  Shape slice = x.shape();
  slice.erase(slice.begin() + a);
  if (broadcast_shape(slice, v.shape()) != slice)
    throw std::invalid_argument("ref: put's value does not fit the slice");
  std::vector<double> r = x.to_doubles(), vv = v.to_doubles();
  for (int64_t o = 0; o < ops::numel_of(slice); ++o) {
    std::vector<int64_t> p = unravel(o, slice);
    double value = vv[broadcast_index(p, slice, v.shape())];
    p.insert(p.begin() + a, j);
    r[ravel(p, x.shape())] = value;
  }
  return Tensor::from_doubles(x.shape(), r, x.dtype());
}

Tensor put(const Tensor& x, const Tensor& idx, const Tensor& v, int axis) {
  int a = norm_axis(axis, x.rank());
  Shape slice = with_index_axes(x.shape(), a, idx.shape());
  if (broadcast_shape(slice, v.shape()) != slice)
    throw std::invalid_argument("ref: put's value does not fit the slices");
  std::vector<double> r = x.to_doubles(), vv = v.to_doubles(),
                      iv = idx.to_doubles();
  for (int64_t o = 0; o < ops::numel_of(slice); ++o) {
    std::vector<int64_t> p = unravel(o, slice);
    auto q = source_index(p, a, idx, iv, x.shape()[a]);
    r[ravel(q, x.shape())] = vv[broadcast_index(p, slice, v.shape())];
  }
  return Tensor::from_doubles(x.shape(), r, x.dtype());
}

Tensor roll(const Tensor& x, int64_t k, int axis) {
  int a = norm_axis(axis, x.rank());
  int64_t n = x.shape()[a];
  std::vector<double> v = x.to_doubles(), r(v.size());
  // k mod n first: p + k overflows for k near 2^63 (the runtime fuzzer's).
  const int64_t shift = n ? (k % n + n) % n : 0;
  for (int64_t i = 0; i < static_cast<int64_t>(v.size()); ++i) {
    std::vector<int64_t> p = unravel(i, x.shape());
    p[a] = (p[a] + shift) % n;
    r[ravel(p, x.shape())] = v[i];
  }
  return Tensor::from_doubles(x.shape(), r, x.dtype());
}

Tensor pad(const Tensor& x, int axis, int64_t to, double value) {
  int a = norm_axis(axis, x.rank());
  if (to < x.shape()[a]) throw std::invalid_argument("ref: pad to smaller");
  Shape out = x.shape();
  out[a] = to;
  std::vector<double> v = x.to_doubles(), r(ops::numel_of(out), value);
  for (int64_t i = 0; i < static_cast<int64_t>(v.size()); ++i)
    r[ravel(unravel(i, x.shape()), out)] = v[i];
  return Tensor::from_doubles(out, r, x.dtype());
}

Tensor reshape(const Tensor& x, const Shape& shape) {
  if (ops::numel_of(shape) != x.numel())
    throw std::invalid_argument("ref: reshape changes the element count");
  return Tensor::from_doubles(shape, x.to_doubles(), x.dtype());
}

Tensor to(const Tensor& x, DType dtype) {
  std::vector<double> v = x.to_doubles();
  if (types::is_int(dtype))
    for (double& e : v) e = std::trunc(e);
  return Tensor::from_doubles(x.shape(), v, dtype);
}

// ---------------------------------------------------------------- make

Tensor full(const Shape& shape, double v, DType dtype) {
  return Tensor::from_doubles(
      shape, std::vector<double>(ops::numel_of(shape), v), dtype);
}
Tensor zeros(const Shape& shape, DType dtype) {
  return full(shape, 0, dtype);
}
Tensor ones(const Shape& shape, DType dtype) {
  return full(shape, 1, dtype);
}
Tensor zeros_like(const Tensor& x) {
  return full(x.shape(), 0, x.dtype());
}
Tensor ones_like(const Tensor& x) {
  return full(x.shape(), 1, x.dtype());
}

Tensor arange(int64_t n) {
  std::vector<double> r(n);
  for (int64_t i = 0; i < n; ++i) r[i] = static_cast<double>(i);
  return Tensor::from_doubles({n}, r, DType::I64);
}

Tensor causal(int64_t n, int64_t m) {
  std::vector<double> r(n * m);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < m; ++j) r[i * m + j] = j <= i ? 1.0 : 0.0;
  return Tensor::from_doubles({n, m}, r, DType::Bool);
}

Tensor tensor(const std::vector<Tensor>& items, DType dtype) {
  if (items.empty()) return zeros({0}, dtype);
  return to(stack(items, 0), dtype);
}

// ---------------------------------------------------------------- random

Tensor rand(const Shape& shape,
            DType dtype,
            uint64_t key,
            uint64_t stream,
            uint64_t offset) {
  std::vector<double> r(ops::numel_of(shape));
  for (size_t i = 0; i < r.size(); ++i) {
    auto b = ops::philox::draw(key, offset + i, stream);
    r[i] = std::ldexp(static_cast<double>(b[0] >> 8), -24);
  }
  return Tensor::from_doubles(shape, r, dtype);
}

Tensor randn(const Shape& shape,
             DType dtype,
             uint64_t key,
             uint64_t stream,
             uint64_t offset) {
  std::vector<double> r(ops::numel_of(shape));
  for (size_t i = 0; i < r.size(); ++i) {
    auto b = ops::philox::draw(key, offset + i, stream);
    double u1 = (static_cast<double>(b[0]) + 1.0) / 4294967296.0;
    double u2 = static_cast<double>(b[1]) / 4294967296.0;
    r[i] = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
  }
  return Tensor::from_doubles(shape, r, dtype);
}

}  // namespace ss::ref
