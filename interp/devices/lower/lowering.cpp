// Note [Same result as one device]
// Every rank holds its share of each batch (devices.md item 3) and the
// whole of everything else. A reduction across the batch axis is computed
// on the share and summed across the ranks (an all-reduce), so every rank
// holds the whole batch's value (item 4): mean sends its sums and a count,
// cross_entropy and mse a sum and a count, batch_norm 2·C + 1 values in
// f64. For gradients, the program's loss is one value that every rank
// holds: each rank seeds its backward with 1/world and every all-reduce's
// VJP sums its cotangents across the ranks (the transpose of a sum of
// shares), so a rank's gradient is its share's part of the whole batch's
// gradient; value_and_grad then sums the params' gradients across the
// ranks, one all-reduce per dtype (item 5), and every rank applies the same
// update. Uneven shares count each example once because counts are summed,
// never assumed.
#include "interp/devices/lower/lowering.h"

#include <map>
#include <numeric>

#include "dist/comm/communicator.h"
#include "interp/devices/lower/chunks.h"
#include "interp/devices/lower/comm_thread.h"
#include "interp/eval/runtime_lib.h"
#include "ops/api.h"
#include "ops/autodiff/tape.h"
#include "ops/core/op_error.h"
#include "ops/registry/op_def.h"

namespace ss::devices::lower {

// The evaluator's values and objects, which the ranks' code works on.
using namespace ss::eval;

using ops::Tensor;

CommThread& DeviceContext::async() {
  if (!comm_thread) comm_thread = std::make_shared<CommThread>();
  return *comm_thread;
}

std::pair<int64_t, int64_t> share_rows(int64_t n,
                                       int rank,
                                       int world,
                                       bool deterministic) {
  if (deterministic) return ChunkLayout::of(n, world).rows_of(rank);
  std::vector<int64_t> parts = dist::batch_split(n, world);
  int64_t start =
      std::accumulate(parts.begin(), parts.begin() + rank, int64_t(0));
  return {start, start + parts[rank]};
}

std::pair<int64_t, int64_t> DeviceContext::share(int64_t n) const {
  if (whole_batches()) return {0, n};
  return share_rows(n, rank, world, deterministic);
}

namespace {

Tensor summed(const Tensor& x, DeviceContext& d) {
  Tensor t = x.detach().clone();
  Waiting w(d);
  d.comm->all_reduce(t, dist::ReduceOp::Sum, dist::Options{});
  return t;
}

}  // namespace

Tensor all_reduce_sum(const Tensor& x, DeviceContext& d) {
  Tensor y = summed(x, d);
  if (!types::is_float(x.dtype())) return ops::mark_replicated(y);
  DeviceContext* dp = &d;
  // When every rank holds the same cotangent, their sum is world x it: no
  // message (ops/autodiff/tape.cpp, Note [Replicated cotangents]).
  return ops::mark_replicated(
      ops::record("all_reduce", y, {x}, [dp](const Tensor& g) {
        if (ops::cotangent_replicated())
          return std::vector<Tensor>{
              ops::mul(g, ops::scalar_like(double(dp->world), g))};
        return std::vector<Tensor>{summed(g, *dp)};
      }));
}

namespace {

// The entry's collective on this rank's payload.
Tensor combine(ops::Collective kind, const Tensor& send, DeviceContext& d) {
  switch (kind) {
    case ops::Collective::AllReduceSum:
      return all_reduce_sum(send, d);
  }
  return all_reduce_sum(send, d);
}

}  // namespace

// The entry's lowering, run generically (Note [An op's rule on several
// devices] in ops/registry/device_rule.h): this rank's share's payload,
// the collective, and the entry's finish of the whole batch's value.
std::optional<Value> lower(BuiltinCall& c, DeviceContext& d) {
  const ops::Lowering* low = c.op.device.lowering;
  if (!low) return std::nullopt;
  std::unique_ptr<ops::ForwardCtx> ctx = forward_ctx(c);
  if (!lowers_here(*low, *ctx)) return std::nullopt;
  try {
    ops::Share share = low->share(*ctx);
    Tensor all = combine(low->collective, share.send, d);
    return Value::tensor(share.finish(all).at(0));
  } catch (const ops::OpError& e) {
    c.fail(e.kind() == ops::OpError::Kind::Shape ? "ShapeError" : "ValueError",
           std::string(c.op.name) + ": " + e.what());
  }
}

bool lowers_here(const ops::Lowering& low, ops::ForwardCtx& ctx) {
  // An absent with= is reduce's default, sum, as the checker counts it.
  if (low.only_with && ctx.has(low.only_param) &&
      ctx.str(low.only_param) != low.only_with)
    return false;
  if (low.eval_mode_param >= 0 &&
      !(ctx.has(low.eval_mode_param) && ctx.training(low.eval_mode_param)))
    return false;
  return !(low.per_example_with && ctx.has(low.per_example_param) &&
           ctx.str(low.per_example_param) == low.per_example_with);
}

Tensor join_rows(const Tensor& local, DeviceContext& d) {
  std::vector<int64_t> rows(d.world);
  Tensor n = ops::Tensor::scalar(double(local.shape()[0]), types::DType::I64)
                 .reshape({1});
  Tensor all;
  Waiting w(d);
  d.comm->all_gather(n, all, dist::Options{});
  for (int r = 0; r < d.world; ++r) rows[r] = static_cast<int64_t>(all.at(r));
  Tensor out;
  d.comm->all_gather_v(local.detach(), out, rows, dist::Options{});
  return out;
}

Tensor join_along(const Tensor& local, int axis, DeviceContext& d) {
  if (axis == 0) return join_rows(local, d);
  std::vector<int> to_front(local.rank()), back(local.rank());
  to_front[0] = axis;
  for (int k = 0, j = 1; k < int(local.rank()); ++k)
    if (k != axis) to_front[j++] = k;
  for (int k = 0; k < int(local.rank()); ++k) back[to_front[k]] = k;
  return ops::permute(join_rows(ops::permute(local, to_front), d), back);
}

Tensor my_rows(const Tensor& whole, DeviceContext& d) {
  auto [start, end] = d.share(whole.shape()[0]);
  return ops::slice(whole, 0, start, end);
}

}  // namespace ss::devices::lower
