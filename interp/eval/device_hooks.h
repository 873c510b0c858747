#pragma once
// Note [Device hooks]
// The Interpreter walks the tree; what a run on several devices changes in
// that walk lives in interp/devices/, behind this one interface. The
// Interpreter holds one pointer to it (Interpreter::set_device_hooks), null
// on one device, and asks it at the few places where several devices change
// what a statement does:
//   * a call of a user fn (Interpreter::call): in the controller, a worker
//     fn called from a controller frame goes to the workers; on a rank, such
//     a call splits its batch-axis arguments into this rank's share and
//     joins a batch-axis result (devices.md items 3 and 6);
//   * a statement that only drops a worker call's result or writes it to a
//     sink, sent ahead of its result, and settle() before anything the
//     program could observe (Note [Async dispatch] in
//     interp/devices/controller/async_dispatch.cpp);
//   * a reduction across the batch axis, lowered to an all-reduce, and
//     value_and_grad's gradients, summed across the ranks (Note [Same
//     result as one device] in interp/devices/lower/lowering.cpp);
//   * host effects that happen once when every rank runs the program;
//   * a model or optimizer newer on the workers, copied back when read
//     (ModelStore::newer_on);
//   * the entry fn's end, whose params `ss conformance` compares across
//     device counts;
//   * with `split H`, an op whose operands or result are split by heads
//     (Note [Split heads] in interp/devices/plan/heads_plan.cpp).
// Every hook's default is what one device does, so a context overrides
// only what it changes. The contexts: devices::ControllerContext (the
// controller of `ss run`), devices::RankContext (a worker's, and each rank
// thread's of the threads engine) and devices::Context (their common part,
// alone on one device in `ss conformance`).

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "diag/source.h"
#include "interp/check/checked.h"
#include "interp/devices/plan/heads_plan.h"
#include "interp/eval/value.h"
#include "ops/core/tensor.h"

namespace ss::eval {

class Interpreter;
struct BuiltinCall;
struct Frame;
struct ModelRef;
struct ModelStore;
struct OptimState;

class DeviceHooks {
 public:
  virtual ~DeviceHooks() = default;

  /// A call of the user fn [fn] (neither extern nor spmd) at [site]: its
  /// value when this context runs it its own way (in the workers, or split
  /// into shares), nullopt to run it here as one device does.
  virtual std::optional<Value> call(Interpreter& in,
                                    const check::FnInfo& fn,
                                    std::vector<Value>& args,
                                    diag::Span site) {
    return std::nullopt;
  }
  /// A call of the spmd fn [fn] from ordinary code at [site] on several
  /// devices: its joined result, its instances run on the workers (Note
  /// [Spmd fns on workers] in interp/devices/lower/worker_mesh.h);
  /// nullopt where this context cannot run them.
  virtual std::optional<Value> call_spmd(Interpreter& in,
                                         const check::FnInfo& fn,
                                         std::vector<Value>& args,
                                         diag::Span site) {
    return std::nullopt;
  }
  /// An expression statement [e]: true when this context ran it (sent
  /// ahead of its result); false: nothing was evaluated.
  virtual bool dispatch_later(Interpreter& in, const ast::Expr& e, Frame& f) {
    return false;
  }
  /// Finishes what runs ahead of the program (worker calls in flight),
  /// handing on each result; raises the first one's error.
  virtual void settle() {}
  /// Batches are loaded by the workers, not here (interp/data's LazyBatch).
  virtual bool loads_on_workers() const { return false; }
  /// When this process holds one share of each batch: the share's first row
  /// in the whole batch (dropout draws by each element's index in the whole
  /// value; logs mark their batch-axis fields). nullopt: whole batches.
  virtual std::optional<int64_t> batch_share_start() const {
    return std::nullopt;
  }
  /// A reduction across the batch axis (check::ExprInfo::allreduce): its
  /// global value, or nullopt to run it as one device does.
  virtual std::optional<Value> lower_reduction(BuiltinCall& c) {
    return std::nullopt;
  }
  /// A builtin with a host effect (files, checkpoints, progress bars) when
  /// every rank runs the program: its value when this context decides what
  /// this rank does, or nullopt to run it as one device does.
  virtual std::optional<Value> host_effect(BuiltinCall& c) {
    return std::nullopt;
  }
  /// value_and_grad's backward pass of [loss] to [leaves] at [at], the
  /// gradients summed across the ranks; nullopt: ops::backward alone.
  /// [pieces][i]: leaf i is a rank's piece of a sharded param, whose
  /// gradient the pass itself sums (gather_param's VJP).
  virtual std::optional<std::vector<ops::Tensor>> gradients(
      const ops::Tensor& loss,
      const std::vector<ops::Tensor>& leaves,
      const std::vector<bool>& pieces,
      diag::Span at) {
    return std::nullopt;
  }
  /// `shard params`, on a rank: param [path] of [m] (relative to its
  /// prefix), of which the store holds this rank's piece
  /// (ModelStore::whole), gathered whole where the program reads it at
  /// [at]; its gradient flows back to the piece. nullopt: read it as one
  /// device does.
  virtual std::optional<ops::Tensor> gather_param(const ModelRef& m,
                                                  const std::string& path,
                                                  diag::Span at) {
    return std::nullopt;
  }
  /// value_and_grad's tape is gone (its gradients are taken): a gathered
  /// param whose bytes were let go and that a value still holds is made
  /// again, on every rank at once (Note [Gathered copies]).
  virtual void tape_released() {}
  /// `shard params`, on a rank: [partial], a sum over this rank's pieces
  /// (a gradient's squares: norm, clip_norm), summed over every rank's.
  virtual double sum_over_pieces(double partial) { return partial; }
  /// `split H`, on a rank: whether values typed with the split dim hold
  /// this rank's heads (Note [Split heads] in
  /// interp/devices/plan/heads_plan.cpp).
  virtual bool splits_heads() const { return false; }
  /// `split H`, on a rank: the op at [at] whose tensor operands, typed as
  /// [site] says, are [operands] (which the context may replace, gathered
  /// whole) and which [run] computes from them: its value by the op's
  /// plan (check::plan_heads), or nullopt to run it as one device does.
  virtual std::optional<Value> split_heads(Interpreter& in,
                                           const check::HeadsSite& site,
                                           std::vector<ops::Tensor*>& operands,
                                           const std::function<Value()>& run,
                                           diag::Span at) {
    return std::nullopt;
  }
  /// `collective_timeout(seconds)`: collectives started afterwards wait
  /// this long (devices.md item 12). One device has none.
  virtual void set_collective_timeout(double seconds) {}
  /// Copies a store whose newer copy this context holds (ModelStore::
  /// newer_on, OptimState::newer_on) back, and clears the mark.
  virtual void fetch(ModelStore& s) {}
  virtual void fetch(OptimState& o) {}
  /// One tensor of such a store, whole, the store left as it is (a
  /// streaming save, Note [A streaming save] in interp/builtins/
  /// checkpoint.cpp): field [path] (the store's own path) of [s]; state
  /// [state] of [o]'s param [path], undefined when it holds none.
  virtual ops::Tensor fetch_tensor(const ModelStore& s,
                                   const std::string& path) {
    return {};
  }
  virtual ops::Tensor fetch_tensor(const OptimState& o,
                                   const std::string& path,
                                   const std::string& state) {
    return {};
  }
  /// [o]'s hyperparameters, step and which states each param holds, as
  /// Codec::read_optim_state without tensors reads them into [out]; false
  /// when this context has no newer copy.
  virtual bool fetch_layout(const OptimState& o, OptimState& out) {
    return false;
  }
  /// The entry fn's body ran to its end in [f], its locals still bound.
  virtual void entry_done(const Frame& f) {}
};

}  // namespace ss::eval
