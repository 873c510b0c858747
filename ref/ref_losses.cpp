// The reference: the losses with torch.nn.functional's options, each as
// plain loops over its definition (torch's docs' formulas), in double.

#include <cmath>
#include <stdexcept>
#include <string>

#include "ref/ref_ops.h"

namespace ss::ref {

using namespace detail;

namespace {

DType loss_dtype(DType d) {
  return d == DType::F64 ? DType::F64 : DType::F32;
}

// The reduction of per-element losses [per] (shaped [shape]) with the
// mean's denominator [denom], in [dt]: f64 for f64 inputs, else f32 (the
// losses compute low-precision floats in f32).
Tensor reduce(const std::vector<double>& per,
              const Shape& shape,
              double denom,
              const std::string& reduction,
              DType dt) {
  if (reduction == "none") return Tensor::from_doubles(shape, per, dt);
  double total = 0;
  for (double v : per) total += v;
  if (reduction == "sum") return Tensor::scalar(total, dt);
  if (reduction == "mean" || reduction == "batchmean")
    return Tensor::scalar(total / denom, dt);
  throw std::invalid_argument("ref: reduction " + reduction);
}

// [t]'s element [i], or [dflt] when the option is absent (undefined).
double at_or(const Tensor& t, int64_t i, double dflt) {
  return t.defined() ? t.to_doubles()[i] : dflt;
}

// Log-probabilities of each row of [z] (positions x classes).
std::vector<double> log_softmax_rows(const std::vector<double>& z,
                                     int64_t positions,
                                     int64_t c) {
  std::vector<double> out(z.size());
  for (int64_t p = 0; p < positions; ++p) {
    double m = -INFINITY, s = 0;
    for (int64_t j = 0; j < c; ++j) m = std::max(m, z[p * c + j]);
    for (int64_t j = 0; j < c; ++j) s += std::exp(z[p * c + j] - m);
    for (int64_t j = 0; j < c; ++j)
      out[p * c + j] = z[p * c + j] - m - std::log(s);
  }
  return out;
}

// torch's nll_loss with label smoothing (cross_entropy's): per position,
// (1 - ε) w[y] (-logp[y]) + ε/C Σ_c w_c (-logp[c]); 0 where y is ignored;
// the mean divides by Σ w[y] over the kept positions.
Tensor class_loss(const std::vector<double>& logp,
                  const Tensor& labels,
                  int64_t c,
                  const ClassLossOptions& o,
                  DType dt) {
  const int64_t positions = labels.numel();
  std::vector<double> y = labels.to_doubles(), per(positions, 0.0);
  double denom = 0;
  for (int64_t p = 0; p < positions; ++p) {
    const int64_t k = static_cast<int64_t>(y[p]);
    if (k == o.ignore_index) continue;
    if (k < 0 || k >= c) throw std::out_of_range("ref: label");
    const double wk = at_or(o.weight, k, 1.0);
    double smooth = 0;
    for (int64_t j = 0; j < c; ++j)
      smooth -= at_or(o.weight, j, 1.0) * logp[p * c + j];
    const double eps = o.label_smoothing;
    per[p] = (1 - eps) * wk * -logp[p * c + k] + eps / double(c) * smooth;
    denom += wk;
  }
  return reduce(per, labels.shape(), denom, o.reduction, dt);
}

}  // namespace

Tensor cross_entropy(const Tensor& logits,
                     const Tensor& labels,
                     const ClassLossOptions& o) {
  // The positions are the leading axes' product: one for [C] logits, even
  // where C is 0 (numel / C divided by zero there).
  const Shape lead(logits.shape().begin(), logits.shape().end() - 1);
  const int64_t c = logits.shape().back(), positions = ops::numel_of(lead);
  std::vector<double> logp =
      log_softmax_rows(logits.to_doubles(), positions, c);
  const DType dt = loss_dtype(logits.dtype());
  if (!types::is_float(labels.dtype()))
    return class_loss(logp, labels, c, o, dt);
  // Probabilities: -Σ_c w_c p'_c logp_c, p' = (1 - ε) p + ε/C; the mean
  // is over positions.
  std::vector<double> q = labels.to_doubles(), per(positions, 0.0);
  for (int64_t p = 0; p < positions; ++p)
    for (int64_t j = 0; j < c; ++j) {
      double pj = (1 - o.label_smoothing) * q[p * c + j] +
                  o.label_smoothing / double(c);
      per[p] -= at_or(o.weight, j, 1.0) * pj * logp[p * c + j];
    }
  Shape s(logits.shape().begin(), logits.shape().end() - 1);
  return reduce(per, s, double(positions), o.reduction, dt);
}

Tensor nll_loss(const Tensor& logp,
                const Tensor& labels,
                const ClassLossOptions& o) {
  return class_loss(logp.to_doubles(),
                    labels,
                    logp.shape().back(),
                    o,
                    loss_dtype(logp.dtype()));
}

namespace {

// [f](a, b, w) over [a]'s elements, [b] and [w] (empty: 1) broadcast to it.
template <typename F>
Tensor elementwise_loss(const Tensor& a,
                        const Tensor& b,
                        const Tensor& w,
                        const std::string& reduction,
                        bool batchmean_rows,
                        F f) {
  const Shape s = broadcast_shape(a.shape(), b.shape());
  std::vector<double> av = a.to_doubles(), bv = b.to_doubles(), wv;
  if (w.defined()) wv = w.to_doubles();
  const int64_t n = ops::numel_of(s);
  std::vector<double> per(n);
  for (int64_t i = 0; i < n; ++i) {
    std::vector<int64_t> idx = unravel(i, s);
    double wi = w.defined() ? wv[broadcast_index(idx, s, w.shape())] : 1.0;
    per[i] = f(av[broadcast_index(idx, s, a.shape())],
               bv[broadcast_index(idx, s, b.shape())],
               idx) *
             wi;
  }
  double denom = batchmean_rows ? double(s.empty() ? 1 : s[0]) : double(n);
  return reduce(per,
                s,
                denom,
                reduction,
                types::promote(loss_dtype(a.dtype()), loss_dtype(b.dtype())));
}

}  // namespace

Tensor binary_cross_entropy(const Tensor& p,
                            const Tensor& y,
                            const Tensor& weight,
                            const std::string& reduction) {
  return elementwise_loss(
      p, y, weight, reduction, false, [](double pi, double yi, auto&) {
        double lp = std::max(std::log(pi), -100.0);
        double lq = std::max(std::log(1 - pi), -100.0);
        return -(yi * lp + (1 - yi) * lq);
      });
}

Tensor binary_cross_entropy_with_logits(const Tensor& x,
                                        const Tensor& y,
                                        const Tensor& weight,
                                        const Tensor& pos_weight,
                                        const std::string& reduction) {
  std::vector<double> pw;
  if (pos_weight.defined()) pw = pos_weight.to_doubles();
  return elementwise_loss(
      x, y, weight, reduction, false, [&](double xi, double yi, auto& idx) {
        // -(pw y log σ(x) + (1 - y) log(1 - σ(x))), written as torch
        // computes it, (1 - y) x + w (log(e^-m + e^(-x - m)) + m) with
        // m = max(-x, 0) and w = (pw - 1) y + 1, in long double: the same
        // value for finite x and y, and torch's at infinities (x = y = inf
        // is -inf there; the log σ form gave inf · 0, NaN).
        const long double x = xi, y = yi;
        const long double m = std::isnan(x) ? x : std::max(-x, 0.0L);
        // Without pos_weight, w is 1 itself ((1 - 1) · inf is NaN).
        const long double w =
            pw.empty() ? 1.0L : (pw[idx.back()] - 1.0L) * y + 1.0L;
        return static_cast<double>(
            (1 - y) * x + w * (std::log(std::exp(-m) + std::exp(-x - m)) + m));
      });
}

Tensor mse(const Tensor& a, const Tensor& b, const std::string& reduction) {
  return elementwise_loss(
      a, b, Tensor(), reduction, false, [](double x, double y, auto&) {
        return (x - y) * (x - y);
      });
}

Tensor smooth_l1(const Tensor& a,
                 const Tensor& b,
                 double beta,
                 const std::string& reduction) {
  return elementwise_loss(
      a, b, Tensor(), reduction, false, [beta](double x, double y, auto&) {
        double d = std::fabs(x - y);
        return d < beta ? 0.5 * d * d / beta : d - 0.5 * beta;
      });
}

Tensor huber(const Tensor& a,
             const Tensor& b,
             double delta,
             const std::string& reduction) {
  return elementwise_loss(
      a, b, Tensor(), reduction, false, [delta](double x, double y, auto&) {
        double d = std::fabs(x - y);
        return d < delta ? 0.5 * d * d : delta * (d - 0.5 * delta);
      });
}

Tensor kl_div(const Tensor& input,
              const Tensor& target,
              const std::string& reduction,
              bool log_target) {
  return elementwise_loss(input,
                          target,
                          Tensor(),
                          reduction,
                          reduction == "batchmean",
                          [log_target](double x, double t, auto&) {
                            if (log_target) return std::exp(t) * (t - x);
                            // torch's xlogy(t, t) - t x: t log t is 0 at
                            // t = 0 only (NaN for t < 0 or NaN), and
                            // t x is NaN for t = 0 with an infinite x.
                            return (t == 0 ? 0.0 : t * std::log(t)) - t * x;
                          });
}

Tensor one_hot(const Tensor& labels, int64_t classes) {
  std::vector<double> y = labels.to_doubles(), out;
  for (double v : y)
    for (int64_t j = 0; j < classes; ++j) out.push_back(v == j ? 1 : 0);
  Shape s = labels.shape();
  s.push_back(classes);
  return Tensor::from_doubles(s, out, DType::I64);
}

}  // namespace ss::ref
