#pragma once
// Data parallelism inside one rank's evaluator (devices.md): the share of a
// batch this rank holds, the lowering of reductions across the batch axis
// into all-reduces, and joining batch-axis results (the gradient
// all-reduce: grad_allreduce.h). See Note [Same result as one device] in
// devices.cpp.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "diag/source.h"
#include "dist/comm/transport.h"
#include "interp/eval/value.h"
#include "ops/core/tensor.h"

namespace ss::dist {
class Communicator;
}

namespace ss::eval {
struct BuiltinCall;
}  // namespace ss::eval
namespace ss::ops {
struct Lowering;
class ForwardCtx;
}  // namespace ss::ops

namespace ss::devices::lower {

class CommThread;
class PieceScatter;
class WorkerMesh;

struct DeviceContext {
  int rank = 0;
  int world = 1;
  dist::Communicator* comm = nullptr;
  /// What this rank's communicators are made of, and the device its
  /// values live on (a GPU rank's: Note [Several GPUs] in
  /// interp/devices/worker/program_server.cpp).
  dist::Transport transport;
  ops::Device device() const { return transport.device; }
  /// A mesh program's: this rank's instance of the mesh (Note [Spmd fns
  /// on workers]); nothing outside spmd fns communicates then.
  WorkerMesh* mesh = nullptr;
  /// The first global row of the batch this rank is processing (dropout
  /// draws by each element's index in the whole value).
  int64_t row_start = 0;
  /// The rows of the whole batch this rank holds a share of.
  int64_t batch_rows = 0;
  /// `deterministic` (Note [Deterministic mode] in chunks.h): shares are
  /// whole canonical chunks, and the ops where the batch meets whole
  /// values run chunk by chunk (chunked_sites.h).
  bool deterministic = false;
  /// The kernels this rank computes with (ops::kernel_signature), which
  /// deterministic mode checks are every rank's.
  std::string kernels;

  /// Called when the controller's part calls into the workers' (a step):
  /// the fn and its `.ss` location, for a WorkerError's "it was running".
  std::function<void(const std::string& fn, const std::string& where)> on_step;
  /// The `.ss` line whose collectives run now (a lowered reduction,
  /// value_and_grad, a joined result), and a hook told when this rank
  /// starts (true) and stops (false) waiting for the others in one: a
  /// worker's status, for the collective timeout's report.
  diag::Span at;
  std::function<void(bool waiting)> on_wait;
  /// value_and_grad's gradient buckets: one that reaches this size is
  /// all-reduced while the backward pass goes on (grad_allreduce.h).
  size_t grad_bucket_bytes = size_t{1} << 20;
  /// Collectives that run while the evaluator goes on (comm_thread.h),
  /// started on first use.
  CommThread& async();
  std::shared_ptr<CommThread> comm_thread;
  /// `shard params`, while value_and_grad's pass runs on the ranks: where
  /// a gather's VJP hands its cotangent, reduce-scattered by bucket (Note
  /// [Param buckets] in param_buckets.cpp); null: each VJP sends its own.
  PieceScatter* scatter = nullptr;

  /// `split H` (Note [Split heads] in interp/check/plan/heads_plan.cpp):
  /// the dim split by heads and its whole size; "" without it. Then every
  /// rank has the whole batch: nothing is split, lowered or summed for it.
  std::string split_dim;
  int64_t split_size = 0;
  bool whole_batches() const { return !split_dim.empty(); }

  bool active() const { return world > 1 && comm != nullptr; }
  /// This rank's rows [start, end) of a batch of [n] (share_rows); all of
  /// them with whole batches.
  std::pair<int64_t, int64_t> share(int64_t n) const;
  /// Host effects (files, prints) happen once: on rank 0.
  bool host() const { return rank == 0; }
};

/// Rank [rank]'s rows [start, end) of a batch of [n]: as evenly as
/// possible, the first ranks one more (64 over 3: 22/21/21); in
/// deterministic mode whole canonical chunks (64 over 3 in chunks of 8:
/// 24/24/16).
std::pair<int64_t, int64_t> share_rows(int64_t n,
                                       int rank,
                                       int world,
                                       bool deterministic);

/// A differentiable sum across the ranks. Its VJP sums the cotangents
/// across the ranks too: every rank holds the whole (replicated) loss and
/// seeds 1/world (see the Note).
ops::Tensor all_reduce_sum(const ops::Tensor& x, DeviceContext& d);

/// The global result of a builtin whose table entry has a lowering (sum,
/// mean, cross_entropy, mse, batch_norm, reduce(with=sum)), from this
/// rank's share: the entry's share, its collective and its finish;
/// nullopt where the call runs per example (reduce given another function,
/// batch_norm in Eval mode).
std::optional<eval::Value> lower(eval::BuiltinCall& c, DeviceContext& d);

/// Whether [low] reduces across the batch for this call ([ctx] its
/// arguments): not reduce given another function, batch_norm in Eval mode
/// or a loss with reduction="none", which run per example.
bool lowers_here(const ops::Lowering& low, ops::ForwardCtx& ctx);

/// While this rank waits for the others in a collective (tells
/// DeviceContext::on_wait).
struct Waiting {
  DeviceContext& d;
  explicit Waiting(DeviceContext& dc) : d(dc) {
    if (d.on_wait) d.on_wait(true);
  }
  ~Waiting() {
    if (d.on_wait) d.on_wait(false);
  }
  Waiting(const Waiting&) = delete;
  Waiting& operator=(const Waiting&) = delete;
};

/// Every rank's rows of a batch-axis value, joined in rank order.
ops::Tensor join_rows(const ops::Tensor& local, DeviceContext& d);

/// The same along [axis] (a batch axis that is not leading).
ops::Tensor join_along(const ops::Tensor& local, int axis, DeviceContext& d);

/// This rank's rows of a whole batch-axis value (axis 0).
ops::Tensor my_rows(const ops::Tensor& whole, DeviceContext& d);

}  // namespace ss::devices::lower
