#pragma once
// Note [Deterministic mode]
// `--deterministic` (or `deterministic` under `devices`) makes a program's
// bits a function of the program and its data alone: N devices print,
// write and save what one device does, bit for bit, whatever N. What
// changes bits across layouts is where the rows of a batch are added:
// a reduction over a rank's share and then across ranks adds in an order
// that depends on the split, and so does a weight gradient, one product
// over a rank's rows. So in this mode:
//
//  * a batch of n examples is cut into canonical chunks of C = chunk_size(n)
//    examples by global index (a power of two, at most kMaxChunks chunks);
//    a rank's share is whole chunks, the first ranks one more;
//  * every op where the batch meets a value without it (`x @ w`, `x + b`,
//    linear(m.l1, x)) runs once per chunk, so each product has the same
//    rows, the same shape and the same bits on every layout, one device
//    included (chunked_sites.h);
//  * where rows are added into a value without the batch axis (a lowered
//    reduction's payload in the forward pass; a param's or any whole
//    value's cotangent in the backward pass) each chunk makes one partial,
//    and the partials are added in one fixed tree over the chunk indices
//    (fold_pieces, fold_root): each rank folds the complete subtrees it
//    holds, sends them, and every rank folds the rest alike;
//  * so a whole value's cotangent is whole (the same on every rank) where
//    the rows are added, every rank seeds the backward pass with 1, and no
//    gradient is all-reduced after it: each rank's gradient is one
//    device's already.
//
// One device runs the same chunks and the same tree: its bits in this mode
// are the reference the others match.

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "ops/core/batch_split.h"
#include "ops/core/tensor.h"

namespace ss::devices::lower {

using ops::chunk_size;  // ops/core/batch_split.h, with kMaxChunks

/// How a batch of [n] rows is cut into chunks and the chunks into [world]
/// ranks' shares.
struct ChunkLayout {
  int64_t rows = 0;            // n
  int64_t size = 1;            // C
  int64_t chunks = 0;          // ceil(n / C)
  std::vector<int64_t> first;  // rank r holds chunks [first[r], first[r+1])

  static ChunkLayout of(int64_t n, int world);
  /// [n] pieces of one row each (a value's heads: Note [Heads one at a
  /// time] in heads.cpp) in [world] even blocks, the first ranks one more.
  static ChunkLayout each_one(int64_t n, int world);
  /// Rank [r]'s chunks and rows, [start, end).
  std::pair<int64_t, int64_t> chunks_of(int r) const {
    return {first[r], first[r + 1]};
  }
  std::pair<int64_t, int64_t> rows_of(int r) const;
  /// Global chunk [j]'s rows.
  std::pair<int64_t, int64_t> chunk_rows(int64_t j) const;
};

/// A node of the fold tree over [chunks] leaves: it covers chunks
/// [index·2^level, min((index+1)·2^level, chunks)).
struct TreeNode {
  int level = 0;
  int64_t index = 0;
  bool operator==(const TreeNode& o) const {
    return level == o.level && index == o.index;
  }
};

/// The nodes of the fold tree that exactly cover chunks [a, b), each as
/// high as it can be, left to right: what a rank holding those chunks
/// folds alone.
std::vector<TreeNode> tree_pieces(int64_t a, int64_t b, int64_t chunks);

using Add = std::function<ops::Tensor(const ops::Tensor&, const ops::Tensor&)>;

/// The tree's sum of two partials, off the tape (they are cotangents, or
/// payloads whose fold records its own VJP).
ops::Tensor add_partials(const ops::Tensor& x, const ops::Tensor& y);

/// The values of tree_pieces(a, b, chunks) from the chunks' own values
/// ([values][j - a] is chunk j's), each node the sum of its left and right
/// child in that order.
std::vector<ops::Tensor> fold_pieces(const std::vector<ops::Tensor>& values,
                                     int64_t a,
                                     int64_t b,
                                     int64_t chunks,
                                     const Add& add);

/// The root of the fold tree from pieces that cover [0, chunks) (each
/// rank's tree_pieces, in rank order, and their values).
ops::Tensor fold_root(const std::vector<TreeNode>& nodes,
                      const std::vector<ops::Tensor>& values,
                      int64_t chunks,
                      const Add& add);

}  // namespace ss::devices::lower
