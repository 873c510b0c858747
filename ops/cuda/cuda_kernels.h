#pragma once
// Internal to ops/cuda: the kernels' entry points, one group per .cu file,
// each the CUDA twin of its ops/cpu/cpu_common.h namesake (same contract as
// ops/backend/backend.h states it). CudaBackend (cuda_backend.cu) forwards
// the Backend interface to these. Plain C++: no CUDA types here.

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "ops/backend/backend.h"

namespace ss::ops::cuda {

// cuda_elementwise.cu
Tensor unary(UnaryOp op, const Tensor& x);
Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b);
void scale_in_place(Tensor& x, double s);
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
Tensor cast(const Tensor& x, DType to);
// cuda_shape.cu
Tensor permute(const Tensor& x, const std::vector<int>& perm);
Tensor broadcast_to(const Tensor& x, const Shape& shape);
Tensor slice(
    const Tensor& x, int axis, int64_t start, int64_t stop, int64_t step);
Tensor concat(const std::vector<Tensor>& xs, int axis);
Tensor pad(
    const Tensor& x, int axis, int64_t before, int64_t after, double value);
// cuda_reduce.cu
Tensor reduce(ReduceOp op,
              const Tensor& x,
              const std::vector<int>& axes,
              bool keepdims);
Tensor cumsum(const Tensor& x, int axis, bool reverse);
std::pair<Tensor, Tensor> sort(const Tensor& x, int axis, bool descending);
// cuda_index_ops.cu
Tensor take(const Tensor& x, const Tensor& idx, int axis);
Tensor take_add(const Tensor& v, const Tensor& idx, int axis, int64_t n);
Tensor gather(const Tensor& x, const Tensor& idx, int axis);
Tensor scatter_add(const Shape& shape,
                   const Tensor& idx,
                   const Tensor& v,
                   int axis);
/// Note [Checks a recording defers] (ops/api.cpp): [code] into the error
/// word when the 0-d [flag] is true.
void flag_if(const Tensor& flag, unsigned code);
// cuda_matmul.cu
Tensor matmul(const Tensor& a, const Tensor& b, bool trans_a, bool trans_b);
// cuda_random.cu
Tensor random(const Shape& shape,
              DType dtype,
              uint64_t key,
              uint64_t stream,
              uint64_t offset,
              bool normal);
// cuda_optim.cu
void adamw_update(Tensor& p,
                  const Tensor& g,
                  Tensor& m,
                  Tensor& v,
                  double lr,
                  double b1,
                  double b2,
                  double eps,
                  double wd,
                  int64_t step);
void sgd_update(Tensor& p,
                const Tensor& g,
                Tensor* buf,
                double lr,
                double momentum,
                double wd,
                bool nesterov,
                bool first);
// cuda_fused.cu
Tensor softmax_last(const Tensor& x, bool log);
Tensor softmax_last_backward(const Tensor& g, const Tensor& y, bool log);
std::array<Tensor, 3> norm_last(const Tensor& x,
                                double eps,
                                bool centered,
                                const Tensor& gamma,
                                const Tensor& beta);
std::array<Tensor, 3> norm_last_backward(const Tensor& g,
                                         const Tensor& x,
                                         const Tensor& mean,
                                         const Tensor& rstd,
                                         bool centered,
                                         const Tensor& gamma);
Tensor gelu(const Tensor& x, bool tanh);
Tensor gelu_backward(const Tensor& g, const Tensor& x, bool tanh);
// cuda_attention.cu
std::array<Tensor, 2> attention(const Tensor& q,
                                const Tensor& k,
                                const Tensor& v,
                                double scale,
                                bool causal);
std::array<Tensor, 3> attention_backward(const Tensor& go,
                                         const Tensor& q,
                                         const Tensor& k,
                                         const Tensor& v,
                                         const Tensor& o,
                                         const Tensor& lse,
                                         double scale,
                                         bool causal);
// cuda_conv.cu
Tensor conv2d(const Tensor& x, const Tensor& k, const ConvShape& cs);
Tensor conv2d_grad_input(const Tensor& gy,
                         const Tensor& k,
                         const Shape& x_shape,
                         const ConvShape& cs);
Tensor conv2d_grad_kernel(const Tensor& gy,
                          const Tensor& x,
                          const Shape& k_shape,
                          const ConvShape& cs);

}  // namespace ss::ops::cuda
