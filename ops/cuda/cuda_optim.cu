// Fused optimizer steps on the GPU, the twins of ops/cpu/cpu_optim.cpp:
// one thread per element runs ops/core/optim_step.h's element step, the
// very code of the CPU's loops, with each operation rounded as written
// (Note [Optimizer steps without contraction]): the CPU's bits, on any
// grid. The step's constants are made on the host in double, as the CPU
// makes them. Floats natively; halves through f32 as the CPU, the result
// copied back into the param's (and state's) own buffers.

#include <string>

#include "ops/backend/primitive_checks.h"
#include "ops/core/optim_step.h"
#include "ops/cuda/cuda_common.cuh"

namespace ss::ops::cuda {

namespace {

/// [dst]'s own buffer takes [src]'s bytes (same shape and dtype), on
/// stream(): the caller's tensor keeps its storage.
void copy_into(Tensor& dst, const Tensor& src) {
  if (dst.nbytes() == 0) return;
  SS_CUDA_CHECK(cudaMemcpyAsync(
      dst.raw(), src.raw(), dst.nbytes(), cudaMemcpyDeviceToDevice, stream()));
}

// The element steps as functors, not lambdas: a replay's refresh changes
// their constants in the recorded graph (patch_for_each, Note [Recorded
// steps on a GPU] in cuda_recording.cu).
template <class T>
struct AdamwStep {
  T* p;
  const T* g;
  T* m;
  T* v;
  optim::AdamwConsts<T> c;
  __device__ void operator()(int64_t i) const {
    T pi = p[i], mi = m[i], vi = v[i];
    optim::adamw_element(pi, g[i], mi, vi, c);
    p[i] = pi;
    m[i] = mi;
    v[i] = vi;
  }
};

template <class T>
struct SgdStep {
  T* p;
  const T* g;
  T* buf;
  optim::SgdConsts<T> c;
  __device__ void operator()(int64_t i) const {
    optim::sgd_element(p[i], g[i], buf ? buf + i : nullptr, c);
  }
};

template <class T>
void adamw_kernel(Tensor& p,
                  const Tensor& g,
                  Tensor& m,
                  Tensor& v,
                  const optim::AdamwConsts<T>& c) {
  for_each_patchable(
      p.numel(),
      "adamw",
      AdamwStep<T>{ptr<T>(p), ptr<T>(g), ptr<T>(m), ptr<T>(v), c});
}

template <class T>
void sgd_kernel(Tensor& p,
                const Tensor& g,
                Tensor* buf,
                const optim::SgdConsts<T>& c) {
  for_each_patchable(
      p.numel(),
      "sgd",
      SgdStep<T>{ptr<T>(p), ptr<T>(g), buf ? ptr<T>(*buf) : nullptr, c});
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
  if (patching()) {  // a replay's refresh: the new constants only
    if (p.dtype() == DType::F64)
      patch_for_each<AdamwStep<double>>(p.numel(), [&](AdamwStep<double>& k) {
        k.c = optim::adamw_consts<double>(lr, b1, b2, eps, wd, step);
      });
    else
      patch_for_each<AdamwStep<float>>(p.numel(), [&](AdamwStep<float>& k) {
        k.c = optim::adamw_consts<float>(lr, b1, b2, eps, wd, step);
      });
    return;
  }
  Tensor g = backend::optim_gradient(p, g0, kBackend, "adamw", &cast);
  if (is_half(p.dtype())) {
    Tensor pf = to_f32(p), mf = to_f32(m), vf = to_f32(v), gf = to_f32(g);
    adamw_kernel(
        pf, gf, mf, vf, optim::adamw_consts<float>(lr, b1, b2, eps, wd, step));
    copy_into(p, from_f32(pf, p.dtype()));
    copy_into(m, from_f32(mf, m.dtype()));
    copy_into(v, from_f32(vf, v.dtype()));
  } else if (p.dtype() == DType::F64) {
    adamw_kernel(
        p, g, m, v, optim::adamw_consts<double>(lr, b1, b2, eps, wd, step));
  } else {
    adamw_kernel(
        p, g, m, v, optim::adamw_consts<float>(lr, b1, b2, eps, wd, step));
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
  if (patching()) {  // a replay's refresh: the new constants only
    if (p.dtype() == DType::F64)
      patch_for_each<SgdStep<double>>(p.numel(), [&](SgdStep<double>& k) {
        k.c = optim::sgd_consts<double>(lr, momentum, wd, nesterov, first);
      });
    else
      patch_for_each<SgdStep<float>>(p.numel(), [&](SgdStep<float>& k) {
        k.c = optim::sgd_consts<float>(lr, momentum, wd, nesterov, first);
      });
    return;
  }
  Tensor g = backend::optim_gradient(p, g0, kBackend, "sgd", &cast);
  if (is_half(p.dtype())) {
    Tensor pf = to_f32(p), gf = to_f32(g);
    Tensor bf = buf ? to_f32(*buf) : Tensor();
    sgd_kernel(pf,
               gf,
               buf ? &bf : nullptr,
               optim::sgd_consts<float>(lr, momentum, wd, nesterov, first));
    copy_into(p, from_f32(pf, p.dtype()));
    if (buf) copy_into(*buf, from_f32(bf, buf->dtype()));
  } else if (p.dtype() == DType::F64) {
    sgd_kernel(p,
               g,
               buf,
               optim::sgd_consts<double>(lr, momentum, wd, nesterov, first));
  } else {
    sgd_kernel(
        p, g, buf, optim::sgd_consts<float>(lr, momentum, wd, nesterov, first));
  }
}

}  // namespace ss::ops::cuda
