// Convolution and pooling over the last two axes: conv2d max_pool2d
// avg_pool2d.

#include <cstring>

#include "ops/defs/forward_util.h"
#include "ops/registry/op_def.h"
#include "ops/registry/rule_helpers.h"

namespace ss::ops {
namespace {

using K = Type::Kind;
using diag::Code;

/// (h + 2p - k) / s + 1 when everything is static, else a fresh size.
Axis conv_out(RuleCtx& ctx,
              const Axis& h,
              std::optional<int64_t> k,
              int64_t s,
              int64_t p,
              const char* name) {
  auto hs = h.static_size();
  if (hs && k && s > 0 && *hs + 2 * p >= *k)
    return Axis::lit((*hs + 2 * p - *k) / s + 1);
  return ctx.fresh(name);
}

Type conv2d_rule(RuleCtx& ctx) {
  const Type& x = ctx.type(0);
  const Type& k = ctx.type(1);
  if (any_error({&x, &k})) return Type::error();
  if (!require_float(ctx, 0) || !require_float(ctx, 1)) return Type::error();
  std::string label = describe(ctx, 0) + ", " + describe(ctx, 1);
  if (x.rank() != 4 || k.rank() != 4) {
    ctx.error(Code::E0303,
              ctx.call_span(),
              "conv2d needs x: [b C h w] and k: [O C kh kw]",
              label);
    return Type::error();
  }
  if (x.shape[1] != k.shape[1]) {
    ctx.error(Code::E0302,
              ctx.call_span(),
              "conv2d contracts channels " + x.shape[1].str_sized() + " with " +
                  k.shape[1].str_sized(),
              label);
    return Type::error();
  }
  // Unknown stride/padding (not constant): -1, giving fresh sizes.
  int64_t stride = 1, pad = 0;
  for (size_t i : {size_t(2), size_t(3)}) {
    if (!ctx.has(i)) continue;
    if (ctx.type(i).is_error()) return Type::error();
    auto v = ctx.const_int(i);
    (i == 2 ? stride : pad) = v ? *v : -1;
  }
  bool known = stride > 0 && pad >= 0;
  Axis h2 =
      known ? conv_out(
                  ctx, x.shape[2], k.shape[2].static_size(), stride, pad, "h2")
            : ctx.fresh("h2");
  Axis w2 =
      known ? conv_out(
                  ctx, x.shape[3], k.shape[3].static_size(), stride, pad, "w2")
            : ctx.fresh("w2");
  Type r = Type::tensor({x.shape[0], k.shape[0], h2, w2},
                        types::promote(x.dtype, k.dtype));
  r.varying = union_varying({&x, &k});
  return r;
}

Type pool_rule(RuleCtx& ctx) {
  const Type& x = ctx.type(0);
  if (any_error({&x, &ctx.type(1)})) return Type::error();
  if (!require_float(ctx, 0)) return Type::error();
  if (x.rank() < 2) {
    ctx.error(Code::E0303,
              ctx.span(0),
              std::string(ctx.op_name()) + " needs [.. h w], but " +
                  ctx.text(0) + " is " + x.str(),
              describe(ctx, 0));
    return Type::error();
  }
  if (ctx.type(1).kind != K::Int) {
    ctx.error(Code::E0303,
              ctx.span(1),
              std::string(ctx.op_name()) + "'s window is an int, but " +
                  ctx.text(1) + " is " + ctx.type(1).str(),
              describe(ctx, 1));
    return Type::error();
  }
  auto k = ctx.const_int(1);
  Type r = x;
  size_t n = x.rank();
  for (size_t i = n - 2; i < n; ++i)
    r.shape[i] =
        k && *k > 0
            ? conv_out(ctx, x.shape[i], k, *k, 0, i == n - 2 ? "h2" : "w2")
            : ctx.fresh(i == n - 2 ? "h2" : "w2");
  return r;
}

std::vector<Tensor> conv2d_fwd(ForwardCtx& ctx) {
  int64_t stride = ctx.has(2) ? ctx.integer(2) : 1;
  int64_t padding = ctx.has(3) ? ctx.integer(3) : 0;
  if (stride <= 0)
    fwd::value_error("stride must be >= 1, not " + std::to_string(stride));
  if (padding < 0)
    fwd::value_error("padding must be >= 0, not " + std::to_string(padding));
  return {conv2d(ctx.tensor(0),
                 ctx.tensor(1),
                 static_cast<int>(stride),
                 static_cast<int>(padding))};
}

// Note [max_pool2d's gradient at a tie]
// The max of each window of [y] ([.. h2 k w2 k]) as torch's max_pool2d: the
// whole gradient goes to the first maximum of the window in row-major
// order (argmax's choice), where max() over the window axes split it
// evenly among tied maxima (found by tests/torch/op_table.py's
// "max_pool2d ties" row). The windows are made [.. h2 w2 (k k)], the
// maximum gathered at its argmax.
Tensor window_max(const Tensor& y) {
  int n = static_cast<int>(y.rank());
  std::vector<int> perm;
  for (int a = 0; a < n - 4; ++a) perm.push_back(a);
  perm.insert(perm.end(), {n - 4, n - 2, n - 3, n - 1});
  Shape s(y.shape().begin(), y.shape().end() - 4);
  int64_t k = y.shape()[n - 3];
  s.insert(s.end(), {y.shape()[n - 4], y.shape()[n - 2], k * k});
  Tensor windows = reshape(permute(y, perm), s);
  int last = n - 2;
  Tensor first = argmax(windows, last, true);
  return squeeze(gather(windows, first, last), last);
}

// k x k windows with stride k over the last two axes: [.. h w] is cut to
// [.. h2*k w2*k] (h2 = h / k rounded down, as torch and the shape rule do),
// reshaped to [.. h2 k w2 k], and reduced over the two k axes.
std::vector<Tensor> pool_fwd(ForwardCtx& ctx) {
  Tensor x = ctx.tensor(0);
  int64_t k = ctx.integer(1);
  if (k <= 0)
    fwd::value_error("the window must be >= 1, not " + std::to_string(k));
  size_t r = x.rank();
  if (r < 2) fwd::shape_error("needs [.. h w], not " + shape_string(x.shape()));
  int64_t h = x.shape()[r - 2], w = x.shape()[r - 1];
  if (h < k || w < k)
    fwd::shape_error("a window of " + std::to_string(k) + " does not fit " +
                     std::to_string(h) + " x " + std::to_string(w));
  int64_t h2 = h / k, w2 = w / k;
  if (h2 * k != h) x = slice(x, static_cast<int>(r - 2), 0, h2 * k);
  if (w2 * k != w) x = slice(x, static_cast<int>(r - 1), 0, w2 * k);
  Shape s(x.shape().begin(), x.shape().end() - 2);
  s.insert(s.end(), {h2, k, w2, k});
  Tensor y = reshape(x, s);
  std::vector<int> win = {static_cast<int>(r - 1), static_cast<int>(r + 1)};
  if (std::strcmp(ctx.op_name(), "max_pool2d") == 0) return {window_max(y)};
  return {mean(y, win)};
}

OpDef def(const char* name,
          std::vector<ParamSpec> params,
          ShapeRule rule,
          Forward forward,
          const char* summary) {
  OpDef d{name, std::move(params), rule, summary};
  d.device = per_example();
  d.forward = forward;
  return d;
}

}  // namespace

std::vector<OpDef> ops_conv() {
  return {
      def("conv2d",
          {{"x"},
           {"k"},
           {"stride", ParamKind::Value, false},
           {"padding", ParamKind::Value, false}},
          conv2d_rule,
          conv2d_fwd,
          "2-d convolution, no bias: [b C h w] with [O C kh kw]")
          .with_torch(
              "torch.nn.functional.conv2d(x, k, stride=, padding=) (no bias)"),
      def("max_pool2d",
          {{"x"}, {"k"}},
          pool_rule,
          pool_fwd,
          "max over k x k windows of the last two axes, stride k")
          .with_torch("torch.nn.functional.max_pool2d(x, k)"),
      def("avg_pool2d",
          {{"x"}, {"k"}},
          pool_rule,
          pool_fwd,
          "mean over k x k windows of the last two axes, stride k")
          .with_torch("torch.nn.functional.avg_pool2d(x, k)"),
  };
}

}  // namespace ss::ops
