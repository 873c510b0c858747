#pragma once
// Row kernels of the fused ops in f32, and where's row, with AVX2 + FMA
// (Note [Vector row kernels] in cpu_vrows.cpp). Like cpu_vmath.h, this header
// includes nothing of the project: its one TU is compiled for AVX2 + FMA.

#include <cstdint>

namespace ss::ops::cpu::vrows {

/// One row of [n]: y = softmax(x), or with [log] log_softmax(x) (y may
/// be x); where [lse] is not null, the row's log-sum-exp there.
void softmax(const float* x, float* y, int64_t n, bool log, float* lse);
/// Its VJP: o = y * (g - sum(g * y)), or with [log] g - exp(y) * sum(g).
void softmax_backward(
    const float* g, const float* y, float* o, int64_t n, bool log);

/// One row of layer_norm ([centered]: x - mean(x)) or rms_norm (x as
/// is): y = xc * rstd, rstd = 1 / sqrt(mean(xc^2) + eps), then
/// y * gamma + beta where [gamma] is not null (beta may be null). Returns
/// the mean (0 when not centered) in [*mean] and rstd in [*rstd].
void norm(const float* x,
          float* y,
          int64_t n,
          float eps,
          bool centered,
          const float* gamma,
          const float* beta,
          float* mean,
          float* rstd);
/// Its VJP for one row: d = g * gamma (g where gamma is null), xhat =
/// (x - mean) * rstd, dx = rstd * (d - mean(d) - xhat * mean(d * xhat))
/// (without the mean(d) term when not [centered]); adds g * xhat to
/// [dgamma] and g to [dbeta] where they are not null.
void norm_backward(const float* g,
                   const float* x,
                   float mean,
                   float rstd,
                   bool centered,
                   const float* gamma,
                   float* dx,
                   float* dgamma,
                   float* dbeta,
                   int64_t n);

/// gelu on [n] values: 0.5 x (1 + erf(x / sqrt 2)), or with [tanh] 0.5 x
/// (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
void gelu(const float* x, float* y, int64_t n, bool tanh);
/// Its VJP: o = g * gelu'(x).
void gelu_backward(
    const float* g, const float* x, float* o, int64_t n, bool tanh);
/// The same two with AVX-512 F, VL and DQ, sixteen lanes at a time
/// (cpu_vgelu512.cpp); the caller checks the CPU.
void gelu512(const float* x, float* y, int64_t n, bool tanh);
void gelu_backward512(
    const float* g, const float* x, float* o, int64_t n, bool tanh);

/// where's row of 4-byte elements (f32, i32: only bits move): o[i] =
/// c[i] ? a[i * sa] : b[i * sb], the condition a run, [sa] and [sb] each 0
/// (one value repeated) or 1 (a run). masked_fill's row (a mask run, a
/// fill value, the scores run) is one of these.
void select32(const bool* c,
              const uint32_t* a,
              int64_t sa,
              const uint32_t* b,
              int64_t sb,
              uint32_t* o,
              int64_t n);

}  // namespace ss::ops::cpu::vrows
