#pragma once
// Note [Device hooks]
// The Interpreter walks the tree; what a run on several devices changes in
// that walk lives in interp/devices/, behind this one interface. The
// Interpreter holds one pointer to it (Interpreter::set_device_hooks), null
// on one device, and asks it at the few places where several devices change
// what a statement does:
//   * every op (a builtin call, an operator, a pattern, a part of an op run
//     in parts, a param read) through one hook, run_op (Note [Op sites] in
//     interp/eval/op_site.h): a reduction across the batch axis lowered to
//     an all-reduce (Note [Same result as one device] in
//     interp/devices/lower/lowering.cpp), a host effect that happens once
//     when every rank runs the program, `split H`'s plan for an op whose
//     operands or result are split by heads (Note [Split heads] in
//     interp/check/plan/heads_plan.cpp), `shard params`' gather of a
//     param where it is read;
//   * a call of a user fn (call): in the controller, a worker fn called
//     from a controller frame goes to the workers; on a rank, such a call
//     splits its batch-axis arguments into this rank's share and joins a
//     batch-axis result (devices.md items 3 and 6); an spmd fn called from
//     ordinary code runs an instance on each worker; and how the callee's
//     parameters hold their values (bind_call: `split H`'s heads);
//   * a statement that only drops a worker call's result or writes it to a
//     sink, sent ahead of its result, and settle() before anything the
//     program could observe (Note [Async dispatch] in
//     interp/devices/controller/async_dispatch.cpp);
//   * value_and_grad's gradients, summed across the ranks, and the pieces
//     of sharded params (gradients, tape_released, sum_over_pieces);
//   * where values live and batches load (placement);
//   * the entry fn's end, whose params `ss conformance` compares across
//     device counts.
// A model or optimizer newer on the workers is copied back when read,
// through its store's own pointer (ModelStore::newer_on, a NewerCopies:
// objects.h), not through these hooks.
// Every hook's default is what one device does, so a context overrides
// only what it changes. The contexts: devices::controller::ControllerContext
// (the controller of `ss run`), devices::lower::RankContext (a worker's, and
// each rank thread's of the threads engine) and devices::Context (their
// common part, alone on one device in `ss conformance`). A new device
// mode is one more implementation behind a context's run_op
// (docs/architecture.md, "Adding a device mode").

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "diag/source.h"
#include "interp/check/checked.h"
#include "interp/eval/op_site.h"
#include "interp/eval/value.h"
#include "ops/core/tensor.h"

namespace ss::eval {

class Interpreter;
struct Frame;

/// How a parameter's value is held in a call's frame: axis [axis] holds
/// one of [parts] equal blocks of the whole value (`split H` on a rank: its
/// heads); -1: the whole value.
struct ParamShare {
  int axis = -1;
  int64_t parts = 1;
};

/// DeviceHooks::placement: what one device does by default.
struct Placement {
  /// The device values live on (Note [Values on a GPU] in
  /// interp/devices/one_device.cpp): params as they are drawn, batches as
  /// they load, and the tensors ops make from nothing go there.
  ops::Device device;
  /// Batches are loaded by the workers, not here (interp/data's LazyBatch).
  bool loads_on_workers = false;
  /// When this process holds one share of each batch: the share's first
  /// row in the whole batch (dropout draws by each element's index in the
  /// whole value; logs mark their batch-axis fields). nullopt: whole
  /// batches.
  std::optional<int64_t> batch_share_start;
};

class DeviceHooks {
 public:
  virtual ~DeviceHooks() = default;

  /// A call of the user fn [fn] (not extern) at [site]: its value when
  /// this context runs it its own way (in the workers, split into shares,
  /// or an spmd fn called from ordinary code, `!in.mesh()`, with an
  /// instance on each worker: Note [Spmd fns on workers] in
  /// interp/devices/lower/worker_mesh.h), nullopt to run it here as one
  /// device does.
  virtual std::optional<Value> call(Interpreter& in,
                                    const check::FnInfo& fn,
                                    std::vector<Value>& args,
                                    diag::Span site) {
    return std::nullopt;
  }
  /// A call of [fn] at [site] binds its parameters in [callee], the
  /// caller's frame still the current one. [arg_types]: the arguments' checked
  /// types at the call site (null: not known); [remat]: the call runs again in
  /// the backward pass from its values alone, which a context may refuse. Fills
  /// [shares] by parameter (left empty: every value whole).
  virtual void bind_call(Interpreter& in,
                         const check::FnInfo& fn,
                         Frame& callee,
                         diag::Span site,
                         const std::vector<types::Type>* arg_types,
                         bool remat,
                         std::vector<ParamShare>& shares) {}
  /// Every op of the walk (Note [Op sites]): its value as this context
  /// runs it; the default runs it as one device does.
  virtual Value run_op(OpSite& site) { return site.run(); }
  /// An expression statement [e]: true when this context ran it (sent
  /// ahead of its result); false: nothing was evaluated.
  virtual bool dispatch_later(Interpreter& in, const ast::Expr& e, Frame& f) {
    return false;
  }
  /// Finishes what runs ahead of the program (worker calls in flight),
  /// handing on each result; raises the first one's error.
  virtual void settle() {}
  /// Where this process's values live and its batches load.
  virtual Placement placement() const { return {}; }
  /// value_and_grad's backward pass of [loss] to [leaves] at [at], the
  /// gradients summed across the ranks; nullopt: ops::backward alone.
  /// [pieces][i]: leaf i is a rank's piece of a sharded param, whose
  /// gradient the pass itself sums (gather_param's VJP). [scale], a grad
  /// scaler's: the gradients of scale x loss, each cotangent in the pass
  /// as one device's (Note [A scaled loss is seeded at the root] in
  /// interp/devices/lower/rank_context.cpp).
  virtual std::optional<std::vector<ops::Tensor>> gradients(
      const ops::Tensor& loss,
      const std::vector<ops::Tensor>& leaves,
      const std::vector<bool>& pieces,
      diag::Span at,
      std::optional<double> scale) {
    return std::nullopt;
  }
  /// value_and_grad's tape is gone (its gradients are taken): a gathered
  /// param whose bytes were let go and that a value still holds is made
  /// again, on every rank at once (Note [Gathered copies]).
  virtual void tape_released() {}
  /// `shard params`, on a rank: [partial], a 0-d tensor summing this
  /// rank's pieces (a gradient's squares: norm, clip_norm; the grad
  /// scaler's found-inf flag), summed over every rank's; it stays where
  /// it is (on a GPU: Note [Norms stay on the device] in
  /// interp/builtins/autodiff.cpp).
  virtual ops::Tensor sum_over_pieces(const ops::Tensor& partial) {
    return partial;
  }
  /// `shard params` in deterministic mode, on a rank: param [path] of
  /// [m] whole (its pieces gathered, every rank alike), so that a sum over
  /// it adds what one device adds; nullopt where [m] holds it whole.
  virtual std::optional<ops::Tensor> whole_for_sums(const ModelRef& m,
                                                    const std::string& path) {
    return std::nullopt;
  }
  /// The entry fn's body ran to its end in [f], its locals still bound.
  virtual void entry_done(const Frame& f) {}
};

}  // namespace ss::eval
