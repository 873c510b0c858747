#pragma once
// `split H` in the walk (devices.md item 9): the one device mode written
// wholly as an implementation of the op-site hook (Note [Op sites] in
// interp/eval/op_site.h; docs/architecture.md takes it as the example).
// Each op site whose operands or result have the split dim goes through
// the plan (Note [Split heads] in interp/check/plan/heads_plan.cpp) with
// its operands and its plain way to run; the calls of a worker fn bind the
// size variables that carry the split (Note [Size variables carry the
// split] in heads_sites.cpp). RankContext holds one and asks it while a
// call into the workers' part runs with `split H`.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "interp/check/plan/heads_plan.h"
#include "interp/eval/device_hooks.h"
#include "interp/eval/op_site.h"
#include "interp/eval/value.h"

namespace ss::eval {
struct Frame;
struct ModelRef;
}  // namespace ss::eval

namespace ss::devices::lower {
struct DeviceContext;
class ChunkedSites;
}  // namespace ss::devices::lower

namespace ss::devices::lower {

class HeadsSplit {
 public:
  /// [d]: the rank, the world and its communicator; [pieces]: where
  /// deterministic mode runs an op once per head (Note [Heads one at a
  /// time] in heads.cpp). Neither owned.
  HeadsSplit(DeviceContext& d, ChunkedSites& pieces) : d_(d), pieces_(pieces) {}

  /// The op at [s] by its plan; nullopt when nothing in it is split.
  std::optional<eval::Value> run_op(eval::OpSite& s);
  /// eval::DeviceHooks::bind_call with `split H`: records in [callee] the size
  /// variables of each parameter bound to an axis that has the split dim,
  /// and each parameter's heads axis in [shares]; a remat call whose
  /// arguments would carry the split is refused (ValueError).
  void bind_call(eval::Interpreter& in,
                 const check::FnInfo& fn,
                 eval::Frame& callee,
                 diag::Span site,
                 const std::vector<types::Type>* arg_types,
                 bool remat,
                 std::vector<eval::ParamShare>& shares);

 private:
  /// [site] with the running frame's split size variables put in, run by
  /// the plan (run_heads).
  std::optional<eval::Value> planned(eval::Interpreter& in,
                                     check::HeadsSite site,
                                     std::vector<ops::Tensor*> operands,
                                     const std::function<eval::Value()>& run,
                                     diag::Span at);
  std::optional<eval::Value> builtin(eval::OpSite& s);
  std::optional<eval::Value> operands_of_expr(eval::OpSite& s,
                                              ops::DeviceRule::Heads rule);
  std::optional<eval::Value> part(eval::OpSite& s);
  /// A param typed with the split dim in a store made whole here (a model
  /// made on a worker): cut to this rank's heads where it is read.
  std::optional<eval::Value> read_param(eval::OpSite& s);
  /// Inside a tensor op given a model: a param of which this rank holds
  /// its heads, gathered whole.
  std::optional<eval::Value> gather_param(eval::OpSite& s);
  /// [t] (checked in [in]'s running frame) with that frame's size
  /// variables that carry the split put in; [pin]: its other size
  /// variables become their sizes.
  types::Type in_frame(eval::Interpreter& in,
                       const types::Type& t,
                       bool pin) const;

  DeviceContext& d_;
  ChunkedSites& pieces_;
  /// In a tensor op given a model (linear(m.l1, x)): it runs whole, on
  /// its params gathered (builtin, gather_param).
  bool whole_params_ = false;
};

}  // namespace ss::devices::lower
