#pragma once
// Reference collectives (spmd.md, "Reference semantics"): the shard_map
// tutorial's `*_ref` functions (../shared/seeds/shard-map.md) as naive
// loops in double. Each takes the block of every instance of one group,
// the instances along the collective's mesh axes in index order (x major),
// and returns every instance's result, in the same order. The simulated
// mode combines the instances' values with these (interp/eval/spmd/), and
// they are the oracle of the distributed mode's tests.
//
// Conventions: [axis] is a position in each block (all blocks have one
// shape and dtype); results keep the blocks' dtype (pmean of ints: f32,
// as the checker's float_result); a bad shape throws std::invalid_argument.

#include <cstdint>
#include <utility>
#include <vector>

#include "ops/core/tensor.h"
#include "ops/registry/mesh_comm.h"

namespace ss::ref {

/// The builtins these serve: their forwards run only inside an instance of
/// an spmd fn, through its mesh, combining the instances' values with the
/// functions below (ref/tests' coverage and the runtime fuzzer's oracle
/// read the list).
inline constexpr const char* kCollectiveBuiltins[] = {"psum",
                                                      "pmean",
                                                      "pmax",
                                                      "pmin",
                                                      "pvary",
                                                      "all_gather",
                                                      "psum_scatter",
                                                      "ppermute",
                                                      "all_to_all",
                                                      "axis_index",
                                                      "axis_size"};

using Blocks = std::vector<ops::Tensor>;
using Perm = std::vector<std::pair<int64_t, int64_t>>;

/// psum_ref: every instance gets the sum of all blocks.
Blocks psum(const Blocks& xs);
/// The sum over the count of blocks.
Blocks pmean(const Blocks& xs);
/// Elementwise maximum / minimum over the blocks.
Blocks pmax(const Blocks& xs);
Blocks pmin(const Blocks& xs);
/// No data moves: each instance keeps its block.
Blocks pvary(const Blocks& xs);
/// all_gather_ref: every instance gets the blocks concatenated along
/// [axis] ([tiled]) or stacked along a new leading axis.
Blocks all_gather(const Blocks& xs, int axis, bool tiled);
/// psum_scatter_ref: the sum, cut into as many pieces as instances along
/// [axis] ([tiled]; it must divide), instance i taking piece i; untiled,
/// the leading axis has one entry per instance and is dropped.
Blocks psum_scatter(const Blocks& xs, int axis, bool tiled);
/// ppermute_ref: results[dst] = xs[src] for each pair; zeros where no pair
/// sends.
Blocks ppermute(const Blocks& xs, const Perm& perm);
/// all_to_all_ref: tiled, instance i gets piece i (along [split]) of every
/// block, concatenated along [concat] in instance order; untiled, [split]
/// has one entry per instance: entry i of every block, stacked as a new
/// axis at [concat] of the block with [split] removed.
Blocks all_to_all(const Blocks& xs, int split, int concat, bool tiled);

/// The reference collective [op] names (ops/registry/mesh_comm.h), on its
/// axis, tiling and perm; SumToExtremum has none (it needs the forward's
/// holders) and throws std::invalid_argument.
Blocks collective(const ops::MeshOp& op, const Blocks& xs);

}  // namespace ss::ref
