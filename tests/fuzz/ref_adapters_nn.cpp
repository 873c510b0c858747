// The oracle's adapters (ref_adapters.h): the nn ops, attention, the
// fused layer, the losses and the convolutions. The defaults are the
// table's (docs/reference/builtins.md) and torch's where it is silent.
#include <algorithm>
#include <cmath>
#include <functional>

#include "ref/ref_ops.h"
#include "ref/ref_patterns.h"
#include "tests/fuzz/ref_adapters.h"

namespace ss::fuzz {

using ops::Tensor;
using types::DType;

namespace {

// An optional tensor argument; undefined when not given.
Tensor opt_t(RefArgs& a, std::string_view name) {
  return a.has(name) ? a.t(name) : Tensor();
}

Want long_one(Tensor y, Tensor scale = Tensor()) {
  Want w{{std::move(y)}, {std::move(scale)}};
  w.tol = Tol::Long;
  return w;
}

// A loss: ref computes in f64, the op in the checker's dtype. [f] is ref's
// loss by reduction=: a sum's and a mean's terms are its "none" values,
// whose Σ|.| the op's sum passes on its way (a mean of 8.5e37s sums past
// f32's range, as torch's does), and whose mean of |.| bounds a mean's
// error.
Want loss(const std::function<Tensor(const std::string&)>& f,
          const std::string& reduction) {
  Want w = long_one(f(reduction));
  w.dtype_of_op = true;
  if (reduction == "none") return w;
  Tensor per = abs64(f("none"));
  Tensor all = ref::sum(per);
  w.partials = {all};
  if (reduction == "sum") w.scales = {all};
  if (reduction == "mean") w.scales = {ref::mean(per)};
  if (w.values[0].shape() != all.shape()) w.scales = w.partials = {};
  return w;
}

// A scalar option (a loss's beta= and delta=, a norm's eps=) as the op
// computes with it: a host number in the dtype it computes in (the
// weak-scalar rule: f32 for f32 and the halves, which compute in f32), as
// torch's kernels take it, so that delta=5e-324 is 0 in f32 (inf · 0 is
// NaN there) and eps=5e-324 leaves 0 / sqrt(0 + eps) NaN.
double option(RefArgs& a, std::string_view name, double dflt) {
  double v = a.number(name, dflt);
  const types::Type& r = a.result_type();
  if (!r.is_tensor() || r.dtype == DType::F64) return v;
  return Tensor::scalar(v, DType::F32).item();
}

// [y] plus a bias [O] along axis 1 (the convolutions' bias=).
Tensor with_bias(const Tensor& y, const Tensor& b) {
  if (!b.defined()) return y;
  ops::Shape s(y.rank(), 1);
  s[1] = b.numel();
  return ref::add(y, ref::reshape(b, s));
}

Tensor act_of(const std::string& act, const Tensor& y) {
  if (act == "relu") return ref::relu(y);
  if (act == "gelu") return ref::gelu(y);
  if (act == "gelu_tanh") return ref::gelu(y, "tanh");
  return y;
}

void class_options(RefArgs& a, ref::ClassLossOptions& o) {
  o.weight = opt_t(a, "weight");
  o.ignore_index = a.integer("ignore_index", -100);
  o.reduction = a.str("reduction", "mean");
}

}  // namespace

void nn_adapters(std::map<std::string, Adapter>& m) {
  m["dropout"] = [](RefArgs& a) {
    Tensor x = a.t("x");
    // Train draws from the mode's counter, which a second read would
    // move: ref is asked only in Eval, where dropout is x.
    if (a.training("mode")) a.decline("Train's draws");
    return Want{{ref::dropout(x, ref::ones_like(ref::isnan(x)), 0.0)}};
  };
  m["batch_norm"] = [](RefArgs& a) {
    Tensor x = a.t("x");
    // Train moved the running stats the op read: they are gone.
    if (a.training("mode")) a.decline("Train's running stats");
    auto r = ref::batch_norm(x,
                             a.model_field("bn", "g"),
                             a.model_field("bn", "b"),
                             a.model_field("bn", "running_mean"),
                             a.model_field("bn", "running_var"),
                             false);
    return long_one(r.y);
  };
  m["embedding"] = [](RefArgs& a) {
    Tensor table = a.t("table");
    return Want{{ref::embedding(table, a.t("ids"))}};
  };
  m["layer_norm"] = [](RefArgs& a) {
    Tensor x = a.t("x");
    std::vector<int> axes = a.over().value_or(std::vector<int>{});
    double eps = option(a, "eps", 1e-5);
    if (!a.has("affine")) return long_one(ref::layer_norm(x, axes, eps));
    return long_one(ref::layer_norm(x,
                                    axes,
                                    eps,
                                    a.model_field("affine", "g"),
                                    a.model_field("affine", "b")));
  };
  m["rms_norm"] = [](RefArgs& a) {
    Tensor x = a.t("x");
    std::vector<int> axes = a.over().value_or(std::vector<int>{});
    return long_one(ref::rms_norm(x, axes, option(a, "eps", 1e-6)));
  };
  m["stop_grad"] = [](RefArgs& a) { return Want{{ref::stop_grad(a.t("x"))}}; };
  m["scaled_dot_product_attention"] = [](RefArgs& a) {
    Tensor q = a.t("q"), k = a.t("k"), v = a.t("v");
    bool causal = a.flag("causal", false);
    double d = q.rank() ? static_cast<double>(q.shape().back()) : 1.0;
    double scale = a.number("scale", 1.0 / std::sqrt(d));
    // Each output is a weighted mean of v's rows: Σ p |v| bounds its terms.
    Want w = long_one(ref::scaled_dot_product_attention(q, k, v, causal, scale),
                      ref::scaled_dot_product_attention(
                          f64(q), f64(k), abs64(v), causal, scale));
    // Its scores, q k^T and then times scale (gemm's alpha scales the
    // product, as torch's (q k^T) * scale), are partial results: past the
    // dtype's range they overflow in the op (inf - inf in the softmax, or
    // inf · 0, NaN, as torch's f32 does) and not in ref's doubles (q = k =
    // 1e30, at any scale).
    if (q.rank() >= 2 && q.rank() <= 3 && q.rank() == k.rank()) {
      std::string lead = q.rank() == 3 ? "b " : "";
      Tensor s = ref::einsum({abs64(q), abs64(k)},
                             lead + "n d, " + lead + "t d -> " + lead + "n t");
      Tensor most = ref::max(s, {-1});  // [*s n]
      ops::Shape col = most.shape();
      col.push_back(1);
      Tensor p =
          ref::mul(ref::reshape(most, col),
                   Tensor::scalar(std::max(1.0, std::fabs(scale)), DType::F64));
      w.partials = {ref::add(ref::zeros(w.values[0].shape(), DType::F64), p)};
    }
    return w;
  };
  m["fused_linear"] = [](RefArgs& a) {
    Tensor x = a.t("x"), w = a.t("w");
    Tensor b = opt_t(a, "b"), r = opt_t(a, "residual");
    std::string act = a.str("act", "none");
    double s = a.number("scale", 1.0);
    Tensor sc = Tensor::scalar(s, DType::F64);
    Tensor y = ref::mul(ref::matmul(x, w), ref::full({}, s, x.dtype()));
    Tensor mag = ref::mul(ref::matmul(abs64(x), abs64(w)), ref::abs(sc));
    if (b.defined()) y = ref::add(y, b), mag = ref::add(mag, abs64(b));
    y = act_of(act, y);
    if (r.defined()) y = ref::add(y, r), mag = ref::add(mag, abs64(r));
    if (mag.shape() != y.shape()) mag = Tensor();
    return long_one(y, mag);
  };

  // ---------------------------------------------------------------- losses
  m["cross_entropy"] = [](RefArgs& a) {
    Tensor z = a.t("logits"), y = a.t("label");
    ref::ClassLossOptions o;
    class_options(a, o);
    o.label_smoothing = a.number("label_smoothing", 0);
    return loss(
        [&](const std::string& r) {
          ref::ClassLossOptions by = o;
          by.reduction = r;
          return ref::cross_entropy(z, y, by);
        },
        o.reduction);
  };
  m["nll_loss"] = [](RefArgs& a) {
    Tensor z = a.t("logp"), y = a.t("label");
    ref::ClassLossOptions o;
    class_options(a, o);
    return loss(
        [&](const std::string& r) {
          ref::ClassLossOptions by = o;
          by.reduction = r;
          return ref::nll_loss(z, y, by);
        },
        o.reduction);
  };
  m["binary_cross_entropy"] = [](RefArgs& a) {
    Tensor p = a.t("p"), y = a.t("target");
    Tensor w = opt_t(a, "weight");
    return loss(
        [&](const std::string& r) {
          return ref::binary_cross_entropy(p, y, w, r);
        },
        a.str("reduction", "mean"));
  };
  m["binary_cross_entropy_with_logits"] = [](RefArgs& a) {
    Tensor x = a.t("x"), y = a.t("target");
    Tensor w = opt_t(a, "weight"), pw = opt_t(a, "pos_weight");
    return loss(
        [&](const std::string& r) {
          return ref::binary_cross_entropy_with_logits(x, y, w, pw, r);
        },
        a.str("reduction", "mean"));
  };
  m["mse"] = [](RefArgs& a) {
    Tensor x = a.t("a"), y = a.t("b");
    return loss([&](const std::string& r) { return ref::mse(x, y, r); },
                a.str("reduction", "mean"));
  };
  m["smooth_l1"] = [](RefArgs& a) {
    Tensor x = a.t("a"), y = a.t("b");
    double beta = option(a, "beta", 1.0);
    return loss(
        [&](const std::string& r) { return ref::smooth_l1(x, y, beta, r); },
        a.str("reduction", "mean"));
  };
  m["huber"] = [](RefArgs& a) {
    Tensor x = a.t("a"), y = a.t("b");
    double delta = option(a, "delta", 1.0);
    return loss(
        [&](const std::string& r) { return ref::huber(x, y, delta, r); },
        a.str("reduction", "mean"));
  };
  m["kl_div"] = [](RefArgs& a) {
    Tensor x = a.t("input"), y = a.t("target");
    bool log_target = a.flag("log_target", false);
    return loss(
        [&](const std::string& r) { return ref::kl_div(x, y, r, log_target); },
        a.str("reduction", "mean"));
  };
  m["one_hot"] = [](RefArgs& a) {
    Tensor y = a.t("label");
    return Want{{ref::one_hot(y, a.size("classes"))}};
  };

  // ---------------------------------------------------------------- conv
  // A sum of products, as matmul: the same loop on |x| and |k| is its
  // scale.
  for (const char* op : {"conv1d", "conv2d"})
    m[op] = [one = op[4] == '1'](RefArgs& a) {
      Tensor x = a.t("x"), k = a.t("k");
      int64_t s = a.integer("stride", 1), p = a.integer("padding", 0);
      int64_t d = a.integer("dilation", 1), g = a.integer("groups", 1);
      Tensor b = opt_t(a, "bias");
      auto conv = one ? ref::conv1d : ref::conv2d;
      return long_one(with_bias(conv(x, k, s, p, d, g), b),
                      with_bias(conv(abs64(x), abs64(k), s, p, d, g),
                                b.defined() ? abs64(b) : b));
    };
  m["conv_transpose2d"] = [](RefArgs& a) {
    Tensor x = a.t("x"), k = a.t("k");
    int64_t s = a.integer("stride", 1), p = a.integer("padding", 0);
    int64_t op = a.integer("output_padding", 0);
    int64_t g = a.integer("groups", 1), d = a.integer("dilation", 1);
    Tensor b = opt_t(a, "bias");
    return long_one(
        with_bias(ref::conv_transpose2d(x, k, s, p, op, g, d), b),
        with_bias(ref::conv_transpose2d(abs64(x), abs64(k), s, p, op, g, d),
                  b.defined() ? abs64(b) : b));
  };
  m["max_pool2d"] = [](RefArgs& a) {
    Tensor x = a.t("x");
    int64_t k = a.integer("k", 1);
    return Want{{ref::max_pool2d(
        x, k, a.integer("stride", 0), a.integer("padding", 0))}};
  };
  m["avg_pool2d"] = [](RefArgs& a) {
    Tensor x = a.t("x");
    int64_t k = a.integer("k", 1);
    int64_t s = a.integer("stride", 0), p = a.integer("padding", 0);
    return long_one(ref::avg_pool2d(x, k, s, p),
                    ref::avg_pool2d(abs64(x), k, s, p));
  };
  m["adaptive_avg_pool2d"] = [](RefArgs& a) {
    if (a.arg_type("size").kind == types::Type::Kind::Tuple)
      a.decline("an (h, w) size: ref's is square");
    Tensor x = a.t("x");
    int64_t n = a.size("size");
    return long_one(ref::adaptive_avg_pool2d(x, n),
                    ref::adaptive_avg_pool2d(abs64(x), n));
  };
}

}  // namespace ss::fuzz
