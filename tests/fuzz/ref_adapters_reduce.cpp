// The oracle's adapters (ref_adapters.h): matmul and linear, the
// reductions and the ops along an axis. A sum's scale is the same sum of
// the terms' absolute values (Note [A runtime fuzzer's oracle]).
#include <cmath>
#include <functional>

#include "ref/ref_ops.h"
#include "tests/fuzz/ref_adapters.h"

namespace ss::fuzz {

using ops::Shape;
using ops::Tensor;
using types::DType;

namespace {

using Axes = std::vector<int>;
using Red = std::function<Tensor(const Tensor&, const Axes&)>;

// ref's result reshaped as keepdim= keeps it: each reduced axis (every
// axis when [axes] is empty) a 1 in place.
Tensor kept(const Tensor& y, const Tensor& x, const std::vector<int>& axes) {
  Shape s = x.shape();
  if (axes.empty()) s.assign(s.size(), 1);
  for (int a : axes) s[ref::detail::norm_axis(a, s.size())] = 1;
  return ref::reshape(y, s);
}

// The magnitude of reduction [with]'s terms (undefined: its value's own).
Tensor scale_of(const std::string& with,
                const Tensor& x,
                const std::vector<int>& axes) {
  if (with == "sum") return ref::sum(abs64(x), axes);
  if (with == "mean") return ref::mean(abs64(x), axes);
  // A product's partial products stay below the product of max(|x|, 1):
  // past the dtype's range, one may overflow (or a small one underflow)
  // in the op's order and not in ref's.
  if (with == "prod")
    return ref::prod(ref::maximum(abs64(x), ref::ones({}, DType::F64)), axes);
  // var = (Σx² - n mean²) / (n - 1): both terms are below Σx².
  if (with == "var") return ref::sum(ref::mul(f64(x), f64(x)), axes);
  if (with == "std") return ref::sqrt(ref::sum(ref::mul(f64(x), f64(x)), axes));
  return Tensor();
}

Want reduction(RefArgs& a, const std::string& with, const Red& f) {
  Tensor x = a.t("x");
  std::vector<int> axes = a.over().value_or(std::vector<int>{});
  Want w{{f(x, axes)}, {scale_of(with, x, axes)}};
  w.tol = Tol::Long;
  if (a.flag("keepdim", false)) {
    w.values[0] = kept(w.values[0], x, axes);
    if (w.scales[0].defined()) w.scales[0] = kept(w.scales[0], x, axes);
  }
  return w;
}

Adapter reducing(const char* with, Red f) {
  return [with, f](RefArgs& a) { return reduction(a, with, f); };
}

// max(x, y) is the elementwise maximum; max(x, over=) reduces.
Adapter extremum(const char* with,
                 Red f,
                 Tensor (*two)(const Tensor&, const Tensor&)) {
  return [with, f, two](RefArgs& a) {
    if (!a.has("y")) return reduction(a, with, f);
    Tensor x = a.t("x");
    return Want{{two(x, a.t("y"))}};
  };
}

Want pair(std::pair<Tensor, Tensor> p) {
  return Want{{p.first, p.second}};
}

}  // namespace

void reduction_adapters(std::map<std::string, Adapter>& m) {
  m["matmul"] = [](RefArgs& a) {
    Tensor x = a.t("a"), y = a.t("b");
    Want w{{ref::matmul(x, y)}, {ref::matmul(abs64(x), abs64(y))}};
    w.tol = Tol::Long;
    return w;
  };
  m["linear"] = [](RefArgs& a) {
    Tensor x = a.t("x");
    Tensor wt = a.model_field("l", "w"), b = a.model_field("l", "b");
    Want w{{ref::linear(x, wt, b)},
           {ref::linear(abs64(x), abs64(wt), abs64(b))}};
    w.tol = Tol::Long;
    return w;
  };
  m["sum"] = reducing("sum", ref::sum);
  m["mean"] = reducing("mean", ref::mean);
  m["prod"] = reducing("prod", ref::prod);
  m["var"] = reducing("var", ref::var);
  m["std"] = reducing("std", ref::std);
  m["logsumexp"] = reducing("logsumexp", ref::logsumexp);
  m["norm"] = reducing("norm", ref::norm);
  m["argmax"] = reducing("argmax", ref::argmax);
  m["argmin"] = reducing("argmin", ref::argmin);
  m["any"] = reducing("any", ref::any);
  m["all"] = reducing("all", ref::all);
  m["max"] = extremum("max", ref::max, ref::maximum);
  m["min"] = extremum("min", ref::min, ref::minimum);
  m["reduce"] = [](RefArgs& a) {
    std::string with = a.str("with", "sum");
    return reduction(a, with, [with](const Tensor& x, const Axes& axes) {
      return ref::reduce(x, axes, with);
    });
  };

  m["softmax"] = [](RefArgs& a) {
    Tensor x = a.t("x");
    return Want{{ref::softmax(x, a.one_axis(x))}};
  };
  // x - logsumexp(x): rounded relative to |x| and |logsumexp|.
  m["log_softmax"] = [](RefArgs& a) {
    Tensor x = a.t("x");
    Tensor y = ref::log_softmax(x, a.one_axis(x));
    Want w{{y}, {ref::add(abs64(x), ref::abs(ref::sub(f64(x), f64(y))))}};
    w.tol = Tol::Long;
    return w;
  };
  m["cumsum"] = [](RefArgs& a) {
    Tensor x = a.t("x");
    int axis = a.one_axis(x);
    Want w{{ref::cumsum(x, axis)}, {ref::cumsum(abs64(x), axis)}};
    w.tol = Tol::Long;
    return w;
  };
  m["sort"] = [](RefArgs& a) {
    Tensor x = a.t("x");
    return pair(ref::sort(x, a.one_axis(x)));
  };
  m["topk"] = [](RefArgs& a) {
    Tensor x = a.t("x");
    int64_t k = a.size("k");
    return pair(ref::topk(x, k, a.one_axis(x)));
  };
  m["gather"] = [](RefArgs& a) {
    Tensor x = a.t("x"), idx = a.t("idx");
    return Want{{ref::gather(x, idx, a.one_axis(x))}};
  };
  m["scatter"] = [](RefArgs& a) {
    Tensor x = a.t("x"), idx = a.t("idx"), v = a.t("v");
    return Want{{ref::scatter(x, idx, v, a.one_axis(x))}};
  };
}

}  // namespace ss::fuzz
