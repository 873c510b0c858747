#include "ops/backend/backend.h"

#include "ops/backend/primitive_checks.h"

namespace ss::ops {

// The composition a backend without its own fused kernel runs: each step
// a pass over the output, with the bits of the ops written out.
std::array<Tensor, 2> Backend::matmul_epilogue(const Tensor& a,
                                               const Tensor& b,
                                               const Epilogue& e) {
  const backend::EpilogueGeometry g =
      backend::epilogue_geometry(a, b, e, name());
  Tensor a2 = a.reshape({g.rows, g.k});
  Tensor y = matmul(a2, b, false, false);
  if (e.scale != 1) scale_in_place(y, e.scale);
  if (e.bias.defined()) y = binary(BinaryOp::Add, y, e.bias);
  Tensor pre = e.keep_pre ? y : Tensor();
  switch (e.act) {
    case Activation::None:
      break;
    case Activation::Relu:
      y = unary(UnaryOp::Relu, y);
      break;
    case Activation::Gelu:
    case Activation::GeluTanh:
      y = gelu(y, e.act == Activation::GeluTanh);
      break;
  }
  if (e.residual.defined())
    y = binary(BinaryOp::Add, y, e.residual.reshape({g.rows, g.m}));
  return {y.reshape(g.out), pre.defined() ? pre.reshape(g.out) : pre};
}

Tensor Backend::activation_backward(Activation act,
                                    const Tensor& g,
                                    const Tensor& x) {
  switch (act) {
    case Activation::None:
      return g;
    case Activation::Relu: {
      Tensor zero = Tensor::full({}, 0, g.dtype(), g.device());
      Tensor off =
          binary(BinaryOp::Le, x, Tensor::full({}, 0, x.dtype(), x.device()));
      return where(off, zero, g);
    }
    case Activation::Gelu:
    case Activation::GeluTanh:
      break;
  }
  return gelu_backward(g, x, act == Activation::GeluTanh);
}

// Note [The thread's GPU]
// The CUDA runtime computes on each thread's current device, which starts
// as GPU 0 on every thread. A worker of cuda[0 1 2] holds its values on
// its own GPU, and more than its main thread computes with them (the
// gradient buckets' thread packs them, the loader threads gather batches):
// each op on a GPU first makes its operands' GPU the thread's, so rank 2's
// buckets are not packed by kernels of GPU 0. The stand-in GPU refuses an
// op whose thread's GPU is not its operands' (tests/stand_in_gpu).
Backend& backend_for(const Device& device) {
  if (device.kind == Device::Kind::Cuda) {
    Backend& b = cuda_backend();
    use_cuda_device(device.index);
    return b;
  }
  return cpu_backend();
}

}  // namespace ss::ops
