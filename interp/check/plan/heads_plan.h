#pragma once
// `split H` (devices.md item 9): which values are split by heads, and what
// each op does with them. Both `ss explain` (the plan's collectives) and a
// rank's evaluator (interp/devices/lower/heads.cpp, which runs the plan)
// read this one function, so the table says what runs. See Note [Split
// heads] in heads_plan.cpp.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ops/core/type.h"
#include "ops/registry/device_rule.h"

namespace ss::check {

/// The axis of [t] that `split H` splits: an axis that is the dim [dim],
/// or a group whose first item is (`(H Dh)`), when [dim] occurs once in
/// [t]. -1: [t] is whole (no [dim], [dim] twice, or inside a group after
/// another axis, as `(3 H Dh)`), or is no tensor.
int heads_axis(const types::Type& t, const std::string& dim);
/// Whether [dim] occurs anywhere in [t]'s shape (tuple items included).
bool has_dim(const types::Type& t, const std::string& dim);

/// What an op does on a device that holds its heads.
enum class HeadsStep {
  None,     // nothing is split: as on one device
  Cut,      // whole operands, a split result: computed whole, each device
            // keeps its heads; no message (backward: an all-reduce)
  Local,    // per head: each device computes its heads with H = H / N
  Partial,  // H is summed away (`@ m.w_o` over (H Dh)): each device's
            // partial sum, all-reduced (backward: nothing)
  Gather,   // along H: the split operands all-gathered, the op run whole,
            // a split result cut (backward: each device's block)
};

/// One op's operands and result, as the checker typed them.
struct HeadsSite {
  ops::DeviceRule::Heads rule = ops::DeviceRule::Heads::Gathers;
  std::vector<types::Type> operands;  // tensor operands (others: not listed)
  types::Type result;                 // a tensor, or a tuple of them
  /// The axes of operand 0 its over= names (resolved indices).
  std::vector<int> over;
  /// over= is absent and the op then reduces every axis (sum(x)).
  bool reduces_all = false;
};

HeadsStep plan_heads(const HeadsSite& s, const std::string& dim);

/// The split axis of each item of [result] (a tensor: one item).
std::vector<int> result_heads_axes(const types::Type& result,
                                   const std::string& dim);

/// Note [Size variables carry the split]
/// (interp/devices/lower/heads_sites.cpp): the size variables of a fn's params
/// bound, at one call, to an axis of the argument's type that has the split dim
/// (`h` -> H, `m` -> (H Dh)), by variable id.
using HeadsVars = std::map<uint32_t, types::Axis>;

/// Records in [out] each size variable of [param] bound to an axis of
/// [arg] (the caller's type, its own HeadsVars put in) that has [dim];
/// tuples item by item, groups of the same length axis by axis, a model's
/// dim arguments and stack axes too.
void bind_heads_vars(const types::Type& param,
                     const types::Type& arg,
                     const std::string& dim,
                     HeadsVars& out);
/// [t] with [vars] put in; with [pin], every other size variable that
/// [pin] sizes becomes that literal.
types::Type put_heads_vars(const types::Type& t,
                           const HeadsVars& vars,
                           const std::map<uint32_t, int64_t>* pin = nullptr);

}  // namespace ss::check
