// The reference: shared index helpers, elementwise ops and matmul. The
// other families live in ref_reduce.cpp (reductions, along an axis),
// ref_shape.cpp (shape, make, random) and ref_nn.cpp (nn).

#include "ref/ref_ops.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace ss::ref {

namespace detail {

std::vector<int64_t> strides(const Shape& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (int i = static_cast<int>(shape.size()) - 2; i >= 0; --i)
    s[i] = s[i + 1] * shape[i + 1];
  return s;
}

Shape broadcast_shape(const Shape& a, const Shape& b) {
  size_t r = std::max(a.size(), b.size());
  Shape out(r);
  for (size_t i = 0; i < r; ++i) {
    // Aligned from the right; a missing axis is a 1.
    int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da != db && da != 1 && db != 1)
      throw std::invalid_argument("ref: cannot broadcast " +
                                  ops::shape_string(a) + " with " +
                                  ops::shape_string(b));
    out[i] = da == 1 ? db : da;
  }
  return out;
}

int64_t broadcast_index(const std::vector<int64_t>& idx,
                        const Shape& out,
                        const Shape& in) {
  size_t off = out.size() - in.size();
  int64_t flat = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    int64_t j = in[i] == 1 ? 0 : idx[i + off];
    flat = flat * in[i] + j;
  }
  return flat;
}

std::vector<int64_t> unravel(int64_t flat, const Shape& shape) {
  std::vector<int64_t> idx(shape.size());
  for (int i = static_cast<int>(shape.size()) - 1; i >= 0; --i) {
    idx[i] = shape[i] == 0 ? 0 : flat % shape[i];
    flat = shape[i] == 0 ? 0 : flat / shape[i];
  }
  return idx;
}

int64_t ravel(const std::vector<int64_t>& idx, const Shape& shape) {
  int64_t flat = 0;
  for (size_t i = 0; i < shape.size(); ++i) flat = flat * shape[i] + idx[i];
  return flat;
}

int norm_axis(int axis, size_t rank) {
  int r = static_cast<int>(rank);
  int a = axis < 0 ? axis + r : axis;
  if (a < 0 || a >= r)
    throw std::out_of_range("ref: axis " + std::to_string(axis) +
                            " of a rank " + std::to_string(rank) + " tensor");
  return a;
}

DType float_of(DType d) {
  return types::is_float(d) ? d : DType::F32;
}

DType sum_of(DType d) {
  return types::is_float(d) ? d : DType::I64;
}

}  // namespace detail

using namespace detail;

namespace {

template <class F>
Tensor map1(const Tensor& x, DType out, F f) {
  std::vector<double> v = x.to_doubles();
  for (double& e : v) e = f(e);
  return Tensor::from_doubles(x.shape(), v, out);
}

// Ops that keep an int dtype: bool becomes i64.
DType keep_int(DType d) {
  return d == DType::Bool ? DType::I64 : d;
}

template <class F>
Tensor map2(const Tensor& a, const Tensor& b, DType out, F f) {
  Shape s = broadcast_shape(a.shape(), b.shape());
  std::vector<double> av = a.to_doubles(), bv = b.to_doubles();
  std::vector<double> r(ops::numel_of(s));
  for (int64_t i = 0; i < static_cast<int64_t>(r.size()); ++i) {
    std::vector<int64_t> idx = unravel(i, s);
    r[i] = f(av[broadcast_index(idx, s, a.shape())],
             bv[broadcast_index(idx, s, b.shape())]);
  }
  return Tensor::from_doubles(s, r, out);
}

// [t] in dtype [d], as torch casts each operand of a binary op to the
// result's dtype before the op (torch.result_type): an i64 2^53 + 1 times
// an f16 0 is inf times 0, NaN, not the product of the exact values.
Tensor in_dtype(const Tensor& t, DType d) {
  return t.dtype() == d ? t : to(t, d);
}

// [f] of [ta] and [tb] each in [d], the result in [d].
template <class F>
Tensor in_promoted(const Tensor& ta, const Tensor& tb, DType d, F f) {
  return map2(in_dtype(ta, d), in_dtype(tb, d), d, f);
}

// The dtype of + - * // % ** on two tensors: promotion, bool + bool is i64.
DType arith(const Tensor& a, const Tensor& b) {
  return keep_int(types::promote(a.dtype(), b.dtype()));
}

double sigmoid_of(double v) {
  return 1.0 / (1.0 + std::exp(-v));
}

// Comparisons happen in the promoted dtype: an f64 compared with an f32
// compares the f32's exact value, which to_doubles already gives.
template <class F>
Tensor compare(const Tensor& ta, const Tensor& tb, F f) {
  DType d = types::promote(ta.dtype(), tb.dtype());
  Tensor a = in_dtype(ta, d), b = in_dtype(tb, d);
  return map2(a, b, DType::Bool, [f](double p, double q) {
    return f(p, q) ? 1.0 : 0.0;
  });
}

// Python's %: fmod is exact; move it to b's sign.
double python_mod(double a, double b) {
  double r = std::fmod(a, b);
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

// Python's float a // b (CPython's float_floor_div, from fmod, so that
// -inf // 1 is NaN, as -inf % 1 is: not floor(a / b), which gives -inf),
// and a / b where b is 0 (torch's rounding_mode="floor"; Python raises).
double python_floordiv(double a, double b) {
  if (b == 0) return a / b;
  double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1.0;
  if (div == 0) return std::copysign(0.0, a / b);
  double fl = std::floor(div);
  return div - fl > 0.5 ? fl + 1.0 : fl;
}

}  // namespace

// ---------------------------------------------------------------- the table

// Note [The reference from the table]
// One function per row of ops/core/elementwise.def: its kind's dtype rule, here
// (keep_int, float_of, arith, ...), applied to the row's SS_REF column in
// double. Only SS_REF is defined in this file: the kernel's SS_CPU column
// cannot leak into the oracle.
#define SS_REF(e) e
#define SS_UNARY_FLOAT(Enum, name, doc, cpu, ref, vjp)                   \
  Tensor name(const Tensor& t) {                                         \
    return map1(                                                         \
        t, float_of(t.dtype()), [](double x) -> double { return ref; }); \
  }
#define SS_UNARY_SIGNED(Enum, name, doc, cpu, cpu_int, ref, vjp)         \
  Tensor name(const Tensor& t) {                                         \
    return map1(                                                         \
        t, keep_int(t.dtype()), [](double x) -> double { return ref; }); \
  }
#define SS_UNARY_PREDICATE(Enum, name, doc, cpu, cpu_int, ref)                 \
  Tensor name(const Tensor& t) {                                               \
    return map1(                                                               \
        t, DType::Bool, [](double x) -> double { return (ref) ? 1.0 : 0.0; }); \
  }
#define SS_UNARY_LOGICAL(Enum, name, doc, cpu, ref)                            \
  Tensor name(const Tensor& t) {                                               \
    return map1(                                                               \
        t, DType::Bool, [](double x) -> double { return (ref) ? 1.0 : 0.0; }); \
  }
#define SS_BINARY_ARITH(Enum, name, doc, cpu, cpu_int, ref, vjp)        \
  Tensor name(const Tensor& ta, const Tensor& tb) {                     \
    return in_promoted(                                                 \
        ta, tb, arith(ta, tb), [](double a, double b) { return ref; }); \
  }
#define SS_BINARY_TRUEDIV(Enum, name, doc, cpu, ref, vjp)             \
  Tensor name(const Tensor& ta, const Tensor& tb) {                   \
    DType d = float_of(types::promote(ta.dtype(), tb.dtype()));       \
    return in_promoted(                                               \
        ta, tb, d, [](double a, double b) -> double { return ref; }); \
  }
#define SS_BINARY_EXTREMUM(Enum, name, doc, cpu, ref, vjp)            \
  Tensor name(const Tensor& ta, const Tensor& tb) {                   \
    DType d = types::promote(ta.dtype(), tb.dtype());                 \
    return in_promoted(                                               \
        ta, tb, d, [](double a, double b) -> double { return ref; }); \
  }
#define SS_BINARY_COMPARE(Enum, name, doc, cpu, ref)                \
  Tensor name(const Tensor& ta, const Tensor& tb) {                 \
    return compare(ta, tb, [](double a, double b) { return ref; }); \
  }
#define SS_BINARY_LOGICAL(Enum, name, doc, cpu, ref)                \
  Tensor name(const Tensor& ta, const Tensor& tb) {                 \
    return compare(ta, tb, [](double a, double b) { return ref; }); \
  }
#include "ops/core/elementwise.def"
#undef SS_REF

// ---------------------------------------------------------------- composites

Tensor silu(const Tensor& x) {
  return map1(
      x, float_of(x.dtype()), [](double v) { return v * sigmoid_of(v); });
}
Tensor softplus(const Tensor& x) {
  // log(1 + e^v) = v + log(1 + e^-v) for v > 0: no overflow either way.
  return map1(x, float_of(x.dtype()), [](double v) {
    return v > 0 ? v + std::log1p(std::exp(-v)) : std::log1p(std::exp(v));
  });
}
Tensor gelu(const Tensor& x, const std::string& approximate) {
  if (approximate == "tanh") {
    const double c = std::sqrt(2.0 / M_PI);
    return map1(x, float_of(x.dtype()), [c](double v) {
      return 0.5 * v * (1.0 + std::tanh(c * (v + 0.044715 * v * v * v)));
    });
  }
  if (approximate != "none")
    throw std::invalid_argument("ref: gelu approximate=" + approximate);
  return map1(x, float_of(x.dtype()), [](double v) {
    return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
  });
}

Tensor where(const Tensor& c, const Tensor& a, const Tensor& b) {
  Shape s = broadcast_shape(c.shape(), broadcast_shape(a.shape(), b.shape()));
  DType d = types::promote(a.dtype(), b.dtype());
  std::vector<double> cv = c.to_doubles(), av = a.to_doubles(),
                      bv = b.to_doubles();
  std::vector<double> r(ops::numel_of(s));
  for (int64_t i = 0; i < static_cast<int64_t>(r.size()); ++i) {
    std::vector<int64_t> idx = unravel(i, s);
    r[i] = cv[broadcast_index(idx, s, c.shape())] != 0
               ? av[broadcast_index(idx, s, a.shape())]
               : bv[broadcast_index(idx, s, b.shape())];
  }
  return Tensor::from_doubles(s, r, d);
}

Tensor clip(const Tensor& x, const Tensor& lo, const Tensor& hi) {
  Shape s = broadcast_shape(x.shape(), broadcast_shape(lo.shape(), hi.shape()));
  DType d = types::promote(types::promote(x.dtype(), lo.dtype()), hi.dtype());
  std::vector<double> xv = x.to_doubles(), lv = lo.to_doubles(),
                      hv = hi.to_doubles();
  std::vector<double> r(ops::numel_of(s));
  for (int64_t i = 0; i < static_cast<int64_t>(r.size()); ++i) {
    std::vector<int64_t> idx = unravel(i, s);
    double v = xv[broadcast_index(idx, s, x.shape())];
    double l = lv[broadcast_index(idx, s, lo.shape())];
    double h = hv[broadcast_index(idx, s, hi.shape())];
    if (v < l) v = l;
    if (v > h) v = h;
    r[i] = v;
  }
  return Tensor::from_doubles(s, r, d);
}

Tensor masked_fill(const Tensor& x, const Tensor& mask, double v) {
  Shape s = x.shape();
  if (broadcast_shape(s, mask.shape()) != s)
    throw std::invalid_argument("ref: masked_fill's mask extends x");
  std::vector<double> xv = x.to_doubles(), mv = mask.to_doubles();
  for (int64_t i = 0; i < static_cast<int64_t>(xv.size()); ++i)
    if (mv[broadcast_index(unravel(i, s), s, mask.shape())] != 0) xv[i] = v;
  return Tensor::from_doubles(s, xv, x.dtype());
}

// ---------------------------------------------------------------- matmul

Tensor matmul(const Tensor& a, const Tensor& b) {
  if (a.rank() == 0 || b.rank() == 0)
    throw std::invalid_argument("ref: matmul of a 0-d tensor");
  Shape sa = a.shape(), sb = b.shape();
  bool a1 = sa.size() == 1, b1 = sb.size() == 1;
  if (a1) sa.insert(sa.begin(), 1);
  if (b1) sb.push_back(1);
  int64_t m = sa[sa.size() - 2], k = sa.back();
  int64_t k2 = sb[sb.size() - 2], n = sb.back();
  if (k != k2) throw std::invalid_argument("ref: matmul inner sizes differ");
  Shape ba(sa.begin(), sa.end() - 2), bb(sb.begin(), sb.end() - 2);
  Shape batch = broadcast_shape(ba, bb);
  int64_t nb = ops::numel_of(batch);
  std::vector<double> av = a.to_doubles(), bv = b.to_doubles();
  std::vector<double> r(nb * m * n, 0.0);
  for (int64_t t = 0; t < nb; ++t) {
    std::vector<int64_t> bi = unravel(t, batch);
    int64_t oa = broadcast_index(bi, batch, ba) * m * k;
    int64_t ob = broadcast_index(bi, batch, bb) * k * n;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t p = 0; p < k; ++p)
          acc += av[oa + i * k + p] * bv[ob + p * n + j];
        r[(t * m + i) * n + j] = acc;
      }
  }
  Shape out = batch;
  if (!a1) out.push_back(m);
  if (!b1) out.push_back(n);
  return Tensor::from_doubles(out, r, types::promote(a.dtype(), b.dtype()));
}

Tensor linear(const Tensor& x, const Tensor& w, const Tensor& b) {
  return add(matmul(x, w), b);
}

}  // namespace ss::ref
