#pragma once
// `shard params` on the ranks (devices.md item 9; FSDP, ZeRO-3): each
// param is flattened and cut into N equal pieces, the last padded with
// zeros, and rank r holds piece r of every param, of its gradient and of
// its optimizer state. See Note [Sharded params] in shards.cpp.

#include <cstdint>

#include "interp/eval/objects.h"
#include "ops/core/tensor.h"

namespace ss::devices::lower {

struct DeviceContext;
class GatheredCopies;
struct BucketMembers;

/// Piece [rank] of [whole] (flattened, padded with zeros to world pieces).
ops::Tensor piece_of(const ops::Tensor& whole, int rank, int world);

/// Every rank's piece gathered into the whole param of shape [whole]
/// (an all-gather of ops::shard_piece_numel values). Differentiable: its VJP
/// reduce-scatters the whole cotangent into this rank's piece, the
/// gradient's sum over the ranks, so no gradient all-reduce follows.
/// Recorded on the tape, the copy joins [copies] (when set), whose bytes
/// are let go after its use and gathered again for the backward pass.
/// [gathered], when defined, is the whole param already gathered with its
/// [bucket] (Note [Param buckets]): it is recorded, not gathered again.
ops::Tensor gather_param(const ops::Tensor& piece,
                         const ops::Shape& whole,
                         DeviceContext& d,
                         GatheredCopies* copies = nullptr,
                         ops::Tensor gathered = {},
                         std::shared_ptr<const BucketMembers> bucket = {});

/// The whole param of shape [whole] from every rank's [piece] (plain, no
/// tape; every rank calls it, in the same order).
ops::Tensor whole_param(const ops::Tensor& piece,
                        const ops::Shape& whole,
                        DeviceContext& d);

/// Cuts every param of [s] (buffers stay whole) into this rank's piece and
/// records its whole shape in s.whole: a store that came whole from the
/// controller.
void shard_store(eval::ModelStore& s, int rank, int world);
/// Cuts the state of [o] (AdamW's exp_avg and exp_avg_sq, SGD's momentum)
/// as its model's params are cut.
void shard_optim(eval::OptimState& o, int rank, int world);

/// A copy of [s] with every sharded param gathered whole (every rank calls
/// it, in the same order): what the controller reads, save writes and `ss
/// conformance` compares. [s] itself when nothing is sharded.
std::shared_ptr<const eval::ModelStore> whole_store(const eval::ModelStore& s,
                                                    DeviceContext& d);
/// The same for an optimizer's state.
std::shared_ptr<const eval::OptimState> whole_optim(const eval::OptimState& o,
                                                    DeviceContext& d);

}  // namespace ss::devices::lower
