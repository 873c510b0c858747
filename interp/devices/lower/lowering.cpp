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
#include "interp/devices/lower/comm_thread.h"
#include "interp/eval/runtime_lib.h"
#include "ops/api.h"
#include "ops/autodiff/tape.h"

namespace ss::eval {

using VK = Value::Kind;
using ops::Tensor;

CommThread& DeviceContext::async() {
  if (!comm_thread) comm_thread = std::make_shared<CommThread>();
  return *comm_thread;
}

std::pair<int64_t, int64_t> DeviceContext::share(int64_t n) const {
  std::vector<int64_t> parts = dist::batch_split(n, world);
  int64_t start =
      std::accumulate(parts.begin(), parts.begin() + rank, int64_t(0));
  return {start, start + parts[rank]};
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

// The reduced positions of over= (every axis when absent).
std::vector<int> over_axes(BuiltinCall& c, size_t param, size_t rank) {
  if (c.info) {
    auto it = c.info->axes.find(static_cast<int>(param));
    if (it != c.info->axes.end()) return it->second;
  }
  std::vector<int> all(rank);
  std::iota(all.begin(), all.end(), 0);
  return all;
}

int64_t count_over(const Tensor& x, const std::vector<int>& axes) {
  int64_t n = 1;
  for (int a : axes) n *= x.shape()[a];
  return n;
}

Tensor global_mean(const Tensor& local_sum,
                   int64_t local_count,
                   DeviceContext& d,
                   types::DType round_sum_to);

// A local sum and a count, all-reduced in one message ([values..., count],
// as devices.md counts it), then divided: the whole batch's mean.
//
// Note [Half-precision means]: a bf16 or f16 mean is summed in f32 (the
// shares' sums, the count: bf16 holds integers exactly only up to 256, so a
// count of 2999 would be 3008), and the whole sum is rounded to the half
// dtype before the division and the mean after it, as torch computes one
// device's bf16 mean: the result is one device's, not each share rounded.
Tensor global_mean(const Tensor& local_sum,
                   int64_t local_count,
                   DeviceContext& d) {
  const types::DType dt = local_sum.dtype();
  if (dt == types::DType::BF16 || dt == types::DType::F16) {
    Tensor m = global_mean(
        ops::cast(local_sum, types::DType::F32), local_count, d, dt);
    return ops::cast(m, dt);
  }
  return global_mean(local_sum, local_count, d, dt);
}

Tensor global_mean(const Tensor& local_sum,
                   int64_t local_count,
                   DeviceContext& d,
                   types::DType round_sum_to) {
  Tensor flat = ops::reshape(local_sum, {-1});
  Tensor count = ops::Tensor::scalar(double(local_count), flat.dtype());
  Tensor packed = ops::concat({flat, ops::reshape(count, {1})}, 0);
  Tensor all = all_reduce_sum(packed, d);
  int64_t n = flat.numel();
  Tensor s = ops::reshape(ops::slice(all, 0, 0, n), local_sum.shape());
  if (round_sum_to != s.dtype())
    s = ops::cast(ops::cast(s, round_sum_to), s.dtype());
  Tensor c = ops::mark_replicated(
      ops::reshape(ops::stop_grad(ops::slice(all, 0, n, n + 1)), {}));
  return ops::div(s, c);
}

Value tensor_value(const Tensor& t) {
  return Value::tensor(t);
}

// batch_norm in Train mode over the whole batch: sums of x and x² and the
// count, in f64, in one all-reduce (2·C + 1 values).
Value batch_norm_train(BuiltinCall& c, DeviceContext& d) {
  Tensor x0 = c.arg(0).t;
  auto* bn = c.arg(1).as<ModelRef>();
  Tensor x = ops::cast(x0, types::DType::F64);
  std::vector<int> axes;
  for (size_t a = 0; a < x.rank(); ++a)
    if (a != 1) axes.push_back(static_cast<int>(a));
  int64_t C = x.shape()[1];
  int64_t local_n = count_over(x, axes);
  Tensor s1 = ops::sum(x, axes);
  Tensor s2 = ops::sum(ops::mul(x, x), axes);
  Tensor packed = ops::concat(
      {s1,
       s2,
       ops::Tensor::scalar(double(local_n), types::DType::F64).reshape({1})},
      0);
  Tensor all = all_reduce_sum(packed, d);
  double n = all.at(2 * C);
  if (n <= 1)
    c.fail("ValueError",
           "batch_norm needs more than one value per "
           "channel in Train mode");
  Tensor mu = ops::div(ops::slice(all, 0, 0, C), ops::scalar_like(n, all));
  Tensor ex2 = ops::div(ops::slice(all, 0, C, 2 * C), ops::scalar_like(n, all));
  Tensor var = ops::sub(ex2, ops::mul(mu, mu));  // biased, as torch normalises
  ops::Shape bshape(x.rank(), 1);
  bshape[1] = C;
  Tensor xhat = ops::mul(ops::sub(x, ops::reshape(mu, bshape)),
                         ops::rsqrt(ops::add(ops::reshape(var, bshape),
                                             ops::scalar_like(1e-5, var))));
  // Running statistics: momentum 0.1 and the unbiased variance, as torch.
  auto step = [](const Tensor& run, const Tensor& batch) {
    Tensor b = ops::cast(batch, run.dtype());
    return ops::add(ops::mul(run, ops::scalar_like(0.9, run)),
                    ops::mul(b, ops::scalar_like(0.1, b)));
  };
  Tensor unbiased =
      ops::mul(ops::stop_grad(var), ops::scalar_like(n / (n - 1), var));
  bn->set("running_mean",
          ops::stop_grad(step(bn->get("running_mean"), ops::stop_grad(mu))));
  bn->set("running_var",
          ops::stop_grad(step(bn->get("running_var"), unbiased)));
  Tensor g = ops::reshape(ops::cast(bn->get("g"), types::DType::F64), bshape);
  Tensor b = ops::reshape(ops::cast(bn->get("b"), types::DType::F64), bshape);
  return tensor_value(ops::cast(ops::add(ops::mul(xhat, g), b), x0.dtype()));
}

}  // namespace

Value lower(BuiltinCall& c, DeviceContext& d) {
  std::string name = c.op.name;
  if (name == "batch_norm") {
    if (c.has(2) && c.arg(2).kind == VK::Mode &&
        c.arg(2).as<ModeState>()->train)
      return batch_norm_train(c, d);
    return c.in.call_builtin_forward(c);  // running statistics: per example
  }
  if (name == "sum" || (name == "reduce" && c.has(2) && c.arg(2).s == "sum")) {
    Value local = c.in.call_builtin_forward(c);
    return tensor_value(all_reduce_sum(local.t, d));
  }
  if (name == "mean") {
    Tensor x = c.arg(0).t;
    std::vector<int> axes = over_axes(c, 1, x.rank());
    // A half's share is summed in f32 (Note [Half-precision means]).
    const bool half =
        x.dtype() == types::DType::BF16 || x.dtype() == types::DType::F16;
    Tensor xf = types::is_float(x.dtype()) && !half
                    ? x
                    : ops::cast(x, types::DType::F32);
    Tensor local = ops::sum(xf, axes);
    if (half)
      return tensor_value(ops::cast(
          global_mean(local, count_over(x, axes), d, x.dtype()), x.dtype()));
    return tensor_value(global_mean(local, count_over(x, axes), d));
  }
  if (name == "cross_entropy" || name == "mse") {
    // The forward's mean over this share, times its count, is its sum.
    Value local = c.in.call_builtin_forward(c);
    int64_t n;
    if (name == "mse") {
      n = ops::numel_of(ops::sub(c.arg(0).t, c.arg(1).t).shape());
    } else {
      const Tensor& label = c.arg(1).t;
      n = types::is_float(label.dtype())
              ? c.arg(0).t.numel() / c.arg(0).t.shape().back()
              : label.numel();
    }
    // A share with no examples (a batch of 1 on 3 devices) adds nothing:
    // its local mean is 0/0. Its zero is still computed from the inputs
    // (their empty sums), so the backward pass reaches the params through
    // the same ops as on the other ranks and finishes their gradients in
    // the same order (grad_allreduce.h).
    // A half's mean times its count is taken in f32, so that the sum is
    // not rounded twice (Note [Half-precision means]).
    const types::DType dt = local.t.dtype();
    const bool half = dt == types::DType::BF16 || dt == types::DType::F16;
    Tensor lt = half ? ops::cast(local.t, types::DType::F32) : local.t;
    Tensor s;
    if (n == 0) {
      Tensor none = ops::sum(c.arg(0).t);
      if (name == "mse") none = ops::add(none, ops::sum(c.arg(1).t));
      s = ops::cast(ops::mul(none, ops::scalar_like(0.0, none)), lt.dtype());
    } else {
      s = ops::mul(lt, ops::scalar_like(double(n), lt));
    }
    Tensor m = global_mean(s, n, d);
    return tensor_value(half ? ops::cast(m, dt) : m);
  }
  return c.in.call_builtin_forward(c);
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

}  // namespace ss::eval
