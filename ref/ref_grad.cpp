// The finite-difference gradient checker (ref_grad.h).

#include "ref/ref_grad.h"

#include <cmath>
#include <cstdint>
#include <sstream>

namespace ss::ref {

using ops::Tensor;

namespace {

// Fixed weights: a small LCG, so every run checks the same combination.
std::vector<double> weights(int64_t n) {
  std::vector<double> w(n);
  uint64_t s = 0x9E3779B97F4A7C15ull;
  for (int64_t i = 0; i < n; ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    double u = static_cast<double>(s >> 11) / 9007199254740992.0;  // [0, 1)
    double mag = 0.5 + u;
    w[i] = ((s >> 7) & 1) ? mag : -mag;
  }
  return w;
}

// sum(f(xs) * w) on the host, in doubles, without recording.
double loss_value(const std::function<Tensor(const std::vector<Tensor>&)>& f,
                  const std::vector<Tensor>& xs,
                  const std::vector<double>& w) {
  ops::GradMode::Guard off(false);
  std::vector<double> y = f(xs).to_doubles();
  double s = 0;
  for (size_t i = 0; i < y.size(); ++i) s += y[i] * w[i];
  return s;
}

}  // namespace

GradCheckReport check_gradients(
    std::function<Tensor(const std::vector<Tensor>&)> f,
    std::vector<Tensor> inputs,
    double eps,
    double rtol,
    double atol) {
  GradCheckReport report;
  std::vector<Tensor> leaves;
  std::vector<size_t> diff;  // positions of the differentiated inputs
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (types::is_float(inputs[i].dtype())) {
      leaves.push_back(ops::requires_grad(inputs[i].clone()));
      diff.push_back(i);
    } else {
      leaves.push_back(inputs[i]);
    }
  }

  Tensor y = f(leaves);
  std::vector<double> w = weights(y.numel());
  Tensor wt = Tensor::from_doubles(y.shape(), w, types::DType::F64);
  Tensor loss = ops::sum(ops::mul(ops::cast(y, types::DType::F64), wt));
  std::vector<Tensor> wrt;
  for (size_t i : diff) wrt.push_back(leaves[i]);
  std::vector<Tensor> grads = ops::backward(loss, wrt);

  std::ostringstream out;
  out.precision(12);
  int bad = 0;
  for (size_t k = 0; k < diff.size(); ++k) {
    size_t i = diff[k];
    if (grads[k].shape() != inputs[i].shape()) {
      out << "input " << i << ": gradient shape "
          << ops::shape_string(grads[k].shape()) << " vs input shape "
          << ops::shape_string(inputs[i].shape()) << "\n";
      ++bad;
      continue;
    }
    std::vector<double> analytic = grads[k].to_doubles();
    for (int64_t j = 0; j < inputs[i].numel(); ++j) {
      std::vector<Tensor> xs = inputs;
      double x0 = inputs[i].at(j);
      xs[i] = inputs[i].clone();
      xs[i].set(j, x0 + eps);
      double lp = loss_value(f, xs, w);
      xs[i].set(j, x0 - eps);
      double lm = loss_value(f, xs, w);
      double numeric = (lp - lm) / (2 * eps);
      double a = analytic[j];
      bool ok = std::abs(a - numeric) <= atol + rtol * std::abs(numeric);
      if (!ok) {
        if (bad < 8)
          out << "input " << i << " element " << j << ": analytic " << a
              << " vs numeric " << numeric << "\n";
        ++bad;
      }
    }
  }
  if (bad) {
    report.ok = false;
    out << bad << " mismatch(es)";
    report.detail = out.str();
  }
  return report;
}

}  // namespace ss::ref
