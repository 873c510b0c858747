#include "ops/defs/forward_util.h"

#include <algorithm>
#include <numeric>

namespace ss::ops::fwd {

void shape_error(const std::string& message) {
  throw OpError(OpError::Kind::Shape, message);
}

void value_error(const std::string& message) {
  throw OpError(OpError::Kind::Value, message);
}

Tensor compute_float(const Tensor& x) {
  DType d = x.dtype();
  return d == DType::F32 || d == DType::F64 ? x : cast(x, DType::F32);
}

Tensor cast_back(const Tensor& y, const Tensor& x0) {
  return y.dtype() == x0.dtype() || !types::is_float(x0.dtype())
             ? y
             : cast(y, x0.dtype());
}

Tensor to_float(const Tensor& x) {
  return types::is_float(x.dtype()) ? x : cast(x, DType::F32);
}

std::vector<int> over_axes(ForwardCtx& ctx, size_t i, const Tensor& x) {
  auto ax = ctx.axes(i);
  if (!ax) return {};
  std::vector<int> out;
  for (int a : *ax) out.push_back(normalize_axis(a, x.rank()));
  return out;
}

int over_one(ForwardCtx& ctx, size_t i, const Tensor& x) {
  auto ax = ctx.axes(i);
  if (!ax) {
    if (x.rank() == 1) return 0;
    value_error("needs over= to name one axis of a " + shape_string(x.shape()) +
                " tensor");
  }
  if (ax->size() != 1)
    value_error("over= must name one axis, not " + std::to_string(ax->size()));
  return normalize_axis((*ax)[0], x.rank());
}

int64_t count_over(const Tensor& x, const std::vector<int>& axes) {
  if (axes.empty()) return x.numel();
  int64_t n = 1;
  for (int a : axes) n *= x.shape()[normalize_axis(a, x.rank())];
  return n;
}

Tensor stable_shift(const Tensor& x, const std::vector<int>& axes) {
  Tensor m = stop_grad(max(x, axes, true));
  // All -inf (a fully masked row) or +inf: shift by 0 instead, as torch.
  return where(isfinite(m), m, zeros_like(m));
}

Tensor logsumexp(const Tensor& x0,
                 const std::vector<int>& axes,
                 bool keepdims) {
  Tensor x = to_float(x0);
  Tensor m = stable_shift(x, axes);
  Tensor s = log(sum(exp(sub(x, m)), axes, true));
  Tensor y = add(s, m);
  if (keepdims) return y;
  std::vector<int> all(x.rank());
  std::iota(all.begin(), all.end(), 0);
  const std::vector<int>& drop = axes.empty() ? all : axes;
  Shape out;
  for (size_t a = 0; a < x.rank(); ++a) {
    bool gone = false;
    for (int d : drop) gone = gone || normalize_axis(d, x.rank()) == (int)a;
    if (!gone) out.push_back(x.shape()[a]);
  }
  return reshape(y, out);
}

Tensor variance(const Tensor& x0,
                const std::vector<int>& axes,
                bool unbiased,
                bool keepdims) {
  Tensor x = to_float(x0);
  Tensor d = sub(x, mean(x, axes, true));
  int64_t n = count_over(x, axes) - (unbiased ? 1 : 0);
  Tensor s = sum(mul(d, d), axes, keepdims);
  // n == 0 (one value, unbiased) gives NaN or inf, as torch.
  return div(s, scalar_like(static_cast<double>(n), s));
}

Tensor as_result_dtype(ForwardCtx& ctx, const Tensor& t) {
  const types::Type& r = ctx.result_type();
  if (r.is_tensor() && r.dtype != t.dtype()) return cast(t, r.dtype);
  return t;
}

Tensor along(const Tensor& v, const std::vector<int>& pos, size_t rank) {
  if (v.rank() != pos.size())
    shape_error("a parameter of shape " + shape_string(v.shape()) +
                " does not match " + std::to_string(pos.size()) +
                " normalised axes");
  std::vector<int> order(pos.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    return pos[a] < pos[b];
  });
  bool sorted = std::is_sorted(order.begin(), order.end());
  Tensor p = sorted ? v : permute(v, order);
  Shape s(rank, 1);
  for (size_t j = 0; j < order.size(); ++j)
    s[pos[order[j]]] = v.shape()[order[j]];
  return reshape(p, s);
}

}  // namespace ss::ops::fwd
