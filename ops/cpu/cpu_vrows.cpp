// Note [Vector row kernels]
// The fused softmax, log_softmax, layer_norm and rms_norm kernels (Note
// [Fused kernels] in ops/api_fused.cpp) walk a row of the last axis a few
// times, and gelu a cached block; in f32 these walks are eight-lane AVX2
// loops here, as torch's
// vectorised kernels are, instead of the portable loops of cpu_fused.cpp
// (built for any x86-64, four lanes at best), which still serve f64 and
// CPUs without AVX2. Like cpu_vmath.cpp, this TU alone (with it) is built
// with -mavx2 -mfma and includes no project header but
// cpu_vmath_avx2.h, whose exp it shares: the softmax's exp is the
// vector exp of Note [Vector transcendentals] (within 1.5 ulp of libm),
// so a row gives what unary exp gives on the same values.
//
// Sums are eight partial sums added at the end, so they round differently
// from the scalar loops' (a few ulp over a row); every element of a row
// sees the same function wherever it lies (the tail of a row goes through
// a padded batch, not a scalar loop, where a transcendental is applied).
//
// where's row of 4-byte elements is here too: the portable loop selects
// element by element (a byte condition against 4-byte values does not
// vectorise without SSE4.1), 6.3 ms of the mid LM's 47 ms a step outside
// sgemm, in masked_fill and its VJP; here eight bytes of condition widen
// to a lane mask and blend eight values at a time (1.9 ms).

#include "ops/cpu/cpu_vrows.h"

#include <immintrin.h>

#include "ops/cpu/cpu_vgelu.h"
#include "ops/cpu/cpu_vmath_avx2.h"

namespace ss::ops::cpu::vrows {

namespace {

using namespace vmath::avx2;

float hsum(Batch v) {
  return xsimd::hadd(v);
}

float hmax(Batch v) {
  alignas(32) float b[W];
  v.store_aligned(b);
  float m = b[0];
  for (int64_t j = 1; j < W; ++j) m = b[j] > m ? b[j] : m;
  return m;
}

/// The row's max, NaN if it holds one, or 0 where that is not finite (a
/// row of -inf is shifted by 0), as cpu_fused.cpp's row_shift.
float row_shift(const float* x, int64_t n) {
  Batch m(-kInf);
  Mask nan(false);
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    Batch v = Batch::load_unaligned(x + i);
    m = xsimd::max(m, v);
    nan = nan | (v != v);
  }
  if (i < n) {
    Batch v = load_tail(x + i, n - i, -kInf);
    m = xsimd::max(m, v);
    nan = nan | (v != v);
  }
  float mx = xsimd::any(nan) ? __builtin_nanf("") : hmax(m);
  return std::isfinite(mx) ? mx : 0.0f;
}

}  // namespace

void softmax(const float* x, float* y, int64_t n, bool log, float* lse) {
  const float m = row_shift(x, n);
  const Batch mb(m);
  Batch s(0.0f);
  int64_t i = 0;
  // log_softmax keeps x for the last pass, so y (which may be x) is not
  // written with the exps.
  for (; i + W <= n; i += W) {
    Batch e = exp(Batch::load_unaligned(x + i) - mb);
    if (!log) e.store_unaligned(y + i);
    s += e;
  }
  const int64_t k = n - i;
  if (k > 0) {
    Batch e = exp(load_tail(x + i, k, -kInf) - mb);  // padding: exp gives 0
    if (!log) store_tail(e, y + i, k);
    s += e;
  }
  const float sum = hsum(s);
  if (lse) *lse = m + std::log(sum);
  if (log) {  // (x - m) - log(s): m + log(s) first would round at 1000
    const Batch ls(std::log(sum));
    for (i = 0; i + W <= n; i += W)
      ((Batch::load_unaligned(x + i) - mb) - ls).store_unaligned(y + i);
    for (; i < n; ++i) y[i] = (x[i] - m) - std::log(sum);
    return;
  }
  const Batch inv(1.0f / sum);
  for (i = 0; i + W <= n; i += W)
    (Batch::load_unaligned(y + i) * inv).store_unaligned(y + i);
  for (; i < n; ++i) y[i] *= 1.0f / sum;
}

void softmax_backward(
    const float* g, const float* y, float* o, int64_t n, bool log) {
  int64_t i = 0;
  Batch s(0.0f);
  if (log) {  // g - softmax * sum(g), softmax = exp(log_softmax)
    for (; i + W <= n; i += W) s += Batch::load_unaligned(g + i);
    if (i < n) s += load_tail(g + i, n - i, 0.0f);
    const Batch sb(hsum(s));
    for (i = 0; i + W <= n; i += W)
      (Batch::load_unaligned(g + i) - exp(Batch::load_unaligned(y + i)) * sb)
          .store_unaligned(o + i);
    if (i < n)
      store_tail(load_tail(g + i, n - i, 0.0f) -
                     exp(load_tail(y + i, n - i, -kInf)) * sb,
                 o + i,
                 n - i);
    return;
  }
  // y * (g - sum(g * y))
  for (; i + W <= n; i += W)
    s = xsimd::fma(
        Batch::load_unaligned(g + i), Batch::load_unaligned(y + i), s);
  if (i < n) s += load_tail(g + i, n - i, 0.0f) * load_tail(y + i, n - i, 0.0f);
  const float d = hsum(s);
  const Batch db(d);
  for (i = 0; i + W <= n; i += W) {
    Batch yv = Batch::load_unaligned(y + i);
    (yv * (Batch::load_unaligned(g + i) - db)).store_unaligned(o + i);
  }
  for (; i < n; ++i) o[i] = y[i] * (g[i] - d);
}

void norm(const float* x,
          float* y,
          int64_t n,
          float eps,
          bool centered,
          const float* gamma,
          const float* beta,
          float* mean,
          float* rstd) {
  // Two walks for the statistics, as the composite's mean and variance:
  // the mean, then the mean of squared deviations.
  int64_t i = 0;
  float mu = 0;
  if (centered) {
    Batch s(0.0f);
    for (; i + W <= n; i += W) s += Batch::load_unaligned(x + i);
    if (i < n) s += load_tail(x + i, n - i, 0.0f);
    mu = hsum(s) / float(n);
  }
  const Batch mb(mu);
  Batch q(0.0f);
  for (i = 0; i + W <= n; i += W) {
    Batch c = Batch::load_unaligned(x + i) - mb;
    q = xsimd::fma(c, c, q);
  }
  if (i < n) {
    Batch c = load_tail(x + i, n - i, mu) - mb;  // padding: deviation 0
    q = xsimd::fma(c, c, q);
  }
  const float r = 1.0f / std::sqrt(hsum(q) / float(n) + eps);
  const Batch rb(r);
  for (i = 0; i + W <= n; i += W) {
    Batch v = (Batch::load_unaligned(x + i) - mb) * rb;
    if (gamma)
      v = xsimd::fma(v,
                     Batch::load_unaligned(gamma + i),
                     beta ? Batch::load_unaligned(beta + i) : Batch(0.0f));
    v.store_unaligned(y + i);
  }
  for (; i < n; ++i) {
    float v = (x[i] - mu) * r;
    y[i] = gamma ? v * gamma[i] + (beta ? beta[i] : 0.0f) : v;
  }
  *mean = mu;
  *rstd = r;
}

void norm_backward(const float* g,
                   const float* x,
                   float mean,
                   float rstd,
                   bool centered,
                   const float* gamma,
                   float* dx,
                   float* dgamma,
                   float* dbeta,
                   int64_t n) {
  const Batch mb(mean), rb(rstd);
  auto d_of = [&](int64_t i, Batch gv) {
    return gamma ? gv * Batch::load_unaligned(gamma + i) : gv;
  };
  Batch sd(0.0f), sdx(0.0f);
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    Batch gv = Batch::load_unaligned(g + i);
    Batch xh = (Batch::load_unaligned(x + i) - mb) * rb;
    Batch d = d_of(i, gv);
    sd += d;
    sdx = xsimd::fma(d, xh, sdx);
    if (dgamma)
      xsimd::fma(gv, xh, Batch::load_unaligned(dgamma + i))
          .store_unaligned(dgamma + i);
    if (dbeta)
      (Batch::load_unaligned(dbeta + i) + gv).store_unaligned(dbeta + i);
  }
  float tail_d = 0, tail_dx = 0;
  for (int64_t j = i; j < n; ++j) {
    float xh = (x[j] - mean) * rstd;
    float d = gamma ? g[j] * gamma[j] : g[j];
    tail_d += d;
    tail_dx += d * xh;
    if (dgamma) dgamma[j] += g[j] * xh;
    if (dbeta) dbeta[j] += g[j];
  }
  const float md = centered ? (hsum(sd) + tail_d) / float(n) : 0.0f;
  const float mdx = (hsum(sdx) + tail_dx) / float(n);
  const Batch mdb(md), mdxb(mdx);
  for (i = 0; i + W <= n; i += W) {
    Batch xh = (Batch::load_unaligned(x + i) - mb) * rb;
    Batch d = d_of(i, Batch::load_unaligned(g + i));
    (rb * (d - mdb - xh * mdxb)).store_unaligned(dx + i);
  }
  for (; i < n; ++i) {
    float xh = (x[i] - mean) * rstd;
    float d = gamma ? g[i] * gamma[i] : g[i];
    dx[i] = rstd * (d - md - xh * mdx);
  }
}

// gelu and its VJP: cpu_vgelu.h's, for AVX2 here (and AVX-512 in
// cpu_vgelu512.cpp), as cpu_fused.cpp's portable gelu and gelu_backward in
// registers: the same erf, tanh and exp (Note [Vector transcendentals]),
// the arithmetic around them in eight lanes instead of three passes over a
// block.
void gelu(const float* x, float* y, int64_t n, bool tanh) {
  vgelu::gelu<xsimd::avx2>(x, y, n, tanh);
}

void gelu_backward(
    const float* g, const float* x, float* o, int64_t n, bool tanh) {
  vgelu::gelu_backward<xsimd::avx2>(g, x, o, n, tanh);
}

void select32(const bool* c,
              const uint32_t* a,
              int64_t sa,
              const uint32_t* b,
              int64_t sb,
              uint32_t* o,
              int64_t n) {
  const __m256i zero = _mm256_setzero_si256();
  const __m256i a1 = _mm256_set1_epi32(static_cast<int>(a[0]));
  const __m256i b1 = _mm256_set1_epi32(static_cast<int>(b[0]));
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m128i cb = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(c + i));
    __m256i m = _mm256_cmpgt_epi32(_mm256_cvtepu8_epi32(cb), zero);
    __m256i x =
        sa ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + i)) : a1;
    __m256i y =
        sb ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + i)) : b1;
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(o + i),
                        _mm256_blendv_epi8(y, x, m));
  }
  for (; i < n; ++i) o[i] = c[i] ? a[i * sa] : b[i * sb];
}

}  // namespace ss::ops::cpu::vrows
