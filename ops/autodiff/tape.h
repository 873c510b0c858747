#pragma once
// Reverse-mode autodiff on the differentiable API (ops/api.h). While grad
// mode is on, every API op whose inputs need gradients records a Node with
// its VJP, itself written with API ops; backward() walks the nodes in
// reverse order of creation and sums each input's cotangents. Leaves are
// tensors marked with requires_grad (a model's params in value_and_grad).

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ops/core/tensor.h"

namespace ss::ops {

struct Node;

/// Autodiff state of one tensor: a leaf (requires_grad, no grad_fn) or the
/// output of a recorded op (grad_fn).
struct AutogradMeta {
  bool requires_grad = false;
  std::shared_ptr<Node> grad_fn;
  /// On several devices: the same value on every rank (see
  /// mark_replicated).
  bool replicated = false;
};

/// One recorded op: its inputs that need gradients, and how to turn the
/// output's cotangent into theirs (one per input, undefined = zero).
struct Node {
  const char* name = "";
  uint64_t seq = 0;  // creation order: backward visits in reverse
  std::vector<Tensor> inputs;
  std::function<std::vector<Tensor>(const Tensor& gy)> vjp;
  /// Every input is replicated (mark_replicated), so the output is too.
  bool out_replicated = false;
};

/// Whether ops record (on by default; off inside backward and stop_grad).
class GradMode {
 public:
  static bool enabled();
  /// Sets the mode for a scope.
  class Guard {
   public:
    explicit Guard(bool enabled);
    ~Guard();
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;

   private:
    bool prev_;
  };
};

/// A copy of [t] that is a leaf needing gradients.
Tensor requires_grad(const Tensor& t);
/// Whether [t] needs a gradient (a leaf that requires it, or a recorded
/// op's output).
bool needs_grad(const Tensor& t);

/// Records [out] as produced by an op of [inputs] when grad mode is on and
/// some input needs a gradient; returns [out] (with its node) either way.
/// [vjp] maps the output's cotangent to one cotangent per input.
Tensor record(const char* name,
              Tensor out,
              std::vector<Tensor> inputs,
              std::function<std::vector<Tensor>(const Tensor& gy)> vjp);

/// Marks [t] as holding the same value on every rank of a data-parallel
/// run: a model's params, a constant, an all-reduce's result. An op's
/// output is replicated when all its inputs are; anything unmarked counts
/// as differing between ranks. backward() uses this to tell a collective's
/// VJP whether its cotangent is the same on every rank (Note [Replicated
/// cotangents] in tape.cpp). Returns [t] with the mark.
Tensor mark_replicated(Tensor t);
bool is_replicated(const Tensor& t);

/// Inside a VJP called by backward(): whether the cotangent it was handed
/// is the same on every rank, because every path from this node to the
/// root runs through replicated values only.
bool cotangent_replicated();

/// Told leaf [i]'s final gradient as soon as the backward pass has it (so
/// a data-parallel run can start sending it while the pass goes on).
using LeafReady = std::function<void(size_t i, const Tensor& grad)>;

/// Gradients of the 0-d [root] w.r.t. each of [leaves] (zeros for a leaf
/// the root does not depend on), in the leaves' dtypes. [ready], when set,
/// is called once per leaf with its gradient, in the order the pass
/// finishes them (the same order for the same graph): a leaf is done once
/// every node that uses it has run; unused leaves and non-leaf "leaves"
/// come last; a gradient [ready] was told is undefined in the result
/// (its receiver holds it alone). The gradients are those of [seed] x the root
/// (several devices: 1/world on each rank), [seed] applied to each leaf's
/// gradient in its dtype (Note [The seed scales the leaves] in tape.cpp); the
/// pass does not read the root's value, which may still be arriving
/// (Storage::set_pending). [at_root] is the cotangent the pass starts from
/// at the root, before [seed]: 0 runs every VJP on zeros, for an instance of
/// an spmd fn whose collectives' transposes pair up with the other
/// instances' (Note [A gradient inside an instance] in
/// ops/registry/mesh_comm.h).
std::vector<Tensor> backward(const Tensor& root,
                             const std::vector<Tensor>& leaves,
                             const LeafReady& ready = nullptr,
                             double seed = 1.0,
                             double at_root = 1.0);

}  // namespace ss::ops
