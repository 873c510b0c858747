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

Backend& backend_for(const Device& device) {
  if (device.kind == Device::Kind::Cuda) return cuda_backend();
  return cpu_backend();
}

}  // namespace ss::ops
