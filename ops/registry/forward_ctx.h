#pragma once
// What a builtin's forward sees of its call at run time. The evaluator
// implements it. Forwards compute with the differentiable API (ops/api.h),
// so gradients, other backends and (later) several devices follow.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ops/core/tensor.h"
#include "ops/core/type.h"

namespace ss::ops {

class MeshComm;

/// Where a random op draws from: Philox key and stream; element i of the
/// whole value draws counter (offset + i, stream).
struct RandomStream {
  uint64_t key = 0;
  uint64_t stream = 0;
  uint64_t offset = 0;
};

class ForwardCtx {
 public:
  virtual ~ForwardCtx() = default;
  virtual const char* op_name() const = 0;
  /// Whether param [i] was given (defaults are not).
  virtual bool has(size_t i) const = 0;
  /// Param [i] as a tensor. A host number becomes a 0-d tensor by torch's
  /// weak-scalar rule against the call's tensor arguments (0.5 with a bf16
  /// tensor is bf16; with an int tensor f32).
  virtual Tensor tensor(size_t i) = 0;
  /// Param [i] as a host number (a 0-d tensor is read on the host).
  virtual double number(size_t i) = 0;
  virtual int64_t integer(size_t i) = 0;
  /// A bool param, or [dflt] when not given.
  virtual bool flag(size_t i, bool dflt) = 0;
  virtual std::string str(size_t i) = 0;
  /// A list or tuple of tensors (concat, stack).
  virtual std::vector<Tensor> tensors(size_t i) = 0;
  /// `over=` as the checker resolved it: positions in the operand, in the
  /// order written; nullopt when not given.
  virtual std::optional<std::vector<int>> axes(size_t i) = 0;
  /// A size given as a value (`topk(x, K)`, `arange(N)`, `pad(to=8)`).
  virtual int64_t size(size_t i) = 0;
  /// The run-time size of an axis passed by name (`causal(n, t)`,
  /// `stack(xs, new=N)`, `size(x, A)`'s A).
  virtual int64_t axis_size(size_t i) = 0;
  /// A type argument (`zeros([b D] f64)`): its shape with this call's
  /// size variables put in, and its dtype.
  virtual Shape shape_arg(size_t i) = 0;
  virtual DType dtype_arg(size_t i) = 0;
  /// The checker's types of the result and of param [i].
  virtual const types::Type& result_type() const = 0;
  virtual const types::Type& arg_type(size_t i) const = 0;
  /// A Mode param: true for Train(seed=...).
  virtual bool training(size_t i) = 0;
  /// The next draw of this call (language.md, Randomness): dropout draws
  /// from the Train mode in param [mode_param]; rand/randn from seed=.
  virtual RandomStream random(size_t param) = 0;
  /// Where a value this op makes from nothing goes (zeros(T), arange,
  /// rand): the run's device (Note [Values on a GPU] in
  /// interp/devices/one_device.cpp); the CPU by default.
  virtual Device device() const { return {}; }
  /// A model argument's field (batch_norm's buffers), read and replaced.
  virtual Tensor model_field(size_t i, const std::string& path) = 0;
  virtual void set_model_field(size_t i,
                               const std::string& path,
                               const Tensor& t) = 0;
  /// Part [k] of an op run in parts (Note [An op in parts under split H]
  /// in device_rule.h): [run] of [operands], the part's tensor operands in
  /// the order its HeadsPart types them. Under `split H` the evaluator
  /// plans it; elsewhere it is run(operands).
  virtual Tensor part(size_t k,
                      std::vector<Tensor> operands,
                      const std::function<Tensor(std::vector<Tensor>&)>& run) {
    return run(operands);
  }
  /// Whether the program runs under `split H`, where an op with parts
  /// must run each through part() (linear fuses its bias otherwise).
  virtual bool heads_split() const { return false; }
  /// Inside an instance of an spmd fn: its mesh (Note [Mesh collectives]
  /// in mesh_comm.h); null elsewhere.
  virtual MeshComm* mesh() { return nullptr; }
  /// The mesh axes named by param [i] (`psum(v, (x, y))`), as the checker
  /// resolved them.
  virtual std::vector<std::string> mesh_axes(size_t i) { return {}; }
};

/// A builtin's forward: one tensor, or several for a tuple result.
using Forward = std::vector<Tensor> (*)(ForwardCtx& ctx);

}  // namespace ss::ops
