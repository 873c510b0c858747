// The differentiable API, part 5: fused kernels.
//
// Note [Fused kernels]
// softmax, log_softmax, layer_norm (with its affine part) and rms_norm along
// the last axis and gelu are single backend kernels, forward and VJP, as
// PyTorch's are (_softmax and _softmax_backward_data, native_layer_norm and
// its backward, gelu and gelu_backward): a composite of exp, max, sum, div or
// erf, mul, add is five to fifteen passes over the tensor with a temporary
// each, forward and backward, where one pass over a row (or a cached block)
// does. They serve the builtins for f32 and f64 (the forwards in ops/defs
// choose them with has_fused_kernel); halves and a softmax along another axis
// keep the composite, whose values they equal up to rounding (tests/torch
// checks the builtins against torch in f32 and f64, ops/tests/fused_test.cpp
// the kernels against ref/; cross_entropy uses log_softmax as torch's does).
// The VJP calls the backend directly: backward() runs without
// recording, so no VJP is differentiated again.

#include "ops/api.h"
#include "ops/api_detail.h"

namespace ss::ops {

using namespace detail;

bool has_fused_kernel(const Tensor& x) {
  return x.defined() && (x.dtype() == DType::F32 || x.dtype() == DType::F64);
}

Tensor softmax_last(const Tensor& x, bool log) {
  const char* name = log ? "log_softmax" : "softmax";
  check_defined(name, x);
  if (!has_fused_kernel(x))
    value_error(name, "the fused kernel takes f32 or f64");
  Tensor y = backend_of(x).softmax_last(x, log);
  return record(name, y, {x}, [y, log](const Tensor& g) {
    return std::vector<Tensor>{backend_of(y).softmax_last_backward(g, y, log)};
  });
}

Tensor gelu(const Tensor& x, bool tanh) {
  check_defined("gelu", x);
  if (!has_fused_kernel(x))
    value_error("gelu", "the fused kernel takes f32 or f64");
  Tensor y = backend_of(x).gelu(x, tanh);
  Tensor xd = x.detach();
  return record("gelu", y, {x}, [xd, tanh](const Tensor& g) {
    return std::vector<Tensor>{backend_of(xd).gelu_backward(g, xd, tanh)};
  });
}

namespace {

// layer_norm ([centered]) or rms_norm along the last axis, with the
// affine part where [g] is defined: one forward kernel and one VJP for
// x, g and b (torch's native_layer_norm and its backward).
Tensor norm_last(const char* name,
                 const Tensor& x,
                 double eps,
                 bool centered,
                 const Tensor& g,
                 const Tensor& b) {
  check_defined(name, x);
  if (!has_fused_kernel(x))
    value_error(name, "the fused kernel takes f32 or f64");
  std::vector<Tensor> inputs = {x};
  for (const Tensor* p : {&g, &b}) {
    if (!p->defined()) continue;
    int64_t n = x.rank() ? x.shape().back() : 1;
    if (p->dtype() != x.dtype() || p->shape() != Shape{n})
      value_error(name, "the affine part needs x's last axis and dtype");
    inputs.push_back(*p);
  }
  auto [y, mean, rstd] = backend_of(x).norm_last(x, eps, centered, g, b);
  Tensor xd = x.detach(), gd = g.defined() ? g.detach() : Tensor();
  bool has_b = b.defined();
  return record(
      name,
      y,
      inputs,
      [xd, gd, has_b, centered, mean = mean, rstd = rstd](const Tensor& gy) {
        auto [dx, dg, db] =
            backend_of(xd).norm_last_backward(gy, xd, mean, rstd, centered, gd);
        std::vector<Tensor> r = {dx};
        if (gd.defined()) r.push_back(dg);
        if (has_b) r.push_back(db);
        return r;
      });
}

}  // namespace

Tensor layer_norm_last(const Tensor& x,
                       double eps,
                       const Tensor& g,
                       const Tensor& b) {
  if (b.defined() && !g.defined())
    value_error("layer_norm", "the affine part's b needs its g");
  return norm_last("layer_norm", x, eps, true, g, b);
}

Tensor rms_norm_last(const Tensor& x, double eps) {
  return norm_last("rms_norm", x, eps, false, Tensor(), Tensor());
}

Tensor attention(const Tensor& q,
                 const Tensor& k,
                 const Tensor& v,
                 double scale,
                 bool causal) {
  for (const Tensor* t : {&q, &k, &v}) {
    check_defined("attention", *t);
    if (!has_fused_kernel(*t))
      value_error("attention", "the fused kernel takes f32 or f64");
  }
  auto [o, lse] = backend_of(q).attention(q, k, v, scale, causal);
  Tensor qd = q.detach(), kd = k.detach(), vd = v.detach(), od = o.detach();
  return record("attention",
                o,
                {q, k, v},
                [qd, kd, vd, od, lse = lse, scale, causal](const Tensor& g) {
                  auto [dq, dk, dv] = backend_of(qd).attention_backward(
                      g, qd, kd, vd, od, lse, scale, causal);
                  return std::vector<Tensor>{dq, dk, dv};
                });
}

// The VJP of act(scale * (x @ w) + b) + residual: the cotangent through
// the activation in one pass (Backend::activation_backward: relu's
// threshold_backward, gelu_backward), then the bias's sum over the rows,
// the products' two transposed products, and the residual's g itself.
Tensor linear_epilogue(const Tensor& x,
                       const Tensor& w,
                       const Tensor& b,
                       Activation act,
                       const Tensor& residual,
                       double scale) {
  const char* name = "linear";
  check_defined(name, x);
  check_defined(name, w);
  std::vector<Tensor> inputs = {x, w};
  for (const Tensor* t : {&b, &residual})
    if (t->defined()) inputs.push_back(*t);
  check_same_device(name, inputs);
  for (const Tensor& t : inputs)
    if (!has_fused_kernel(t) || t.dtype() != x.dtype())
      value_error(name, "the fused product takes one dtype, f32 or f64");
  if (x.rank() < 1 || w.rank() != 2 || x.shape().back() != w.shape()[0])
    shape_error(name,
                "needs x [.. k] and w [k m], got " + shape_string(x.shape()) +
                    " and " + shape_string(w.shape()));
  Epilogue e;
  e.scale = scale;
  e.bias = b;
  e.act = act;
  e.residual = residual;
  // relu's mask reads its output where nothing is added after it (y > 0
  // exactly where pre > 0, NaN alike); gelu's derivative, or relu's under
  // a residual, reads the input it was given.
  const bool grad =
      needs_grad(x) || needs_grad(w) || (b.defined() && needs_grad(b));
  e.keep_pre =
      grad && (act == Activation::Gelu || act == Activation::GeluTanh ||
               (act == Activation::Relu && residual.defined()));
  auto [y, pre] = backend_of(x).matmul_epilogue(x, w, e);
  if (act == Activation::Relu && !e.keep_pre && grad) pre = y.detach();
  const int64_t k = w.shape()[0], m = w.shape()[1];
  const int64_t rows = numel_of(Shape(x.shape().begin(), x.shape().end() - 1));
  Tensor xd = x.detach().reshape({rows, k}), wd = w.detach();
  const Shape x_shape = x.shape();
  const bool nx = needs_grad(x), nw = needs_grad(w);
  const bool has_b = b.defined(), has_r = residual.defined();
  return record(name, y, inputs, [=](const Tensor& gy) {
    Backend& be = backend_of(gy);
    const Device dev = gy.device();
    const DType dt = gy.dtype();
    Tensor g = gy.reshape({rows, m});
    if (act != Activation::None)
      g = be.activation_backward(act, g, pre.reshape({rows, m}));
    std::vector<Tensor> out(2 + has_b + has_r);
    size_t i = 2;
    if (has_b) out[i++] = be.reduce(ReduceOp::Sum, g, {0}, false);
    if (has_r) out[i] = gy;
    Tensor gs = g;
    if (scale != 1)
      gs = be.binary(BinaryOp::Mul, g, Tensor::full({}, scale, dt, dev));
    if (nx) out[0] = be.matmul(gs, wd, false, true).reshape(x_shape);
    if (nw) out[1] = be.matmul(xd, gs, true, false);
    return out;
  });
}

}  // namespace ss::ops
