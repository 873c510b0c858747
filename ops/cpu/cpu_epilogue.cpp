// Note [Products with epilogues]
// A layer is a product and then a few elementwise steps on its output:
// `relu(x @ w + b)`, `gelu(linear(l, x))`, `h + linear(l, x)`. Run op by op
// each step is a pass over the whole output, and at a step's sizes the
// output does not stay in cache between passes (the README MLP's 6144 x
// 256 hidden layer is 6 MiB): the product writes it to memory, the bias
// reads it back and writes it again, the activation once more.
// matmul_epilogue runs the product over blocks of rows small enough that
// a block's output is still in L2 when the product has stored it
// (kBlockBytes), and applies the epilogue to that block at once: scale,
// bias, the activation, the residual, each value touched once while hot.
// The interpreter's checker sends these layers here (Note [Layers run as
// one product] in interp/check/fusion_products.cpp), and `linear` always.
//
// Why blocks of our own and not oneDNN's matmul primitive with post-ops
// (bias, eltwise_relu / eltwise_gelu_erf, binary_add), which applies them
// in registers: measured in bench/epilogue_probe.cpp (one thread, this
// machine): the primitive equals sgemm + blocks on the MLP's shapes but is
// slower on others (512 x 128 x 512: 1.2x), costs 2-6 us per call to find
// its cached kernel (a step has a dozen products) and rounds gelu its own
// way; the blocks keep gemm's choice (oneDNN's sgemm for f32, OpenBLAS for
// f64 and deterministic mode, Note [f32 products on oneDNN]), so a fused
// layer's product has the bits of the same product unfused.
//
// Bits: each output value is the product's value, then `* scale`, `+
// bias`, the activation and `+ residual`, each rounded as the ops written
// out round it (the activation is the same loop as relu's and gelu's
// kernels), so where the rows are one block a fused layer equals the
// layer written out bit for bit (tested in f64); over several blocks the
// product is several calls, which BLAS may run through other kernels (a
// row of OpenBLAS's dgemm over 96 rows differed in its last bit from the
// same row over 300), so the values agree to rounding. Deterministic mode
// is unaffected: its ranks split a batch into the same chunks on any
// number of devices (Note [Deterministic mode]), and the blocks of a chunk
// are the same on each.

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "ops/backend/primitive_checks.h"
#include "ops/cpu/cpu_common.h"
#include "ops/cpu/cpu_rows.h"
#include "ops/cpu/cpu_threads.h"

namespace ss::ops::cpu {

namespace {

/// A block's output stays within this many bytes: under a core's L2 (1
/// MiB on the Zen 4/5 here, 512 KiB on older ones) with room for the
/// operands' panels.
constexpr int64_t kBlockBytes = 256 * 1024;

/// Rows per block: whole multiples of 16 (the kernels' row tiles), at
/// least 16.
int64_t block_rows(int64_t m, int64_t elem) {
  const int64_t r = kBlockBytes / std::max<int64_t>(1, m * elem);
  return std::max<int64_t>(16, r / 16 * 16);
}

/// Rows per thread below which a second thread costs more than it saves
/// (as onednn_sgemm's split: about 2^18 multiply-adds).
int64_t row_grain(int64_t m, int64_t k) {
  return std::max<int64_t>(8, (int64_t{1} << 18) / std::max<int64_t>(1, m * k));
}

template <class T>
struct Rows {
  const T* a;
  const T* b;
  const T* bias;
  const T* residual;
  T* y;
  T* pre;
  int64_t k, m;
  T scale;
  Activation act;
};

/// The epilogue of rows [r0, r1), whose products are in y.
template <class T>
void epilogue(const Rows<T>& p, int64_t r0, int64_t r1) {
  const int64_t m = p.m;
  std::vector<T> scratch;  // gelu's input where pre is not kept
  for (int64_t r = r0; r < r1; ++r) {
    T* y = p.y + r * m;
    if (p.scale != T(1))
      for (int64_t j = 0; j < m; ++j) y[j] = y[j] * p.scale;
    if (p.bias)
      for (int64_t j = 0; j < m; ++j) y[j] = y[j] + p.bias[j];
    if (p.pre) std::copy(y, y + m, p.pre + r * m);
    switch (p.act) {
      case Activation::None:
        break;
      case Activation::Relu:  // relu's own loop (elementwise.def)
        for (int64_t j = 0; j < m; ++j)
          y[j] = y[j] > 0 || std::isnan(y[j]) ? y[j] : T(0);
        break;
      case Activation::Gelu:
      case Activation::GeluTanh: {
        // gelu_run reads x after writing y: not in place.
        const T* in = p.pre ? p.pre + r * m : nullptr;
        if (!in) {
          scratch.assign(y, y + m);
          in = scratch.data();
        }
        gelu_run(in, y, m, p.act == Activation::GeluTanh);
        break;
      }
    }
    if (p.residual)
      for (int64_t j = 0; j < m; ++j) y[j] = y[j] + p.residual[r * m + j];
  }
}

/// Rows [r0, r1) block by block: each block's product, then its epilogue.
template <class T>
void run_rows(const Rows<T>& p, int64_t r0, int64_t r1) {
  const int64_t step = block_rows(p.m, sizeof(T));
  for (int64_t b0 = r0; b0 < r1; b0 += step) {
    const int64_t b1 = std::min(r1, b0 + step);
    gemm<T>(false,
            false,
            b1 - b0,
            p.m,
            p.k,
            T(1),
            p.a + b0 * p.k,
            p.k,
            p.b,
            p.m,
            T(0),
            p.y + b0 * p.m,
            p.m);
    epilogue(p, b0, b1);
  }
}

}  // namespace

std::array<Tensor, 2> matmul_epilogue(const Tensor& a,
                                      const Tensor& b,
                                      const Epilogue& e) {
  const backend::EpilogueGeometry g =
      backend::epilogue_geometry(a, b, e, kBackend);
  Tensor y = Tensor::empty(g.out, a.dtype());
  Tensor pre = e.keep_pre ? Tensor::empty(g.out, a.dtype()) : Tensor();
  if (y.numel() == 0) return {y, pre};
  visit_float(a.dtype(), "matmul_epilogue", [&](auto tag) {
    using T = decltype(tag);
    Rows<T> p{a.data<T>(),
              b.data<T>(),
              e.bias.defined() ? e.bias.data<T>() : nullptr,
              e.residual.defined() ? e.residual.data<T>() : nullptr,
              y.data<T>(),
              pre.defined() ? pre.data<T>() : nullptr,
              g.k,
              g.m,
              T(e.scale),
              e.act};
    if (g.k == 0) {  // an empty sum: the epilogue of zeros
      std::fill(p.y, p.y + y.numel(), T(0));
      epilogue(p, 0, g.rows);
      return;
    }
    // f32 on oneDNN: rows split over the intra-op threads here, each
    // thread's blocks one product each (gemm's own split then runs inline).
    // OpenBLAS (f64, deterministic mode) threads each block itself.
    if (std::is_same_v<T, float> && !products_on_openblas())
      parallel_for(g.rows, row_grain(g.m, g.k), [&](int64_t r0, int64_t r1) {
        run_rows(p, r0, r1);
      });
    else
      run_rows(p, 0, g.rows);
  });
  return {y, pre};
}

// relu's VJP in one pass over g and x (threshold_backward), where the ops
// written out take two (the mask, then the select) and a bool temporary;
// gelu's is its fused kernel's.
Tensor activation_backward(Activation act, const Tensor& g, const Tensor& x) {
  if (act == Activation::None) return g;
  if (act != Activation::Relu)
    return gelu_backward(g, x, act == Activation::GeluTanh);
  if (g.shape() != x.shape() || g.dtype() != x.dtype())
    backend::fail(
        kBackend, "relu_backward", "g and x differ in shape or dtype");
  Tensor out = Tensor::empty(x.shape(), x.dtype());
  visit_float(x.dtype(), "relu_backward", [&](auto tag) {
    using T = decltype(tag);
    const T* __restrict px = x.data<T>();
    const T* __restrict pg = g.data<T>();
    T* __restrict po = out.data<T>();
    parallel_for(x.numel(), kElementGrain, [&](int64_t b, int64_t e) {
      // Both loads unconditional, so the select is a vector blend (a
      // conditional load of g kept the loop scalar, with a branch that
      // relu's random mask mispredicts half the time).
      for (int64_t i = b; i < e; ++i) {
        const T xv = px[i], gv = pg[i];
        po[i] = xv <= T(0) ? T(0) : gv;
      }
    });
  });
  return out;
}

}  // namespace ss::ops::cpu
