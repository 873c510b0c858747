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

template <class T>
void adamw_kernel(Tensor& p,
                  const Tensor& g,
                  Tensor& m,
                  Tensor& v,
                  const optim::AdamwConsts<T>& c) {
  T* pp = ptr<T>(p);
  const T* pg = ptr<T>(g);
  T* pm = ptr<T>(m);
  T* pv = ptr<T>(v);
  for_each(p.numel(), "adamw", [=] __device__(int64_t i) {
    T pi = pp[i], mi = pm[i], vi = pv[i];
    optim::adamw_element(pi, pg[i], mi, vi, c);
    pp[i] = pi;
    pm[i] = mi;
    pv[i] = vi;
  });
}

template <class T>
void sgd_kernel(Tensor& p,
                const Tensor& g,
                Tensor* buf,
                const optim::SgdConsts<T>& c) {
  T* pp = ptr<T>(p);
  const T* pg = ptr<T>(g);
  T* pb = buf ? ptr<T>(*buf) : nullptr;
  for_each(p.numel(), "sgd", [=] __device__(int64_t i) {
    optim::sgd_element(pp[i], pg[i], pb ? pb + i : nullptr, c);
  });
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
