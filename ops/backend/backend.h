#pragma once
// The primitives a backend implements. Every op of the library (ops/defs)
// and every VJP is written with the differentiable API of ops/api.h, which
// calls these; so a new backend implements this interface once and every
// op runs on it. The CPU backend is ops/cpu; the CUDA one loads on demand
// (ops/no_cuda/stubs.cpp when built without CUDA). ref/ holds the naive
// executable specification the backends are tested against.
//
// Conventions: inputs are contiguous and defined; axes are non-negative and
// in range (callers normalise); callers cast operands to a common dtype
// first. A backend never sees an autodiff node.

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "ops/core/conv_shape.h"
#include "ops/core/tensor.h"

namespace ss::ops {

// The elementwise primitives, one value per row of ops/core/elementwise.def.
enum class UnaryOp : uint8_t {
#define SS_UNARY_OP(Enum, name, doc) Enum,
#include "ops/core/elementwise.def"
};

enum class BinaryOp : uint8_t {
#define SS_BINARY_OP(Enum, name, doc) Enum,
#include "ops/core/elementwise.def"
};

enum class ReduceOp : uint8_t { Sum, Prod, Max, Min, ArgMax, ArgMin, Any, All };

/// The activation a product's epilogue applies (Backend::matmul_epilogue).
enum class Activation : uint8_t { None, Relu, Gelu, GeluTanh };

/// What a product's epilogue does to each row as it is stored (Note
/// [Products with epilogues] in ops/cpu/cpu_epilogue.cpp): y = act(scale
/// * (a @ b) + bias) + residual.
struct Epilogue {
  double scale = 1;
  Tensor bias;  // [m], the output's dtype; undefined: none
  Activation act = Activation::None;
  Tensor residual;  // the output's shape and dtype; undefined: none
  /// Also give act's input, scale * (a @ b) + bias (gelu's VJP reads it).
  bool keep_pre = false;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char* name() const = 0;

  /// Elementwise: the dtypes each op takes and gives are its kind's in
  /// ops/core/elementwise.def (float functions take floats; the signed ones
  /// also ints; Not takes bool; predicates give bool).
  virtual Tensor unary(UnaryOp op, const Tensor& x) = 0;
  /// Elementwise with numpy broadcasting; [a] and [b] share a dtype, which
  /// the op's kind takes (ints for ARITH, not for TRUEDIV; bools only for
  /// EXTREMUM, COMPARE and LOGICAL: callers compute bool arithmetic in
  /// i64). Comparisons and And/Or give bool; FloorDiv and Mod are floored
  /// (Python's).
  virtual Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b) = 0;
  /// [x] *= [s] in [x]'s own buffer, which nothing else holds: the bits of
  /// binary(Mul, x, a 0-d [s] of x's dtype), without a second buffer (Note
  /// [Scaling a leaf's gradient in place] in ops/autodiff/tape.cpp).
  virtual void scale_in_place(Tensor& x, double s) = 0;
  /// cond ? a : b with broadcasting; cond is bool, a and b share a dtype.
  virtual Tensor where(const Tensor& cond,
                       const Tensor& a,
                       const Tensor& b) = 0;
  /// Reduces [axes] (sorted, distinct; empty means none). ArgMax/ArgMin
  /// take exactly one axis and give i64 (first index of the extreme);
  /// Any/All give bool; Sum of bool gives i64.
  virtual Tensor reduce(ReduceOp op,
                        const Tensor& x,
                        const std::vector<int>& axes,
                        bool keepdims) = 0;
  /// [..., n, k] @ [..., k, m] -> [..., n, m], batch axes broadcast; both
  /// of rank >= 2 and one float dtype (ints: i64 accumulation). With
  /// [trans_a] / [trans_b] the operand's last two axes are read swapped
  /// (BLAS's transpose flags: the VJPs need aᵀ·g and g·bᵀ, and copying a
  /// transpose of a [6144 784] batch costs more than the product).
  virtual Tensor matmul(const Tensor& a,
                        const Tensor& b,
                        bool trans_a,
                        bool trans_b) = 0;
  /// a [.., n, k] (the batch folded into the rows, rank >= 1) times b [k,
  /// m], f32 or f64, with [e] applied to each block of rows as it is
  /// stored: {y, pre}, pre defined only with e.keep_pre. The default
  /// composes matmul, binary and gelu (each a pass over the output); the
  /// CPU's fuses them (Note [Products with epilogues]).
  virtual std::array<Tensor, 2> matmul_epilogue(const Tensor& a,
                                                const Tensor& b,
                                                const Epilogue& e);
  /// An epilogue's activation, backward: g * act'(x), x the activation's
  /// input (or, for relu, its output: the same mask), f32 or f64. relu's
  /// is torch's threshold_backward: 0 where x <= 0, g elsewhere (a NaN x
  /// passes g). The default composes where/le and gelu_backward; the
  /// CPU's relu is one pass.
  virtual Tensor activation_backward(Activation act,
                                     const Tensor& g,
                                     const Tensor& x);
  virtual Tensor cast(const Tensor& x, DType to) = 0;
  /// out.shape[i] = x.shape[perm[i]].
  virtual Tensor permute(const Tensor& x, const std::vector<int>& perm) = 0;
  /// Materialises numpy broadcasting of [x] to [shape].
  virtual Tensor broadcast_to(const Tensor& x, const Shape& shape) = 0;
  /// Elements start, start+step, ... < stop along [axis] (step >= 1).
  virtual Tensor slice(
      const Tensor& x, int axis, int64_t start, int64_t stop, int64_t step) = 0;
  virtual Tensor concat(const std::vector<Tensor>& xs, int axis) = 0;
  /// [before] and [after] elements of [value] added along [axis].
  virtual Tensor pad(const Tensor& x,
                     int axis,
                     int64_t before,
                     int64_t after,
                     double value) = 0;
  /// Selects along [axis] by the i64 indices [idx] (in range: callers
  /// check): the axis is replaced by idx's shape (embedding, take).
  virtual Tensor take(const Tensor& x, const Tensor& idx, int axis) = 0;
  /// The transpose of take: a tensor whose [axis] has size [n], zero but
  /// for v's slices added at [idx] (repeated indices add up).
  virtual Tensor take_add(const Tensor& v,
                          const Tensor& idx,
                          int axis,
                          int64_t n) = 0;
  /// take_along_axis: idx has x's rank; out[..i..] = x[..idx[..i..]..].
  virtual Tensor gather(const Tensor& x, const Tensor& idx, int axis) = 0;
  /// The transpose of gather: zeros of [shape] with v added at idx.
  virtual Tensor scatter_add(const Shape& shape,
                             const Tensor& idx,
                             const Tensor& v,
                             int axis) = 0;
  virtual Tensor cumsum(const Tensor& x, int axis, bool reverse) = 0;
  /// A stable sort along [axis]: (values, i64 indices).
  virtual std::pair<Tensor, Tensor> sort(const Tensor& x,
                                         int axis,
                                         bool descending) = 0;
  /// Counter-based draws (Philox4x32-10): element i draws block
  /// (key, counter = (offset + i, stream)); uniform in [0, 1), or standard
  /// normal by Box-Muller of the block's first two words.
  virtual Tensor random(const Shape& shape,
                        DType dtype,
                        uint64_t key,
                        uint64_t stream,
                        uint64_t offset,
                        bool normal) = 0;
  /// A check made where its value lives (Note [Checks a recording defers]
  /// in ops/api.cpp): when the 0-d bool [flag] is true, the device's error
  /// word takes [code] (a backend::DeviceError), raised at the next copy to
  /// the host. The CPU raises it at once.
  virtual void flag_if(const Tensor& flag, unsigned code) = 0;
  /// One torch.optim.AdamW step for one param, in place on [p], [m], [v]
  /// (the optimizer's own tensors): fused, one pass, as torch's fused
  /// kernels. [step] counts this step (bias corrections).
  virtual void adamw_update(Tensor& p,
                            const Tensor& g,
                            Tensor& m,
                            Tensor& v,
                            double lr,
                            double beta1,
                            double beta2,
                            double eps,
                            double weight_decay,
                            int64_t step) = 0;
  /// One torch.optim.SGD step in place on [p] and, with momentum, [buf]
  /// ([first]: the buffer starts as a copy of the gradient).
  virtual void sgd_update(Tensor& p,
                          const Tensor& g,
                          Tensor* buf,
                          double lr,
                          double momentum,
                          double weight_decay,
                          bool nesterov,
                          bool first) = 0;
  /// Fused kernels (Note [Fused kernels] in ops/api_fused.cpp), on f32 or
  /// f64. softmax along the last axis: exp(x - m) / sum(exp(x - m)), m
  /// the row's max, or 0 where that is not finite (a row of -inf gives
  /// NaN, as torch); with [log], x - m - log(sum(exp(x - m))).
  virtual Tensor softmax_last(const Tensor& x, bool log) = 0;
  /// Its VJP from the output [y] and the cotangent [g]: y * (g - sum(g *
  /// y)), or with [log] g - exp(y) * sum(g), the sums along the last axis.
  virtual Tensor softmax_last_backward(const Tensor& g,
                                       const Tensor& y,
                                       bool log) = 0;
  /// layer_norm along the last axis ([centered]): xhat = (x - mean) *
  /// rstd, rstd = 1 / sqrt(var + eps) (biased variance, as torch), or
  /// rms_norm (not [centered]: mean 0, rstd = 1 / sqrt(mean(x^2) + eps));
  /// then xhat * gamma + beta where [gamma] is defined ([beta] may be
  /// undefined; both of x's last axis and dtype). Also mean and rstd,
  /// shaped like x without its last axis, for the VJP.
  virtual std::array<Tensor, 3> norm_last(const Tensor& x,
                                          double eps,
                                          bool centered,
                                          const Tensor& gamma,
                                          const Tensor& beta) = 0;
  /// Its VJP: with d = g * gamma (or g), rstd * (d - mean(d) - xhat *
  /// mean(d * xhat)), the means along the last axis (no mean(d) when not
  /// [centered]); where [gamma] is defined, also gamma's and beta's
  /// gradients, sum(g * xhat) and sum(g) over the other axes (Note [Norm
  /// gradients by fixed chunks]: the same for any thread count).
  virtual std::array<Tensor, 3> norm_last_backward(const Tensor& g,
                                                   const Tensor& x,
                                                   const Tensor& mean,
                                                   const Tensor& rstd,
                                                   bool centered,
                                                   const Tensor& gamma) = 0;
  /// gelu: x * Phi(x) (erf), or with [tanh] torch's approximate="tanh".
  virtual Tensor gelu(const Tensor& x, bool tanh) = 0;
  /// Its VJP: g * gelu'(x).
  virtual Tensor gelu_backward(const Tensor& g, const Tensor& x, bool tanh) = 0;
  /// Attention in one kernel (Note [Fused attention] in
  /// ops/cpu/cpu_attention.cpp), f32 or f64: q [.. n d], k [.. t d], v
  /// [.. t e] with the same leading axes -> o [.. n e] = softmax(scale * q
  /// k^T) v, the softmax over t, with [causal] only keys j <= i seen by
  /// row i (torch.tril's mask); also each row's log-sum-exp of the scaled
  /// scores, [.. n], for the VJP.
  virtual std::array<Tensor, 2> attention(const Tensor& q,
                                          const Tensor& k,
                                          const Tensor& v,
                                          double scale,
                                          bool causal) = 0;
  /// Its VJP for the cotangent [go] of o: dq, dk, dv.
  virtual std::array<Tensor, 3> attention_backward(const Tensor& go,
                                                   const Tensor& q,
                                                   const Tensor& k,
                                                   const Tensor& v,
                                                   const Tensor& o,
                                                   const Tensor& lse,
                                                   double scale,
                                                   bool causal) = 0;
  /// NCHW convolution: x [b C h w], k [O C/groups kh kw] -> [b O h2 w2]
  /// (ConvShape: stride, padding, dilation, groups).
  virtual Tensor conv2d(const Tensor& x,
                        const Tensor& k,
                        const ConvShape& cs) = 0;
  /// Its VJPs: w.r.t. the input and the kernel.
  virtual Tensor conv2d_grad_input(const Tensor& gy,
                                   const Tensor& k,
                                   const Shape& x_shape,
                                   const ConvShape& cs) = 0;
  virtual Tensor conv2d_grad_kernel(const Tensor& gy,
                                    const Tensor& x,
                                    const Shape& k_shape,
                                    const ConvShape& cs) = 0;
};

/// The backend of [device]'s kind. CUDA without a CUDA build throws
/// std::runtime_error("... built without CUDA").
Backend& backend_for(const Device& device);
/// The CPU backend (xtensor + OpenBLAS).
Backend& cpu_backend();
/// The CUDA backend (ops/cuda when built with CUDA; otherwise
/// ops/no_cuda/stubs.cpp, which throws std::runtime_error).
Backend& cuda_backend();
/// Another entry of the CUDA module ([name]: ss_nccl_join, the NCCL
/// communicators of dist/comm/nccl), opening it as cuda_backend() does;
/// std::runtime_error saying why when it cannot be opened or has no
/// [name].
void* cuda_module_symbol(const char* name);
/// How many GPUs answer (0 where the CUDA backend does not load).
int cuda_device_count();
/// What computes on GPU [index]: its model, compute capability and SM
/// count, and the libraries' versions (deterministic mode's check that
/// every rank has the same kernels).
std::string cuda_kernel_signature(int index);
/// Makes GPU [index] this thread's (cudaSetDevice), where the CUDA
/// backend's kernels run and its outputs are allocated: backend_for calls
/// it for every op on a GPU (Note [The thread's GPU] in backend.cpp).
void use_cuda_device(int index);

}  // namespace ss::ops
