#pragma once
// `split H` on the ranks (devices.md item 9; Megatron-style tensor
// parallelism over heads): the cut, gather and partial sum of the plan
// (Note [Split heads] in interp/check/plan/heads_plan.cpp), and the
// stores whose params split by heads hold only this rank's heads.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "interp/check/plan/heads_plan.h"
#include "interp/eval/objects.h"
#include "interp/eval/value.h"
#include "ops/core/tensor.h"

namespace ss::eval {
class Interpreter;
}  // namespace ss::eval

namespace ss::devices::lower {

struct DeviceContext;
class ChunkedSites;

/// This rank's block of heads of [whole] along [axis] (its r-th of N equal
/// blocks). Differentiable: the VJP places the block's cotangent in the
/// whole (zeros elsewhere) and all-reduces it, the whole value's cotangent
/// (Megatron's f).
ops::Tensor cut_heads(const ops::Tensor& whole, int axis, DeviceContext& d);
/// Every rank's block along [axis], joined whole (an all-gather). Its VJP
/// takes this rank's block of the (whole, equal) cotangent.
ops::Tensor gather_heads(const ops::Tensor& local, int axis, DeviceContext& d);
/// [whole] itself, an operand of an op run on this rank's heads beside
/// split ones: its VJP all-reduces the cotangent, which each rank computed
/// from its own heads only (Megatron's f at a column-parallel layer's
/// input).
ops::Tensor tie_heads(const ops::Tensor& whole, DeviceContext& d);
/// The sum of every rank's [partial] (an all-reduce). Its VJP passes the
/// (whole, equal) cotangent on unchanged (Megatron's g).
ops::Tensor sum_heads(const ops::Tensor& partial, DeviceContext& d);

/// Runs the op [run] by its plan (check::plan_heads) on this rank; nullopt
/// when nothing in it is split. [one_at_a_time]: deterministic mode's
/// sites, where an op on the heads runs once per head (Note [Heads one at
/// a time]); null otherwise.
std::optional<eval::Value> run_heads(eval::Interpreter& in,
                                     const check::HeadsSite& site,
                                     std::vector<ops::Tensor*>& operands,
                                     const std::function<eval::Value()>& run,
                                     diag::Span at,
                                     DeviceContext& d,
                                     ChunkedSites* one_at_a_time);

/// [v] (of type [t], from the controller) cut to this rank's heads where
/// [t] is split; tuples item by item.
eval::Value cut_value(const eval::Value& v,
                      const types::Type& t,
                      DeviceContext& d);
/// [v] (of type [t]) with every split value gathered whole: what the
/// controller gets back.
eval::Value gather_value(const eval::Value& v,
                         const types::Type& t,
                         DeviceContext& d);

/// Cuts every param of [s] whose declared type is split by heads to this
/// rank's heads, recording its axis in s.heads: a store that came whole
/// from the controller. Before shard_store, which leaves them be.
void cut_store_heads(eval::ModelStore& s,
                     const std::string& dim,
                     int rank,
                     int world);
/// Cuts the state of [o] (AdamW's exp_avg and exp_avg_sq, SGD's momentum)
/// as its model's params are cut.
void cut_optim_heads(eval::OptimState& o, int rank, int world);

/// A copy of [s] with every param split by heads, and every sharded one,
/// gathered whole (every rank calls it, in the same order): what the
/// controller reads, save writes and `ss conformance` compares.
std::shared_ptr<const eval::ModelStore> gathered_store(
    const eval::ModelStore& s, DeviceContext& d);
/// The same for an optimizer's state.
std::shared_ptr<const eval::OptimState> gathered_optim(
    const eval::OptimState& o, DeviceContext& d);
/// Field [path] of [s] alone, gathered whole as gathered_store gathers it
/// (a streaming save fetches one at a time).
ops::Tensor gathered_tensor(const eval::ModelStore& s,
                            const std::string& path,
                            DeviceContext& d);
/// State [state] of [o]'s param [path], gathered whole; undefined when it
/// holds none.
ops::Tensor gathered_state(const eval::OptimState& o,
                           const std::string& path,
                           const std::string& state,
                           DeviceContext& d);

}  // namespace ss::devices::lower
