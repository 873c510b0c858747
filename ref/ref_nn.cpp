// The reference: the nn builtins (losses, dropout, norms, embedding,
// conv2d, pools), each as plain loops over its definition.

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "ref/ref_ops.h"

namespace ss::ref {

using namespace detail;

namespace {

// Losses and norms compute low-precision floats in f32 (torch's autocast
// habit); f32 and f64 stay; ints give f32.
DType compute_dtype(DType d) {
  return d == DType::F64 ? DType::F64 : DType::F32;
}

}  // namespace

Tensor cross_entropy(const Tensor& logits, const Tensor& labels) {
  if (logits.rank() == 0)
    throw std::invalid_argument("ref: cross_entropy needs a class axis");
  int64_t c = logits.shape().back();
  int64_t positions = logits.numel() / c;
  std::vector<double> z = logits.to_doubles(), l = labels.to_doubles();
  bool soft = types::is_float(labels.dtype());
  double total = 0;
  for (int64_t p = 0; p < positions; ++p) {
    const double* row = z.data() + p * c;
    double m = -std::numeric_limits<double>::infinity();
    for (int64_t j = 0; j < c; ++j) m = std::max(m, row[j]);
    double s = 0;
    for (int64_t j = 0; j < c; ++j) s += std::exp(row[j] - m);
    double lse = m + std::log(s);
    if (soft) {
      // -sum_j label_j * log_softmax_j.
      for (int64_t j = 0; j < c; ++j) total -= l[p * c + j] * (row[j] - lse);
    } else {
      int64_t y = static_cast<int64_t>(l[p]);
      if (y < 0 || y >= c)
        throw std::out_of_range("ref: label " + std::to_string(y));
      total += lse - row[y];
    }
  }
  return Tensor::from_doubles({},
                              {total / static_cast<double>(positions)},
                              compute_dtype(logits.dtype()));
}

Tensor mse(const Tensor& a, const Tensor& b) {
  Shape s = broadcast_shape(a.shape(), b.shape());
  std::vector<double> av = a.to_doubles(), bv = b.to_doubles();
  int64_t n = ops::numel_of(s);
  double total = 0;
  for (int64_t i = 0; i < n; ++i) {
    std::vector<int64_t> idx = unravel(i, s);
    double d = av[broadcast_index(idx, s, a.shape())] -
               bv[broadcast_index(idx, s, b.shape())];
    total += d * d;
  }
  DType d = types::promote(compute_dtype(a.dtype()), compute_dtype(b.dtype()));
  return Tensor::from_doubles({}, {total / static_cast<double>(n)}, d);
}

Tensor dropout(const Tensor& x, const Tensor& keep, double p) {
  std::vector<double> v = x.to_doubles(), k = keep.to_doubles();
  if (k.size() != v.size())
    throw std::invalid_argument("ref: dropout's mask is not x's shape");
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = p >= 1 ? v[i] * 0.0 : (k[i] != 0 ? v[i] / (1.0 - p) : 0.0);
  return Tensor::from_doubles(x.shape(), v, x.dtype());
}

BatchNormResult batch_norm(const Tensor& x,
                           const Tensor& g,
                           const Tensor& b,
                           const Tensor& running_mean,
                           const Tensor& running_var,
                           bool train,
                           double eps,
                           double momentum) {
  if (x.rank() < 2) throw std::invalid_argument("ref: batch_norm needs [b C]");
  const Shape& s = x.shape();
  int64_t channels = s[1];
  int64_t per = x.numel() / channels;  // values per channel
  std::vector<double> v = x.to_doubles(), gv = g.to_doubles(),
                      bv = b.to_doubles(), rm = running_mean.to_doubles(),
                      rv = running_var.to_doubles();
  std::vector<double> mu(channels, 0), var(channels, 0);
  auto channel_of = [&](int64_t i) { return unravel(i, s)[1]; };
  if (train) {
    for (int64_t i = 0; i < x.numel(); ++i) mu[channel_of(i)] += v[i];
    for (double& m : mu) m /= static_cast<double>(per);
    for (int64_t i = 0; i < x.numel(); ++i) {
      double d = v[i] - mu[channel_of(i)];
      var[channel_of(i)] += d * d;
    }
    for (int64_t c = 0; c < channels; ++c) {
      double biased = var[c] / static_cast<double>(per);
      double unbiased = var[c] / static_cast<double>(per - 1);
      var[c] = biased;
      rm[c] = (1 - momentum) * rm[c] + momentum * mu[c];
      rv[c] = (1 - momentum) * rv[c] + momentum * unbiased;
    }
  } else {
    mu = rm;
    var = rv;
  }
  std::vector<double> y(v.size());
  for (int64_t i = 0; i < x.numel(); ++i) {
    int64_t c = channel_of(i);
    y[i] = (v[i] - mu[c]) / std::sqrt(var[c] + eps) * gv[c] + bv[c];
  }
  return {Tensor::from_doubles(s, y, x.dtype()),
          Tensor::from_doubles(running_mean.shape(), rm, running_mean.dtype()),
          Tensor::from_doubles(running_var.shape(), rv, running_var.dtype())};
}

namespace {

// The normalised axes (every axis when [axes] is empty), in the order
// written, and for each element of x its group (the index outside them)
// and its index within them (in that order).
struct NormIndex {
  std::vector<int> axes;
  std::vector<int64_t> group, within;
  int64_t groups = 1, count = 1;
};

NormIndex norm_index(const Shape& s, const std::vector<int>& axes0) {
  NormIndex ni;
  for (int a : axes0) ni.axes.push_back(norm_axis(a, s.size()));
  if (ni.axes.empty())
    for (size_t a = 0; a < s.size(); ++a)
      ni.axes.push_back(static_cast<int>(a));
  std::vector<bool> in(s.size(), false);
  Shape inner, outer;
  for (int a : ni.axes) {
    in[a] = true;
    inner.push_back(s[a]);
  }
  for (size_t a = 0; a < s.size(); ++a)
    if (!in[a]) outer.push_back(s[a]);
  ni.groups = ops::numel_of(outer);
  ni.count = ops::numel_of(inner);
  int64_t n = ops::numel_of(s);
  for (int64_t i = 0; i < n; ++i) {
    std::vector<int64_t> p = unravel(i, s), pi, po;
    for (int a : ni.axes) pi.push_back(p[a]);
    for (size_t a = 0; a < s.size(); ++a)
      if (!in[a]) po.push_back(p[a]);
    ni.group.push_back(ravel(po, outer));
    ni.within.push_back(ravel(pi, inner));
  }
  return ni;
}

}  // namespace

Tensor layer_norm(const Tensor& x,
                  const std::vector<int>& axes,
                  double eps,
                  const std::optional<Tensor>& g,
                  const std::optional<Tensor>& b) {
  NormIndex ni = norm_index(x.shape(), axes);
  std::vector<double> v = x.to_doubles();
  std::vector<double> mu(ni.groups, 0), var(ni.groups, 0);
  for (size_t i = 0; i < v.size(); ++i) mu[ni.group[i]] += v[i];
  for (double& m : mu) m /= static_cast<double>(ni.count);
  for (size_t i = 0; i < v.size(); ++i) {
    double d = v[i] - mu[ni.group[i]];
    var[ni.group[i]] += d * d;
  }
  for (double& s : var) s /= static_cast<double>(ni.count);  // biased
  std::vector<double> gv = g ? g->to_doubles() : std::vector<double>{};
  std::vector<double> bv = b ? b->to_doubles() : std::vector<double>{};
  std::vector<double> y(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    int64_t k = ni.group[i];
    y[i] = (v[i] - mu[k]) / std::sqrt(var[k] + eps);
    if (g) y[i] *= gv[ni.within[i]];
    if (b) y[i] += bv[ni.within[i]];
  }
  return Tensor::from_doubles(x.shape(), y, float_of(x.dtype()));
}

Tensor rms_norm(const Tensor& x, const std::vector<int>& axes, double eps) {
  NormIndex ni = norm_index(x.shape(), axes);
  std::vector<double> v = x.to_doubles(), ms(ni.groups, 0);
  for (size_t i = 0; i < v.size(); ++i) ms[ni.group[i]] += v[i] * v[i];
  for (double& m : ms) m /= static_cast<double>(ni.count);
  for (size_t i = 0; i < v.size(); ++i)
    v[i] /= std::sqrt(ms[ni.group[i]] + eps);
  return Tensor::from_doubles(x.shape(), v, float_of(x.dtype()));
}

Tensor embedding(const Tensor& table, const Tensor& ids) {
  if (table.rank() != 2) throw std::invalid_argument("ref: table is [V D]");
  int64_t vocab = table.shape()[0], d = table.shape()[1];
  std::vector<double> t = table.to_doubles(), iv = ids.to_doubles();
  std::vector<double> r;
  for (double e : iv) {
    int64_t id = static_cast<int64_t>(e);
    if (id < 0 || id >= vocab)
      throw std::out_of_range("ref: id " + std::to_string(id));
    for (int64_t j = 0; j < d; ++j) r.push_back(t[id * d + j]);
  }
  Shape out = ids.shape();
  out.push_back(d);
  return Tensor::from_doubles(out, r, table.dtype());
}

Tensor conv2d(const Tensor& x,
              const Tensor& k,
              int64_t stride,
              int64_t padding,
              int64_t dilation,
              int64_t groups) {
  if (x.rank() != 4 || k.rank() != 4 || groups < 1 ||
      x.shape()[1] != k.shape()[1] * groups || k.shape()[0] % groups != 0)
    throw std::invalid_argument(
        "ref: conv2d needs [b C h w], [O C/groups kh kw]");
  int64_t nb = x.shape()[0], c = x.shape()[1], h = x.shape()[2],
          w = x.shape()[3];
  int64_t o = k.shape()[0], kh = k.shape()[2], kw = k.shape()[3];
  int64_t cg = c / groups, og = o / groups;
  int64_t h2 = (h + 2 * padding - dilation * (kh - 1) - 1) / stride + 1;
  int64_t w2 = (w + 2 * padding - dilation * (kw - 1) - 1) / stride + 1;
  std::vector<double> xv = x.to_doubles(), kv = k.to_doubles();
  std::vector<double> r(nb * o * h2 * w2, 0.0);
  for (int64_t n = 0; n < nb; ++n)
    for (int64_t oc = 0; oc < o; ++oc)
      for (int64_t i = 0; i < h2; ++i)
        for (int64_t j = 0; j < w2; ++j) {
          double acc = 0;
          for (int64_t g = 0; g < cg; ++g)
            for (int64_t p = 0; p < kh; ++p)
              for (int64_t q = 0; q < kw; ++q) {
                int64_t ic = (oc / og) * cg + g;  // the group's channels
                int64_t y = i * stride + p * dilation - padding;
                int64_t z = j * stride + q * dilation - padding;
                if (y < 0 || y >= h || z < 0 || z >= w) continue;  // zeros
                acc += xv[((n * c + ic) * h + y) * w + z] *
                       kv[((oc * cg + g) * kh + p) * kw + q];
              }
          r[((n * o + oc) * h2 + i) * w2 + j] = acc;
        }
  return Tensor::from_doubles(
      {nb, o, h2, w2}, r, types::promote(x.dtype(), k.dtype()));
}

namespace {

// Windows of k x k with [stride] over the last two axes, padded by
// [padding] on each side: the max ignores the padding (torch pads with
// -inf), the mean counts it as zeros (count_include_pad=True).
Tensor pool(
    const Tensor& x, int64_t k, int64_t stride, int64_t padding, bool is_max) {
  size_t r = x.rank();
  if (r < 2 || k <= 0) throw std::invalid_argument("ref: pool needs [.. h w]");
  if (stride <= 0) stride = k;
  int64_t h = x.shape()[r - 2], w = x.shape()[r - 1];
  int64_t h2 = (h + 2 * padding - k) / stride + 1;
  int64_t w2 = (w + 2 * padding - k) / stride + 1;
  int64_t lead = x.numel() / (h * w);
  Shape out(x.shape().begin(), x.shape().end() - 2);
  out.push_back(h2);
  out.push_back(w2);
  std::vector<double> v = x.to_doubles(), y;
  for (int64_t t = 0; t < lead; ++t)
    for (int64_t i = 0; i < h2; ++i)
      for (int64_t j = 0; j < w2; ++j) {
        double acc = is_max ? -std::numeric_limits<double>::infinity() : 0.0;
        for (int64_t p = 0; p < k; ++p)
          for (int64_t q = 0; q < k; ++q) {
            int64_t yy = i * stride + p - padding,
                    zz = j * stride + q - padding;
            if (yy < 0 || yy >= h || zz < 0 || zz >= w) continue;
            double e = v[(t * h + yy) * w + zz];
            // A max is NaN once its window holds one, as torch's
            // (std::max dropped a NaN that did not come first).
            if (!is_max)
              acc += e;
            else if (!std::isnan(acc) && (std::isnan(e) || e > acc))
              acc = e;
          }
        y.push_back(is_max ? acc : acc / static_cast<double>(k * k));
      }
  return Tensor::from_doubles(out, y, is_max ? x.dtype() : float_of(x.dtype()));
}

}  // namespace

Tensor max_pool2d(const Tensor& x, int64_t k, int64_t stride, int64_t padding) {
  return pool(x, k, stride, padding, true);
}
Tensor avg_pool2d(const Tensor& x, int64_t k, int64_t stride, int64_t padding) {
  return pool(x, k, stride, padding, false);
}

Tensor adaptive_avg_pool2d(const Tensor& x, int64_t n) {
  size_t r = x.rank();
  if (r < 2 || n <= 0)
    throw std::invalid_argument("ref: adaptive_avg_pool2d needs [.. h w]");
  int64_t h = x.shape()[r - 2], w = x.shape()[r - 1];
  int64_t lead = x.numel() / (h * w);
  Shape out(x.shape().begin(), x.shape().end() - 2);
  out.push_back(n);
  out.push_back(n);
  std::vector<double> v = x.to_doubles(), y;
  for (int64_t t = 0; t < lead; ++t)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        // torch's window: [floor(i h / n), ceil((i + 1) h / n)).
        int64_t y0 = i * h / n, y1 = ((i + 1) * h + n - 1) / n;
        int64_t z0 = j * w / n, z1 = ((j + 1) * w + n - 1) / n;
        double acc = 0;
        for (int64_t yy = y0; yy < y1; ++yy)
          for (int64_t zz = z0; zz < z1; ++zz) acc += v[(t * h + yy) * w + zz];
        y.push_back(acc / static_cast<double>((y1 - y0) * (z1 - z0)));
      }
  return Tensor::from_doubles(out, y, float_of(x.dtype()));
}

Tensor conv1d(const Tensor& x,
              const Tensor& k,
              int64_t stride,
              int64_t padding,
              int64_t dilation,
              int64_t groups) {
  if (x.rank() != 3 || k.rank() != 3 || groups < 1 ||
      x.shape()[1] != k.shape()[1] * groups || k.shape()[0] % groups != 0)
    throw std::invalid_argument("ref: conv1d needs [b C l], [O C/groups kl]");
  int64_t nb = x.shape()[0], c = x.shape()[1], l = x.shape()[2];
  int64_t o = k.shape()[0], kl = k.shape()[2];
  int64_t cg = c / groups, og = o / groups;
  int64_t l2 = (l + 2 * padding - dilation * (kl - 1) - 1) / stride + 1;
  std::vector<double> xv = x.to_doubles(), kv = k.to_doubles(), r;
  for (int64_t n = 0; n < nb; ++n)
    for (int64_t oc = 0; oc < o; ++oc)
      for (int64_t i = 0; i < l2; ++i) {
        double acc = 0;
        for (int64_t g = 0; g < cg; ++g)
          for (int64_t p = 0; p < kl; ++p) {
            int64_t ic = (oc / og) * cg + g;
            int64_t y = i * stride + p * dilation - padding;
            if (y < 0 || y >= l) continue;
            acc += xv[(n * c + ic) * l + y] * kv[(oc * cg + g) * kl + p];
          }
        r.push_back(acc);
      }
  return Tensor::from_doubles(
      {nb, o, l2}, r, types::promote(x.dtype(), k.dtype()));
}

Tensor conv_transpose2d(const Tensor& x,
                        const Tensor& k,
                        int64_t stride,
                        int64_t padding,
                        int64_t output_padding,
                        int64_t groups,
                        int64_t dilation) {
  if (x.rank() != 4 || k.rank() != 4 || groups < 1 ||
      x.shape()[1] != k.shape()[0] || k.shape()[0] % groups != 0)
    throw std::invalid_argument(
        "ref: conv_transpose2d needs [b Cin h w], [Cin Cout/groups kh kw]");
  int64_t nb = x.shape()[0], ci = x.shape()[1], h = x.shape()[2],
          w = x.shape()[3];
  int64_t cog = k.shape()[1], kh = k.shape()[2], kw = k.shape()[3];
  int64_t co = cog * groups, cig = ci / groups;
  int64_t h2 =
      (h - 1) * stride - 2 * padding + dilation * (kh - 1) + output_padding + 1;
  int64_t w2 =
      (w - 1) * stride - 2 * padding + dilation * (kw - 1) + output_padding + 1;
  std::vector<double> xv = x.to_doubles(), kv = k.to_doubles();
  std::vector<double> r(nb * co * h2 * w2, 0.0);
  // Each input value scatters its kernel, scaled, into the output: the
  // transpose of conv2d's gather.
  for (int64_t n = 0; n < nb; ++n)
    for (int64_t ic = 0; ic < ci; ++ic)
      for (int64_t i = 0; i < h; ++i)
        for (int64_t j = 0; j < w; ++j) {
          double e = xv[((n * ci + ic) * h + i) * w + j];
          for (int64_t g = 0; g < cog; ++g)
            for (int64_t p = 0; p < kh; ++p)
              for (int64_t q = 0; q < kw; ++q) {
                int64_t oc = (ic / cig) * cog + g;
                int64_t y = i * stride + p * dilation - padding;
                int64_t z = j * stride + q * dilation - padding;
                if (y < 0 || y >= h2 || z < 0 || z >= w2) continue;
                r[((n * co + oc) * h2 + y) * w2 + z] +=
                    e * kv[((ic * cog + g) * kh + p) * kw + q];
              }
        }
  return Tensor::from_doubles(
      {nb, co, h2, w2}, r, types::promote(x.dtype(), k.dtype()));
}

Tensor stop_grad(const Tensor& x) {
  return x.clone();
}

Tensor scaled_dot_product_attention(const Tensor& q,
                                    const Tensor& k,
                                    const Tensor& v,
                                    bool causal,
                                    double scale) {
  const size_t r = q.rank();
  const int64_t n = q.shape()[r - 2], d = q.shape()[r - 1];
  const int64_t t = k.shape()[r - 2], e = v.shape()[r - 1];
  int64_t mats = 1;
  for (size_t i = 0; i + 2 < r; ++i) mats *= q.shape()[i];
  std::vector<double> Q = q.to_doubles(), K = k.to_doubles(),
                      V = v.to_doubles(), out(size_t(mats * n * e));
  std::vector<double> w(static_cast<size_t>(t));
  for (int64_t b = 0; b < mats; ++b)
    for (int64_t i = 0; i < n; ++i) {
      const int64_t seen = causal ? std::min(t, i + 1) : t;
      double m = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < seen; ++j) {
        double dot = 0;
        for (int64_t c = 0; c < d; ++c)
          dot +=
              Q[size_t((b * n + i) * d + c)] * K[size_t((b * t + j) * d + c)];
        w[size_t(j)] = scale * dot;
        m = std::max(m, w[size_t(j)]);
      }
      double z = 0;
      for (int64_t j = 0; j < seen; ++j) z += std::exp(w[size_t(j)] - m);
      for (int64_t c = 0; c < e; ++c) {
        double acc = 0;
        for (int64_t j = 0; j < seen; ++j)
          acc +=
              std::exp(w[size_t(j)] - m) / z * V[size_t((b * t + j) * e + c)];
        out[size_t((b * n + i) * e + c)] =
            seen ? acc : std::numeric_limits<double>::quiet_NaN();
      }
    }
  Shape os = q.shape();
  os.back() = e;
  return Tensor::from_doubles(os, out, q.dtype());
}

}  // namespace ss::ref
