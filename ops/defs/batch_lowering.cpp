// The lowerings' rank-side compute (batch_lowering.h): ported from the
// evaluator's lowering, op for op, so that the payload, the rounding and
// the tape are one device's as before (Note [Same result as one device] in
// interp/devices/lower/lowering.cpp; Note [Half-precision means] below).
#include "ops/defs/batch_lowering.h"

#include <numeric>

#include "ops/api.h"
#include "ops/autodiff/tape.h"
#include "ops/defs/forward_util.h"

namespace ss::ops::lowering {

namespace {

bool is_half(types::DType dt) {
  return dt == types::DType::BF16 || dt == types::DType::F16;
}

// Note [Half-precision means]: a bf16 or f16 mean is summed in f32 (the
// shares' sums, the count: bf16 holds integers exactly only up to 256, so a
// count of 2999 would be 3008), and the whole sum is rounded to the half
// dtype before the division and the mean after it, as torch computes one
// device's bf16 mean: the result is one device's, not each share rounded.
//
// A local sum and a count in one payload ([values..., count], as
// devices.md counts it); after the all-reduce the whole sum, rounded to
// [round_sum_to] first when that is another dtype (a half mean: Note
// [Half-precision means]), divided by the whole count, then cast to [out].
Share sum_and_count(const Tensor& local_sum,
                    int64_t local_count,
                    types::DType round_sum_to,
                    types::DType out) {
  Tensor flat = reshape(local_sum, {-1});
  Tensor count = scalar_like(double(local_count), flat);
  Share s;
  s.send = concat({flat, reshape(count, {1})}, 0);
  const int64_t n = flat.numel();
  const Shape shape = local_sum.shape();
  s.finish = [n, shape, round_sum_to, out](const Tensor& all) {
    Tensor sum = reshape(slice(all, 0, 0, n), shape);
    if (round_sum_to != sum.dtype())
      sum = cast(cast(sum, round_sum_to), sum.dtype());
    Tensor c = mark_replicated(reshape(stop_grad(slice(all, 0, n, n + 1)), {}));
    Tensor m = div(sum, c);
    if (out != m.dtype()) m = cast(m, out);
    return std::vector<Tensor>{m};
  };
  return s;
}

}  // namespace

Share partial_sum(ForwardCtx& ctx, Forward local) {
  Share s;
  s.send = local(ctx).at(0);
  s.finish = [](const Tensor& all) { return std::vector<Tensor>{all}; };
  return s;
}

Share mean(ForwardCtx& ctx) {
  Tensor x = ctx.tensor(0);
  std::vector<int> axes = fwd::over_axes(ctx, 1, x);
  if (axes.empty()) {
    axes.resize(x.rank());
    std::iota(axes.begin(), axes.end(), 0);
  }
  // A half's share is summed in f32 (Note [Half-precision means]).
  const bool half = is_half(x.dtype());
  Tensor xf =
      types::is_float(x.dtype()) && !half ? x : cast(x, types::DType::F32);
  Tensor local = sum(xf, axes);
  const int64_t n = fwd::count_over(x, axes);
  if (half) return sum_and_count(local, n, x.dtype(), x.dtype());
  return sum_and_count(local, n, local.dtype(), local.dtype());
}

Share loss(const Tensor& local_sum,
           const Tensor& local_denominator,
           bool mean,
           types::DType out) {
  Tensor d = stop_grad(cast(local_denominator, local_sum.dtype()));
  Share s;
  s.send = concat({reshape(local_sum, {1}), reshape(d, {1})}, 0);
  s.finish = [mean, out](const Tensor& all) {
    Tensor total = reshape(slice(all, 0, 0, 1), {});
    if (mean) {
      Tensor n = mark_replicated(reshape(stop_grad(slice(all, 0, 1, 2)), {}));
      total = div(total, n);
    }
    if (out != total.dtype()) total = cast(total, out);
    return std::vector<Tensor>{total};
  };
  return s;
}

Share batch_norm_train(ForwardCtx& ctx) {
  Tensor x0 = ctx.tensor(0);
  Tensor x = cast(x0, types::DType::F64);
  std::vector<int> axes;
  for (size_t a = 0; a < x.rank(); ++a)
    if (a != 1) axes.push_back(static_cast<int>(a));
  const int64_t C = x.shape()[1];
  const int64_t local_n = fwd::count_over(x, axes);
  Tensor s1 = sum(x, axes);
  Tensor s2 = sum(mul(x, x), axes);
  Share s;
  s.send = concat({s1, s2, scalar_like(double(local_n), x).reshape({1})}, 0);
  // [ctx] outlives the finish: the devices layer calls it in the same call.
  ForwardCtx* c = &ctx;
  const size_t rank = x.rank();
  // The whole batch's statistics, the running statistics' step, and the
  // affine params, each [C]; then each row normalised with them.
  s.whole = [c, C](const Tensor& all) {
    double n = all.at(2 * C);
    if (n <= 1)
      fwd::value_error("needs more than one value per channel in Train mode");
    Tensor mu = div(slice(all, 0, 0, C), scalar_like(n, all));
    Tensor ex2 = div(slice(all, 0, C, 2 * C), scalar_like(n, all));
    Tensor var = sub(ex2, mul(mu, mu));  // biased, as torch normalises
    Tensor rstd = rsqrt(add(var, scalar_like(1e-5, var)));
    // Running statistics: momentum 0.1 and the unbiased variance, as torch.
    auto step = [](const Tensor& run, const Tensor& batch) {
      Tensor b = cast(batch, run.dtype());
      return add(mul(run, scalar_like(0.9, run)), mul(b, scalar_like(0.1, b)));
    };
    Tensor unbiased = mul(stop_grad(var), scalar_like(n / (n - 1), var));
    c->set_model_field(
        1,
        "running_mean",
        stop_grad(step(c->model_field(1, "running_mean"), stop_grad(mu))));
    c->set_model_field(
        1,
        "running_var",
        stop_grad(step(c->model_field(1, "running_var"), unbiased)));
    Tensor g = cast(c->model_field(1, "g"), types::DType::F64);
    Tensor b = cast(c->model_field(1, "b"), types::DType::F64);
    return std::vector<Tensor>{mu, rstd, g, b};
  };
  s.rows = [rank, C](const Tensor& x0, const std::vector<Tensor>& w) {
    Shape bshape(rank, 1);
    bshape[1] = C;
    Tensor x = cast(x0, types::DType::F64);
    Tensor xhat = mul(sub(x, reshape(w[0], bshape)), reshape(w[1], bshape));
    Tensor y = add(mul(xhat, reshape(w[2], bshape)), reshape(w[3], bshape));
    return cast(y, x0.dtype());
  };
  s.finish = [x0, whole = s.whole, rows = s.rows](const Tensor& all) {
    return std::vector<Tensor>{rows(x0, whole(all))};
  };
  return s;
}

}  // namespace ss::ops::lowering
