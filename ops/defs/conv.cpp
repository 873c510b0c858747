// Convolution and pooling over the last axes, with torch.nn.functional's
// options: conv2d conv1d conv_transpose2d (bias=, stride=, padding=,
// dilation=, groups=), max_pool2d avg_pool2d (stride=, padding=) and
// adaptive_avg_pool2d.

#include <cmath>
#include <cstring>

#include "ops/core/divided_dim.h"
#include "ops/defs/forward_util.h"
#include "ops/registry/op_def.h"
#include "ops/registry/rule_helpers.h"

namespace ss::ops {
namespace {

using K = Type::Kind;
using diag::Code;

// ------------------------------------------------------------ the options

// A convolution's params after x and k: their positions, by op.
struct ConvParams {
  size_t stride, padding, dilation, groups, bias;
  size_t output_padding = 0;  // conv_transpose2d's; 0: none
};

constexpr ConvParams kConvParams = {2, 3, 4, 5, 6};
// torch's order: input, weight, bias, stride, padding, output_padding,
// groups, dilation (keywords here, so the order is only the reference's).
constexpr ConvParams kTransposeParams = {2, 3, 6, 5, 7, 4};

// The options' values where the checker knows them (a literal or a dim),
// -1 where not.
struct ConstConv {
  int64_t stride = 1, padding = 0, dilation = 1, groups = 1, output_padding = 0;
  bool known() const {
    return stride > 0 && padding >= 0 && dilation > 0 && groups > 0 &&
           output_padding >= 0;
  }
};

ConstConv const_conv(RuleCtx& ctx, const ConvParams& p) {
  ConstConv c;
  auto read = [&](size_t i, int64_t& out) {
    if (!ctx.has(i)) return;
    auto v = ctx.const_int(i);
    out = v ? *v : -1;
  };
  read(p.stride, c.stride);
  read(p.padding, c.padding);
  read(p.dilation, c.dilation);
  read(p.groups, c.groups);
  if (p.output_padding) read(p.output_padding, c.output_padding);
  return c;
}

// Each option an int (E0303 otherwise).
bool ints(RuleCtx& ctx, const ConvParams& p) {
  for (size_t i : {p.stride, p.padding, p.dilation, p.groups, p.output_padding})
    if (i && ctx.has(i)) {
      if (ctx.type(i).is_error()) return false;
      if (!require_kind(ctx, i, K::Int, "an int")) return false;
    }
  return true;
}

/// A convolution's output size along an axis of [h] with a kernel of
/// [k]: (h + 2p - d(k - 1) - 1) / s + 1, or [transposed], (h - 1)s - 2p +
/// d(k - 1) + output_padding + 1; a fresh size unless all are static.
Axis conv_out(RuleCtx& ctx,
              const Axis& h,
              const Axis& k,
              const ConstConv& c,
              const char* name,
              bool transposed = false) {
  auto hs = h.static_size();
  auto ks = k.static_size();
  // A size-keeping window (stride 1, 2p = d(k - 1)) keeps the axis itself,
  // a dim or a size variable: conv2d(x, k, padding=1) of [b C S S] is
  // [b C S S], so a ResNet's `out + x` checks.
  if (!transposed && c.known() && ks && c.stride == 1 &&
      2 * c.padding == c.dilation * (*ks - 1))
    return h;
  if (!c.known() || !hs || !ks) return ctx.fresh(name);
  const int64_t n =
      transposed
          ? (*hs - 1) * c.stride - 2 * c.padding + c.dilation * (*ks - 1) +
                c.output_padding + 1
          : ConvShape::square(c.stride, c.padding, c.dilation).out(0, *hs, *ks);
  // Note [Divided dims]: a stride that divides a dim gives S/stride.
  if (!transposed && c.stride > 1 && n * c.stride == *hs)
    if (std::optional<Axis> q = types::divided_dim(h, c.stride)) return *q;
  return n >= 1 ? Axis::lit(n) : ctx.fresh(name);
}

// x's channels against k's: k's are x's / groups (E0302 where both sizes
// are known and differ; the same axis when groups is 1).
bool channels_fit(RuleCtx& ctx,
                  const Axis& xc,
                  const Axis& kc,
                  const ConstConv& c,
                  const std::string& label) {
  bool ok = true;
  if (c.groups == 1) {
    ok = xc == kc;
  } else if (c.groups > 1) {
    auto xs = xc.static_size(), ks = kc.static_size();
    ok = !xs || !ks || *xs == *ks * c.groups;
  }
  if (!ok)
    ctx.error(Code::E0302,
              ctx.call_span(),
              std::string(ctx.op_name()) + " contracts channels " +
                  xc.str_sized() + " with " + kc.str_sized() +
                  (c.groups > 1 ? " in " + std::to_string(c.groups) + " groups"
                                : std::string()),
              label);
  return ok;
}

// bias= of the result's channels [O] (E0302 otherwise).
bool bias_fits(RuleCtx& ctx, size_t i, const Axis& o) {
  if (!ctx.has(i)) return true;
  const Type& b = ctx.type(i);
  if (b.is_error() || !require_float(ctx, i)) return false;
  if (b.rank() == 1 && b.shape[0] == o) return true;
  ctx.error(Code::E0302,
            ctx.span(i),
            std::string(ctx.op_name()) +
                "'s bias is one per output channel, [" + o.str() + "], but " +
                ctx.text(i) + " is " + b.str(),
            describe(ctx, i));
  return false;
}

// ------------------------------------------------------------------ rules

// conv2d: x [b C h w], k [O C/groups kh kw] -> [b O h2 w2]; conv1d: the
// same over one axis, x [b C l], k [O C/groups kl] -> [b O l2].
// x and k floats of [rank] axes and the options ints, else an error
// naming the shapes [needs] (E0303).
bool conv_operands(RuleCtx& ctx,
                   size_t rank,
                   const ConvParams& p,
                   const char* needs) {
  const Type& x = ctx.type(0);
  const Type& k = ctx.type(1);
  if (any_error({&x, &k})) return false;
  if (!require_float(ctx, 0) || !require_float(ctx, 1)) return false;
  if (x.rank() != rank || k.rank() != rank) {
    ctx.error(Code::E0303,
              ctx.call_span(),
              std::string(ctx.op_name()) + " needs " + needs,
              describe(ctx, 0) + ", " + describe(ctx, 1));
    return false;
  }
  return ints(ctx, p);
}

Type conv_rule(RuleCtx& ctx) {
  const Type& x = ctx.type(0);
  const Type& k = ctx.type(1);
  const bool one = std::strcmp(ctx.op_name(), "conv1d") == 0;
  const size_t rank = one ? 3 : 4;
  if (!conv_operands(ctx,
                     rank,
                     kConvParams,
                     one ? "x: [b C l] and k: [O C kl]"
                         : "x: [b C h w] and k: [O C kh kw]"))
    return Type::error();
  std::string label = describe(ctx, 0) + ", " + describe(ctx, 1);
  ConstConv c = const_conv(ctx, kConvParams);
  if (!channels_fit(ctx, x.shape[1], k.shape[1], c, label) ||
      !bias_fits(ctx, kConvParams.bias, k.shape[0]))
    return Type::error();
  std::vector<Axis> shape = {x.shape[0], k.shape[0]};
  for (size_t a = 2; a < rank; ++a)
    shape.push_back(conv_out(ctx,
                             x.shape[a],
                             k.shape[a],
                             c,
                             one      ? "l2"
                             : a == 2 ? "h2"
                                      : "w2"));
  Type r = Type::tensor(shape, types::promote(x.dtype, k.dtype));
  r.varying = union_varying({&x, &k});
  return r;
}

// conv_transpose2d: x [b Cin h w], k [Cin Cout/groups kh kw] -> [b Cout h2
// w2].
Type conv_transpose_rule(RuleCtx& ctx) {
  const Type& x = ctx.type(0);
  const Type& k = ctx.type(1);
  if (!conv_operands(
          ctx, 4, kTransposeParams, "x: [b Cin h w] and k: [Cin Cout kh kw]"))
    return Type::error();
  std::string label = describe(ctx, 0) + ", " + describe(ctx, 1);
  ConstConv c = const_conv(ctx, kTransposeParams);
  ConstConv one = c;
  one.groups = 1;  // x's channels are k's first axis, whatever the groups
  if (!channels_fit(ctx, x.shape[1], k.shape[0], one, label))
    return Type::error();
  Axis out = k.shape[1];
  if (c.groups != 1) {
    auto ks = k.shape[1].static_size();
    out = ks && c.groups > 0 ? Axis::lit(*ks * c.groups) : ctx.fresh("Cout");
  }
  if (!bias_fits(ctx, kTransposeParams.bias, out)) return Type::error();
  Type r = Type::tensor({x.shape[0],
                         out,
                         conv_out(ctx, x.shape[2], k.shape[2], c, "h2", true),
                         conv_out(ctx, x.shape[3], k.shape[3], c, "w2", true)},
                        types::promote(x.dtype, k.dtype));
  r.varying = union_varying({&x, &k});
  return r;
}

// x [.. h w] and param 1 an int (the window, or adaptive's output size).
bool pool_operands(RuleCtx& ctx) {
  const Type& x = ctx.type(0);
  if (any_error({&x, &ctx.type(1)})) return false;
  if (!require_float(ctx, 0)) return false;
  if (x.rank() < 2) {
    ctx.error(Code::E0303,
              ctx.span(0),
              std::string(ctx.op_name()) + " needs [.. h w], but " +
                  ctx.text(0) + " is " + x.str(),
              describe(ctx, 0));
    return false;
  }
  // adaptive_avg_pool2d's output size may be a pair, (oh, ow), as torch's.
  const Type& size = ctx.type(1);
  const bool pair = size.kind == K::Tuple && size.elems.size() == 2 &&
                    size.elems[0].kind == K::Int &&
                    size.elems[1].kind == K::Int;
  const bool adaptive = std::strcmp(ctx.op_name(), "adaptive_avg_pool2d") == 0;
  if (size.kind != K::Int && !(adaptive && pair)) {
    ctx.error(Code::E0303,
              ctx.span(1),
              std::string(ctx.op_name()) + "'s " +
                  (adaptive ? "output size" : "window") + " is an int" +
                  (adaptive ? " or a pair of ints" : "") + ", but " +
                  ctx.text(1) + " is " + ctx.type(1).str(),
              describe(ctx, 1));
    return false;
  }
  for (size_t i : {size_t{2}, size_t{3}})
    if (ctx.has(i) &&
        (ctx.type(i).is_error() || !require_kind(ctx, i, K::Int, "an int")))
      return false;
  return true;
}

// max_pool2d / avg_pool2d(x, k, stride=k, padding=0).
Type pool_rule(RuleCtx& ctx) {
  if (!pool_operands(ctx)) return Type::error();
  const Type& x = ctx.type(0);
  auto k = ctx.const_int(1);
  ConstConv c;
  c.stride = ctx.has(2) ? ctx.const_int(2).value_or(-1) : k.value_or(-1);
  c.padding = ctx.has(3) ? ctx.const_int(3).value_or(-1) : 0;
  Axis window = k ? Axis::lit(*k) : ctx.fresh("k");
  Type r = x;
  size_t n = x.rank();
  for (size_t i = n - 2; i < n; ++i)
    r.shape[i] = conv_out(ctx, x.shape[i], window, c, i == n - 2 ? "h2" : "w2");
  return r;
}

// adaptive_avg_pool2d(x, size): [.. h w] -> [.. size size], or with a
// pair (oh, ow) -> [.. oh ow] (literal sizes when known at check time).
Type adaptive_pool_rule(RuleCtx& ctx) {
  if (!pool_operands(ctx)) return Type::error();
  Type r = ctx.type(0);
  if (ctx.type(1).kind == K::Tuple) {
    std::optional<std::vector<int64_t>> v = ctx.const_int_tuple(1);
    for (size_t i = 0; i < 2; ++i) {
      const int64_t n = v ? (*v)[i] : 0;
      r.shape[r.rank() - 2 + i] =
          n >= 1 ? Axis::lit(n) : ctx.fresh(i == 0 ? "oh" : "ow");
    }
    return r;
  }
  Axis s = ctx.size_axis(1);
  r.shape[r.rank() - 2] = s;
  r.shape[r.rank() - 1] = s;
  return r;
}

// --------------------------------------------------------------- forwards

int64_t int_or(ForwardCtx& ctx, size_t i, int64_t dflt) {
  return i && ctx.has(i) ? ctx.integer(i) : dflt;
}

ConvShape conv_shape(ForwardCtx& ctx, const ConvParams& p, bool one) {
  ConvShape cs = ConvShape::square(int_or(ctx, p.stride, 1),
                                   int_or(ctx, p.padding, 0),
                                   int_or(ctx, p.dilation, 1),
                                   int_or(ctx, p.groups, 1));
  if (one) cs.stride[0] = 1, cs.padding[0] = 0, cs.dilation[0] = 1;
  const std::string bad = cs.invalid();
  if (!bad.empty()) fwd::value_error(bad);
  return cs;
}

// y + bias over the channel axis 1 of y [b O ...].
Tensor with_bias(ForwardCtx& ctx, size_t i, Tensor y) {
  if (!ctx.has(i)) return y;
  Tensor b = ctx.tensor(i);
  Shape s(y.rank(), 1);
  s[1] = b.numel();
  return add(y, reshape(b, s));
}

// conv1d is conv2d over a height of 1: x [b C l] -> [b C 1 l].
std::vector<Tensor> conv_fwd(ForwardCtx& ctx) {
  const bool one = std::strcmp(ctx.op_name(), "conv1d") == 0;
  Tensor x = ctx.tensor(0), k = ctx.tensor(1);
  if (one) {
    if (x.rank() != 3 || k.rank() != 3)
      fwd::shape_error("needs x [b C l] and k [O C kl]");
    x = unsqueeze(x, 2);
    k = unsqueeze(k, 2);
  }
  Tensor y = conv2d(x, k, conv_shape(ctx, kConvParams, one));
  if (one) y = squeeze(y, 2);
  return {with_bias(ctx, kConvParams.bias, y)};
}

std::vector<Tensor> conv_transpose_fwd(ForwardCtx& ctx) {
  const ConvParams& p = kTransposeParams;
  const int64_t op = int_or(ctx, p.output_padding, 0);
  const int64_t output_padding[2] = {op, op};
  Tensor y = conv_transpose2d(
      ctx.tensor(0), ctx.tensor(1), conv_shape(ctx, p, false), output_padding);
  return {with_bias(ctx, p.bias, y)};
}

// Note [max_pool2d's gradient at a tie]
// The max of each window as torch's max_pool2d: the whole gradient goes to
// the first maximum of the window in row-major order (argmax's choice),
// where max() over the window axes would split it evenly among tied
// maxima (found by tests/torch/op_table.py's "max_pool2d ties" row). The
// windows are gathered along one axis [.. h2 w2 (k k)], in row-major
// order, and the maximum taken at its argmax.
Tensor window_max(const Tensor& windows) {
  int last = static_cast<int>(windows.rank()) - 1;
  Tensor first = argmax(windows, last, true);
  return squeeze(gather(windows, first, last), last);
}

// The k x k windows of [x]'s last two axes with [stride], padded by
// [padding] of [fill] on each side: [.. h2 w2 (k k)], the window's values
// in row-major order. With stride k and no padding, a reshape; else one
// strided slice per window position.
Tensor windows(
    Tensor x, int64_t k, int64_t stride, int64_t padding, double fill) {
  const int r = static_cast<int>(x.rank());
  if (padding > 0) {
    x = pad(x, r - 2, padding, padding, fill);
    x = pad(x, r - 1, padding, padding, fill);
  }
  const int64_t h = x.shape()[r - 2], w = x.shape()[r - 1];
  if (h < k || w < k)
    fwd::shape_error("a window of " + std::to_string(k) + " does not fit " +
                     std::to_string(h) + " x " + std::to_string(w));
  const int64_t h2 = (h - k) / stride + 1, w2 = (w - k) / stride + 1;
  Shape lead(x.shape().begin(), x.shape().end() - 2);
  if (stride == k) {
    x = slice(slice(x, r - 2, 0, h2 * k), r - 1, 0, w2 * k);
    Shape s = lead;
    s.insert(s.end(), {h2, k, w2, k});
    std::vector<int> perm;
    for (int a = 0; a < r - 2; ++a) perm.push_back(a);
    perm.insert(perm.end(), {r - 2, r, r - 1, r + 1});
    Shape out = lead;
    out.insert(out.end(), {h2, w2, k * k});
    return reshape(permute(reshape(x, s), perm), out);
  }
  std::vector<Tensor> at;
  for (int64_t u = 0; u < k; ++u)
    for (int64_t v = 0; v < k; ++v)
      at.push_back(slice(slice(x, r - 2, u, u + (h2 - 1) * stride + 1, stride),
                         r - 1,
                         v,
                         v + (w2 - 1) * stride + 1,
                         stride));
  return stack(at, r);
}

// max_pool2d pads with -inf, avg_pool2d with zeros that count in the mean
// (torch's count_include_pad=True); torch's rule that padding is at most
// half the window is kept.
std::vector<Tensor> pool_fwd(ForwardCtx& ctx) {
  Tensor x = ctx.tensor(0);
  const int64_t k = ctx.integer(1);
  const int64_t stride = int_or(ctx, 2, k), padding = int_or(ctx, 3, 0);
  if (k <= 0)
    fwd::value_error("the window must be >= 1, not " + std::to_string(k));
  if (stride <= 0)
    fwd::value_error("stride must be >= 1, not " + std::to_string(stride));
  if (padding < 0 || 2 * padding > k)
    fwd::value_error("padding must be between 0 and half the window (" +
                     std::to_string(k / 2) + "), not " +
                     std::to_string(padding));
  if (x.rank() < 2)
    fwd::shape_error("needs [.. h w], not " + shape_string(x.shape()));
  const bool is_max = std::strcmp(ctx.op_name(), "max_pool2d") == 0;
  Tensor win = windows(x, k, stride, padding, is_max ? -INFINITY : 0.0);
  const int last = static_cast<int>(win.rank()) - 1;
  return {is_max ? window_max(win) : mean(win, {last})};
}

// The [n x h] matrix whose row i averages torch's adaptive window i of h:
// [floor(i h / n), ceil((i + 1) h / n)).
Tensor adaptive_weights(int64_t n, int64_t h, const Tensor& like) {
  // A hostile size (2^62) is a ValueError before the matrix is made (Note
  // [Tensors too large to allocate]), where n * h overflowed into
  // std::length_error (issue 32's runtime fuzzer); past this, n * h fits.
  check_allocatable({n, h}, types::DType::F64, "");
  std::vector<double> v(n * h, 0.0);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t lo = i * h / n, hi = ((i + 1) * h + n - 1) / n;
    for (int64_t j = lo; j < hi; ++j) v[i * h + j] = 1.0 / double(hi - lo);
  }
  return Tensor::from_doubles({n, h}, v, like.dtype()).to(like.device());
}

// Each output averages a product of a row window and a column window, so
// the pool is two products, A_h @ x @ A_w^T, differentiable as they are.
std::vector<Tensor> adaptive_pool_fwd(ForwardCtx& ctx) {
  Tensor x = ctx.tensor(0);
  int64_t nh, nw;
  if (ctx.arg_type(1).kind == K::Tuple) {  // (oh, ow)
    std::vector<Tensor> v = ctx.tensors(1);
    if (v.size() != 2) fwd::value_error("the output size is a pair of ints");
    nh = static_cast<int64_t>(v[0].item());
    nw = static_cast<int64_t>(v[1].item());
  } else {
    nh = nw = ctx.size(1);
  }
  for (int64_t n : {nh, nw})
    if (n <= 0)
      fwd::value_error("the output size must be >= 1, not " +
                       std::to_string(n));
  const size_t r = x.rank();
  // torch refuses an empty window axis (each output would average
  // nothing), and the result is checked before the windows are made: an
  // [.. 0 w] input to 2^53 + 1 looped 2^53 times making an empty matrix
  // (issue 32's runtime fuzzer).
  if (x.shape()[r - 2] == 0 || x.shape()[r - 1] == 0)
    fwd::value_error("adaptive_avg_pool2d needs h and w >= 1, but x is " +
                     shape_string(x.shape()));
  Shape out = x.shape();
  out[r - 2] = nh;
  out[r - 1] = nw;
  check_allocatable(out, x.dtype(), "");
  Tensor ah = adaptive_weights(nh, x.shape()[r - 2], x);
  Tensor aw = adaptive_weights(nw, x.shape()[r - 1], x);
  return {matmul_transposed(matmul(ah, x), aw, false, true)};
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

constexpr ParamKind V = ParamKind::Value;

std::vector<ParamSpec> conv_params() {
  return {{"x"},
          {"k"},
          {"stride", V, false},
          {"padding", V, false},
          {"dilation", V, false},
          {"groups", V, false},
          {"bias", V, false}};
}

}  // namespace

std::vector<OpDef> ops_conv() {
  const std::vector<ParamSpec> pool = {
      {"x"}, {"k"}, {"stride", V, false}, {"padding", V, false}};
  return {
      def("conv2d",
          conv_params(),
          conv_rule,
          conv_fwd,
          "2-d convolution: [b C h w] with [O C/groups kh kw]; stride=, "
          "padding=, dilation=, groups=, bias= [O]")
          .with_torch("torch.nn.functional.conv2d(x, k, bias, stride, "
                      "padding, dilation, groups)")
          .with_autocast(Autocast::Lower),
      def("conv1d",
          conv_params(),
          conv_rule,
          conv_fwd,
          "1-d convolution: [b C l] with [O C/groups kl]; options as conv2d")
          .with_torch("torch.nn.functional.conv1d(x, k, bias, stride, "
                      "padding, dilation, groups)")
          .with_autocast(Autocast::Lower),
      def("conv_transpose2d",
          {{"x"},
           {"k"},
           {"stride", V, false},
           {"padding", V, false},
           {"output_padding", V, false},
           {"groups", V, false},
           {"dilation", V, false},
           {"bias", V, false}},
          conv_transpose_rule,
          conv_transpose_fwd,
          "transposed 2-d convolution (conv2d's input gradient): [b Cin h "
          "w] with [Cin Cout/groups kh kw]")
          .with_torch("torch.nn.functional.conv_transpose2d(x, k, bias, "
                      "stride, padding, output_padding, groups, dilation)")
          .with_autocast(Autocast::F32),  // torch 1.13's CPU list
      def("max_pool2d",
          pool,
          pool_rule,
          pool_fwd,
          "max over k x k windows of the last two axes; stride= (k), "
          "padding= (0, with -inf)")
          .with_torch("torch.nn.functional.max_pool2d(x, k, stride, padding)"),
      def("avg_pool2d",
          pool,
          pool_rule,
          pool_fwd,
          "mean over k x k windows of the last two axes; stride= (k), "
          "padding= (0, zeros counted)")
          .with_torch("torch.nn.functional.avg_pool2d(x, k, stride, padding) "
                      "(count_include_pad=True)"),
      def("adaptive_avg_pool2d",
          {{"x"}, {"size"}},
          adaptive_pool_rule,
          adaptive_pool_fwd,
          "mean over torch's adaptive windows: [.. h w] -> [.. size size], "
          "or [.. oh ow] with a pair (oh, ow)")
          .with_torch("torch.nn.functional.adaptive_avg_pool2d(x, size)"),
  };
}

}  // namespace ss::ops
