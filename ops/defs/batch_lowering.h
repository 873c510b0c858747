#pragma once
// The rank-side compute of the lowerings across the batch axis (Note [An
// op's rule on several devices] in ops/registry/device_rule.h): what each
// rank sends from its share of the batch, and how it finishes the whole
// batch's value from the summed payload. The rows in reductions.cpp and
// nn.cpp point at them; interp/devices/lower runs the collective.
// See Note [Same result as one device] in interp/devices/lower/lowering.cpp.

#include <cstdint>
#include <functional>

#include "ops/registry/device_rule.h"

namespace ss::ops::lowering {

/// The share's partial result, summed across the ranks (sum,
/// reduce(with=sum)): [local] is the op's own forward on the share.
Share partial_sum(ForwardCtx& ctx, Forward local);

/// mean over over= (every axis when absent): the share's sums and its
/// count in one payload, divided after the sum.
Share mean(ForwardCtx& ctx);

/// A loss (losses.cpp): this share's sum of its per-element losses and its
/// part of the mean's denominator (its count of elements, of labels not
/// ignored, or their classes' weights), 0-d each, in one payload; after
/// the all-reduce the whole sum ([mean]: over the whole denominator), cast
/// to [out]. A share with no examples sends its empty sums, computed from
/// the inputs, so its backward pass reaches the params through the same ops
/// as the other ranks' (interp/devices/lower/grad_allreduce.h).
Share loss(const Tensor& local_sum,
           const Tensor& local_denominator,
           bool mean,
           types::DType out);

/// batch_norm in Train mode over the whole batch: per-channel sums of x
/// and x² and the count, in f64 (2·C + 1 values); the running statistics
/// move as one device's would.
Share batch_norm_train(ForwardCtx& ctx);

}  // namespace ss::ops::lowering
