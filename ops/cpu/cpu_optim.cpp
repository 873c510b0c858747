// Fused optimizer steps: torch.optim's AdamW and SGD update rules in one
// pass over each param (the unfused form, a dozen tensor ops per param,
// was most of a small batch's step). Floats natively; halves through f32.
#include <cmath>

#include "ops/cpu/cpu_common.h"

namespace ss::ops::cpu {

namespace {

template <class T>
void adamw_loop(T* __restrict p,
                const T* __restrict g,
                T* __restrict m,
                T* __restrict v,
                int64_t n,
                double lr,
                double b1,
                double b2,
                double eps,
                double wd,
                int64_t step) {
  const double bc1 = 1.0 - std::pow(b1, double(step));
  const double bc2_sqrt = std::sqrt(1.0 - std::pow(b2, double(step)));
  const T decay = T(1.0 - lr * wd), tb1 = T(b1), tb2 = T(b2);
  const T ob1 = T(1.0 - b1), ob2 = T(1.0 - b2), step_size = T(lr / bc1);
  const T inv_bc2 = T(1.0 / bc2_sqrt), teps = T(eps);
  for (int64_t i = 0; i < n; ++i) {
    T pi = p[i] * decay;
    T mi = tb1 * m[i] + ob1 * g[i];
    T vi = tb2 * v[i] + ob2 * g[i] * g[i];
    m[i] = mi;
    v[i] = vi;
    p[i] = pi - step_size * mi / (std::sqrt(vi) * inv_bc2 + teps);
  }
}

template <class T>
void sgd_loop(T* __restrict p,
              const T* __restrict g,
              T* __restrict buf,
              int64_t n,
              double lr,
              double mu,
              double wd,
              bool nesterov,
              bool first) {
  const T tlr = T(lr), tmu = T(mu), twd = T(wd);
  for (int64_t i = 0; i < n; ++i) {
    T gi = g[i] + twd * p[i];
    if (buf) {
      T b = first ? gi : tmu * buf[i] + gi;
      buf[i] = b;
      gi = nesterov ? gi + tmu * b : b;
    }
    p[i] -= tlr * gi;
  }
}

void check(const Tensor& p, const Tensor& g, const char* op) {
  if (p.shape() != g.shape())
    fail(op,
         "param " + shape_string(p.shape()) + " and gradient " +
             shape_string(g.shape()) + " differ");
  if (!types::is_float(p.dtype())) fail(op, "params must be floats");
}

}  // namespace

void adamw_update(Tensor& p,
                  const Tensor& g0,
                  Tensor& m,
                  Tensor& v,
                  double lr,
                  double b1,
                  double b2,
                  double eps,
                  double wd,
                  int64_t step) {
  check(p, g0, "adamw");
  Tensor g = g0.dtype() == p.dtype() ? g0 : cast(g0, p.dtype());
  // [zero] picks the element type the loop runs in.
  auto run =
      [&](auto zero, Tensor& pp, const Tensor& gg, Tensor& mm, Tensor& vv) {
        using T = decltype(zero);
        adamw_loop(pp.data<T>(),
                   gg.data<T>(),
                   mm.data<T>(),
                   vv.data<T>(),
                   p.numel(),
                   lr,
                   b1,
                   b2,
                   eps,
                   wd,
                   step);
      };
  if (is_half(p.dtype())) {
    Tensor pf = to_f32(p), mf = to_f32(m), vf = to_f32(v), gf = to_f32(g);
    run(0.0f, pf, gf, mf, vf);
    p = from_f32(pf, p.dtype());
    m = from_f32(mf, m.dtype());
    v = from_f32(vf, v.dtype());
  } else if (p.dtype() == DType::F64) {
    run(0.0, p, g, m, v);
  } else {
    run(0.0f, p, g, m, v);
  }
}

void sgd_update(Tensor& p,
                const Tensor& g0,
                Tensor* buf,
                double lr,
                double momentum,
                double wd,
                bool nesterov,
                bool first) {
  check(p, g0, "sgd");
  Tensor g = g0.dtype() == p.dtype() ? g0 : cast(g0, p.dtype());
  // [zero] picks the element type the loop runs in; [bb] may be null.
  auto run = [&](auto zero, Tensor& pp, const Tensor& gg, Tensor* bb) {
    using T = decltype(zero);
    sgd_loop(pp.data<T>(),
             gg.data<T>(),
             bb ? bb->data<T>() : nullptr,
             p.numel(),
             lr,
             momentum,
             wd,
             nesterov,
             first);
  };
  if (is_half(p.dtype())) {
    Tensor pf = to_f32(p), gf = to_f32(g);
    Tensor bf = buf ? to_f32(*buf) : Tensor();
    run(0.0f, pf, gf, buf ? &bf : nullptr);
    p = from_f32(pf, p.dtype());
    if (buf) *buf = from_f32(bf, buf->dtype());
  } else if (p.dtype() == DType::F64) {
    run(0.0, p, g, buf);
  } else {
    run(0.0f, p, g, buf);
  }
}

}  // namespace ss::ops::cpu
