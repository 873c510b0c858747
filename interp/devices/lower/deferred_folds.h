#pragma once
// Note [Deferred folds]
// In deterministic mode a whole value's cotangent is folded across the
// ranks where the chunks' partials meet (Note [Chunked sites]), a
// collective each. A param's gradient is wanted only when the pass ends,
// so while value_and_grad's pass runs, each use of a param in a chunked
// op (the leaf itself, or one model's param of a stack, `blk.w` in `for
// blk in m.blocks`, read from the leaf at its index: note_stack_read)
// folds only the subtrees this rank holds, and keeps them; when the pass
// ends every use's pieces travel in one all-gather per dtype, and each
// use's fold is added to its param's gradient (a stack's, at the model's
// entry), after what the pass itself gave the param. The uses are taken
// in the order the forward pass made them, which every rank and one
// device share: the backward pass reaches them in an order that can
// change with a rank's count of chunks. A value computed from params is
// still folded where it is: the ops after it in the pass need its
// cotangent.

#include <cstdint>
#include <vector>

#include "interp/devices/lower/chunked_sites.h"
#include "interp/devices/lower/chunks.h"
#include "ops/core/tensor.h"

namespace ss::devices::lower {

struct DeviceContext;
struct Chunks;
struct ParamView;

class DeferredFolds {
 public:
  /// A use of a param ([param]: its leaf's AutogradMeta, null for none,
  /// and its index in a stack) in a chunked op, the [order]-th the forward
  /// pass made: this rank's folded subtrees of its chunks' partials
  /// ([values], one per local chunk of [c], of the param's shape).
  void add(uint64_t order,
           const ParamView& param,
           const std::vector<ops::Tensor>& values,
           const Chunks& c);
  /// Every use's fold, in the uses' forward order (the backward pass
  /// reaches them in an order that may differ with the count of local
  /// chunks): each rank's subtrees in one all-gather per dtype, then the
  /// tree's rest on every rank alike. Every rank calls it, in the same
  /// order.
  std::vector<ops::Tensor> fold_all(DeviceContext& d);
  /// After the pass: adds every use's fold to its leaf's gradient in
  /// [grads] (by the index of the leaf in [leaves]; a stack's model's at
  /// its index), in the uses' forward order.
  void finish(const std::vector<ops::Tensor>& leaves,
              std::vector<ops::Tensor>& grads,
              DeviceContext& d);

 private:
  struct Use {
    uint64_t order;
    ParamView param;
    ops::Shape shape;
    types::DType dtype;
    std::vector<ops::Tensor> pieces;  // this rank's, flattened
    ChunkLayout layout;
    bool across;
  };
  std::vector<Use> uses_;
};

}  // namespace ss::devices::lower
