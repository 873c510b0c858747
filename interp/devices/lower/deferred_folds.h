#pragma once
// Note [Deferred folds]
// In deterministic mode a whole value's cotangent is folded across the
// ranks where the chunks' partials meet (Note [Chunked sites]), a
// collective each. A param's gradient is wanted only when the pass ends,
// so while value_and_grad's pass runs, each use of a param (a true leaf)
// in a chunked op folds only the subtrees this rank holds, and keeps
// them; when the pass ends every use's pieces travel in one all-gather per
// dtype, and each use's fold is added to its param's gradient in the
// order the pass made them, after what the pass itself gave the param
// (the same order on every layout, one device included). The
// transformer block's step on three devices made 13 such collectives one
// (bench/deterministic_bench.py). A value computed from params is still
// folded where it is: the ops after it in the pass need its cotangent.

#include <vector>

#include "interp/devices/lower/chunks.h"
#include "ops/core/tensor.h"

namespace ss::devices::lower {

struct DeviceContext;
struct Chunks;

class DeferredFolds {
 public:
  /// A use of the leaf whose AutogradMeta is [leaf] (null: none) in a
  /// chunked op: this rank's folded subtrees of its chunks' partials
  /// ([values], one per local chunk of [c], of the leaf's shape).
  void add(const void* leaf,
           const std::vector<ops::Tensor>& values,
           const Chunks& c);
  /// Every use's fold, in the order the uses came: each rank's subtrees in
  /// one all-gather per dtype, then the tree's rest on every rank alike.
  /// Every rank calls it, in the same order.
  std::vector<ops::Tensor> fold_all(DeviceContext& d);
  /// After the pass: adds every use's fold to its leaf's gradient in
  /// [grads] (by the index of the leaf in [leaves]), in the uses' order.
  void finish(const std::vector<ops::Tensor>& leaves,
              std::vector<ops::Tensor>& grads,
              DeviceContext& d);

 private:
  struct Use {
    const void* leaf;  // its AutogradMeta
    ops::Shape shape;
    types::DType dtype;
    std::vector<ops::Tensor> pieces;  // this rank's, flattened
    ChunkLayout layout;
    bool across;
  };
  std::vector<Use> uses_;
};

}  // namespace ss::devices::lower
