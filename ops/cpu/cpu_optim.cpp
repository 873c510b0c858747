// Fused optimizer steps: torch.optim's AdamW and SGD update rules in one
// pass over each param (the unfused form, a dozen tensor ops per param,
// was most of a small batch's step). Floats natively; halves through f32.
#include <cmath>
#include <type_traits>

#include "ops/backend/primitive_checks.h"
#include "ops/cpu/cpu_common.h"
#include "ops/cpu/cpu_features.h"
#include "ops/cpu/cpu_optim_loops.h"
#include "ops/cpu/cpu_voptim.h"

namespace ss::ops::cpu {

namespace {

// The element step is the CUDA kernel's too (ops/core/optim_step.h).
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
  const auto c = optim::sgd_consts<T>(lr, mu, wd, nesterov, first);
  for (int64_t i = 0; i < n; ++i)
    optim::sgd_element(p[i], g[i], buf ? buf + i : nullptr, c);
}

// The widest vector AdamW loop this CPU runs (Note [Vector AdamW]); null:
// the portable one. Checked here, in a TU built for any x86-64.
voptim::AdamwF32* vector_adamw_f32() {
  return has_avx512()     ? voptim::adamw_f32_512
         : has_avx2_fma() ? voptim::adamw_f32
                          : nullptr;
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
  Tensor g = backend::optim_gradient(p, g0, kBackend, "adamw", &cast);
  // [zero] picks the element type the loop runs in.
  auto run =
      [&](auto zero, Tensor& pp, const Tensor& gg, Tensor& mm, Tensor& vv) {
        using T = decltype(zero);
        auto loop = [] {
          if constexpr (std::is_same_v<T, float>)
            if (voptim::AdamwF32* vector_loop = vector_adamw_f32())
              return vector_loop;
          return &adamw_loop<T>;
        }();
        loop(pp.data<T>(),
             gg.data<T>(),
             mm.data<T>(),
             vv.data<T>(),
             p.numel(),
             AdamwStep{lr, b1, b2, eps, wd, step});
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
  Tensor g = backend::optim_gradient(p, g0, kBackend, "sgd", &cast);
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
