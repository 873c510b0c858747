// Axes ops: concat stack take put roll pad reshape to size, and the
// pattern ops rearrange/split (typed by the checker; split's rule here is
// its Dataset overload, ds.split(0.9)).

#include <cmath>
#include <cstdio>
#include <unordered_set>

#include "ops/defs/forward_util.h"
#include "ops/registry/op_def.h"
#include "ops/registry/rule_helpers.h"

namespace ss::ops {
namespace {

using K = Type::Kind;
using diag::Code;

/// The tensors of a List or Tuple argument (a list literal gives its items,
/// counted; another List its one element type, [count] nullopt).
bool seq_elems(RuleCtx& ctx,
               size_t i,
               std::vector<Type>& out,
               std::optional<size_t>& count) {
  const Type& xs = ctx.type(i);
  if (xs.is_error()) return false;
  if (xs.kind == K::Tuple) {
    out = xs.elems;
    count = xs.elems.size();
  } else if (xs.kind == K::List && !xs.elems.empty()) {
    // A list literal's items share one type and their count is written:
    // `concat([x, y], over=B)` of two [A 4] is [A 8] (library.md: a
    // literal size when every size is static). Another list's length is
    // known at run time only.
    std::optional<std::vector<int64_t>> lit = ctx.list_shape(i);
    if (lit && !lit->empty() && (*lit)[0] > 0) {
      out.assign(static_cast<size_t>((*lit)[0]), xs.elems[0]);
      count = static_cast<size_t>((*lit)[0]);
    } else {
      out = {xs.elems[0]};
      count = std::nullopt;
    }
  } else {
    ctx.error(Code::E0303,
              ctx.span(i),
              std::string(ctx.op_name()) +
                  " needs a list or tuple of tensors, but " + ctx.text(i) +
                  " is " + xs.str(),
              describe(ctx, i));
    return false;
  }
  for (const Type& t : out) {
    if (t.is_error()) return false;
    if (!t.is_tensor()) {
      ctx.error(Code::E0303,
                ctx.span(i),
                std::string(ctx.op_name()) + " needs tensors, but " +
                    ctx.text(i) + " holds " + t.str(),
                describe(ctx, i));
      return false;
    }
  }
  if (out.empty()) {
    ctx.error(Code::E0303,
              ctx.span(i),
              std::string(ctx.op_name()) + " needs at least one tensor",
              describe(ctx, i));
    return false;
  }
  return true;
}

Type concat_rule(RuleCtx& ctx) {
  std::vector<Type> xs;
  std::optional<size_t> count;
  if (!seq_elems(ctx, 0, xs, count)) return Type::error();
  auto pos = over_one(ctx, 1, xs[0].shape);
  if (!pos) return Type::error();
  Type r = xs[0];
  int64_t total = 0;
  bool all_static = count.has_value();
  for (const Type& t : xs) {
    Axes a = remove_axes(r.shape, {*pos});
    Axes b = t.rank() == r.rank() ? remove_axes(t.shape, {*pos}) : t.shape;
    if (t.rank() != r.rank() || a != b) {
      ctx.error(Code::E0303,
                ctx.span(0),
                "concat needs tensors equal except along " +
                    r.shape[*pos].str() + ", but has " + xs[0].str() + " and " +
                    t.str(),
                describe(ctx, 0));
      return Type::error();
    }
    auto s = t.shape[*pos].static_size();
    if (!s)
      all_static = false;
    else
      total += *s;
    r.dtype = types::promote(r.dtype, t.dtype);
    r.varying.insert(r.varying.end(), t.varying.begin(), t.varying.end());
  }
  normalize_names(r.varying);
  // With as=, the checker names the new size variable as written.
  if (all_static)
    r.shape[*pos] = Axis::lit(total);
  else
    r.shape[*pos] = ctx.fresh(ctx.has(2) ? ctx.text(2) : "m");
  return r;
}

Type stack_rule(RuleCtx& ctx) {
  std::vector<Type> xs;
  std::optional<size_t> count;
  if (!seq_elems(ctx, 0, xs, count)) return Type::error();
  Type r = xs[0];
  for (const Type& t : xs) {
    if (t.shape != r.shape) {
      ctx.error(Code::E0303,
                ctx.span(0),
                "stack needs tensors of one shape, but has " + xs[0].str() +
                    " and " + t.str(),
                describe(ctx, 0));
      return Type::error();
    }
    r.dtype = types::promote(r.dtype, t.dtype);
    r.varying.insert(r.varying.end(), t.varying.begin(), t.varying.end());
  }
  normalize_names(r.varying);
  Axis n;
  if (ctx.has(1)) {
    auto a = ctx.axis(1);
    if (!a) return Type::error();
    n = *a;
    if (count && n.static_size() && *n.static_size() != (int64_t)*count) {
      ctx.error(Code::E0303,
                ctx.span(1),
                "stack's new axis " + n.str_sized() + " does not fit " +
                    std::to_string(*count) + " tensors",
                describe(ctx, 0));
      return Type::error();
    }
  } else if (count) {
    n = Axis::lit((int64_t)*count);
  } else {
    n = ctx.fresh("n");
  }
  r.shape.insert(r.shape.begin(), n);
  return r;
}

/// An index argument: a host int, a 0-d int tensor, or an int tensor.
bool check_index(RuleCtx& ctx, size_t i) {
  const Type& t = ctx.type(i);
  if (t.kind == K::Int) return true;
  if (t.is_tensor() && types::is_int(t.dtype)) return true;
  ctx.error(t.is_tensor() ? Code::E0304 : Code::E0303,
            ctx.span(i),
            std::string(ctx.op_name()) + " needs an int index, but " +
                ctx.text(i) + " is " + t.str(),
            describe(ctx, i));
  return false;
}

bool need_over(RuleCtx& ctx, size_t i) {
  if (ctx.has(i)) return true;
  ctx.error(Code::E0305,
            ctx.call_span(),
            std::string(ctx.op_name()) + " on a tensor needs over=",
            describe(ctx, 0));
  return false;
}

/// x's shape with the axis at [pos] taken by index type [idx].
Axes indexed_shape(const Axes& x, size_t pos, const Type& idx) {
  Axes out(x.begin(), x.begin() + pos);
  if (idx.is_tensor())
    out.insert(out.end(), idx.shape.begin(), idx.shape.end());
  out.insert(out.end(), x.begin() + pos + 1, x.end());
  return out;
}

Type take_rule(RuleCtx& ctx) {
  const Type& x = ctx.type(0);
  const Type& i = ctx.type(1);
  if (any_error({&x, &i})) return Type::error();
  if (x.kind == K::Dataset) {  // ds.take(n)
    if (i.kind != K::Int) {
      ctx.error(Code::E0303,
                ctx.span(1),
                "take of a dataset needs a count, an int, but " + ctx.text(1) +
                    " is " + i.str(),
                describe(ctx, 1));
      return Type::error();
    }
    return x;
  }
  if (!require_tensor(ctx, 0) || !check_index(ctx, 1) || !need_over(ctx, 2))
    return Type::error();
  auto pos = over_one(ctx, 2, x.shape);
  if (!pos) return Type::error();
  Type r = x;
  r.shape = indexed_shape(x.shape, *pos, i);
  r.varying = union_varying({&x, &i});
  return r;
}

Type put_rule(RuleCtx& ctx) {
  const Type& x = ctx.type(0);
  const Type& i = ctx.type(1);
  const Type& v = ctx.type(2);
  if (any_error({&x, &i, &v})) return Type::error();
  if (!require_tensor(ctx, 0) || !check_index(ctx, 1) ||
      !require_tensor(ctx, 2, true) || !need_over(ctx, 3))
    return Type::error();
  auto pos = over_one(ctx, 3, x.shape);
  if (!pos) return Type::error();
  Axes slice = indexed_shape(x.shape, *pos, i);
  Axes vs = v.is_tensor() ? v.shape : Axes{};
  auto b = broadcast_shapes(slice, vs);
  if (!b || *b != slice) {
    ctx.error(Code::E0303,
              ctx.span(2),
              "put needs a value that fits the slice " +
                  types::shape_str(slice) + ", but " + ctx.text(2) + " is " +
                  v.str(),
              describe(ctx, 0) + ", " + describe(ctx, 2));
    return Type::error();
  }
  Type r = x;
  r.varying = union_varying({&x, &i, &v});
  return r;
}

Type roll_rule(RuleCtx& ctx) {
  const Type& x = ctx.type(0);
  const Type& k = ctx.type(1);
  if (any_error({&x, &k})) return Type::error();
  if (!require_tensor(ctx, 0) || !check_index(ctx, 1)) return Type::error();
  if (k.is_tensor() && k.rank() != 0) {
    ctx.error(Code::E0303,
              ctx.span(1),
              "roll's shift must be one int",
              describe(ctx, 1));
    return Type::error();
  }
  if (!over_one(ctx, 2, x.shape)) return Type::error();
  Type r = x;
  r.varying = union_varying({&x, &k});
  return r;
}

Type pad_rule(RuleCtx& ctx) {
  const Type& x = ctx.type(0);
  if (x.is_error() || ctx.type(2).is_error()) return Type::error();
  if (!require_tensor(ctx, 0)) return Type::error();
  auto pos = over_one(ctx, 1, x.shape);
  if (!pos) return Type::error();
  if (ctx.type(2).kind != K::Int) {
    ctx.error(Code::E0303,
              ctx.span(2),
              "pad's to= is a size, an int, but " + ctx.text(2) + " is " +
                  ctx.type(2).str(),
              describe(ctx, 2));
    return Type::error();
  }
  Type r = x;
  auto to = size_arg(ctx, 2);
  auto have = x.shape[*pos].static_size();
  if (to && have && *to->static_size() < *have) {
    ctx.error(Code::E0303,
              ctx.span(2),
              "pad to " + to->str_sized() + " is smaller than " +
                  x.shape[*pos].str_sized(),
              describe(ctx, 0));
    return Type::error();
  }
  r.shape[*pos] = to ? *to : ctx.fresh("n");
  return r;
}

Type reshape_rule(RuleCtx& ctx) {
  const Type& x = ctx.type(0);
  if (x.is_error()) return Type::error();
  if (!require_tensor(ctx, 0)) return Type::error();
  Type t = ctx.type_arg(1);
  if (t.is_error()) return Type::error();
  if (!t.is_tensor()) {
    ctx.error(
        Code::E0303,
        ctx.span(1),
        "reshape needs a list of sizes, but " + ctx.text(1) + " is " + t.str(),
        ctx.text(1));
    return Type::error();
  }
  auto a = static_numel(x.shape);
  auto b = static_numel(t.shape);
  if (a && b && *a != *b) {
    ctx.error(Code::E0303,
              ctx.call_span(),
              "reshape of " + x.str() + " (" + std::to_string(*a) +
                  " values) to " + types::shape_str(t.shape) + " (" +
                  std::to_string(*b) + " values)",
              describe(ctx, 0));
    return Type::error();
  }
  Type r = x;
  r.shape = t.shape;
  return r;
}

Type to_rule(RuleCtx& ctx) {
  const Type& x = ctx.type(0);
  if (x.is_error()) return Type::error();
  if (!require_tensor(ctx, 0, true)) return Type::error();
  Type t = ctx.type_arg(1);
  if (t.is_error()) return Type::error();
  if (!t.is_tensor() || t.rank() != 0) {
    ctx.error(
        Code::E0303,
        ctx.span(1),
        "to needs a dtype (f32 f64 bf16 f16 i32 i64 bool), not " + ctx.text(1),
        ctx.text(1));
    return Type::error();
  }
  Type r = as_tensor(x);
  r.dtype = t.dtype;
  return r;
}

Type size_rule(RuleCtx& ctx) {
  const Type& x = ctx.type(0);
  if (x.is_error()) return Type::error();
  if (!require_tensor(ctx, 0)) return Type::error();
  auto a = ctx.axis(1);
  if (!a) return Type::error();
  for (const Axis& s : x.shape)
    if (same_axis_base(s, *a)) return Type::of(K::Int);
  ctx.error(Code::E0308,
            ctx.span(1),
            "size: " + a->str() + " is not an axis of " + ctx.text(0) + ": " +
                x.str(),
            describe(ctx, 0));
  return Type::error();
}

// split(x, pattern) is typed by the checker (Intrinsic::Split); this rule
// is the other overload: ds.split(0.9) -> (Dataset[R], Dataset[R]).
Type split_rule(RuleCtx& ctx) {
  const Type& x = ctx.type(0);
  if (x.is_error()) return Type::error();
  if (x.kind != K::Dataset) {
    ctx.error(Code::E0303,
              ctx.span(0),
              "split needs a pattern (split(x, b (3 D) -> b D)) or a "
              "Dataset (ds.split(0.9)), but " +
                  ctx.text(0) + " is " + x.str(),
              describe(ctx, 0));
    return Type::error();
  }
  if (!ctx.has(1)) {
    ctx.error(Code::E0305,
              ctx.call_span(),
              "split of a dataset needs the fraction of the first part",
              describe(ctx, 0));
    return Type::error();
  }
  const Type& f = ctx.type(1);
  if (f.is_error()) return Type::error();
  if (f.kind != K::Float) {
    ctx.error(Code::E0303,
              ctx.span(1),
              "split's fraction is a float in (0, 1), but " + ctx.text(1) +
                  " is " + f.str(),
              describe(ctx, 1));
    return Type::error();
  }
  if (auto v = ctx.const_float(1); v && !(*v > 0 && *v < 1)) {
    ctx.error(Code::E0303,
              ctx.span(1),
              "split's fraction must be in (0, 1), not " + ctx.text(1),
              describe(ctx, 1));
    return Type::error();
  }
  return Type::tuple({x, x});
}

// ---------------------------------------------------------------- forwards

std::vector<Tensor> concat_fwd(ForwardCtx& ctx) {
  std::vector<Tensor> xs = ctx.tensors(0);
  if (xs.empty()) fwd::value_error("needs at least one tensor");
  return {concat(xs, fwd::over_one(ctx, 1, xs[0]))};
}

// A new leading axis; new=N must be the number of tensors.
std::vector<Tensor> stack_fwd(ForwardCtx& ctx) {
  std::vector<Tensor> xs = ctx.tensors(0);
  if (xs.empty()) fwd::value_error("needs at least one tensor");
  if (ctx.has(1)) {
    int64_t n = ctx.axis_size(1);
    if (n != static_cast<int64_t>(xs.size()))
      fwd::shape_error("the new axis has size " + std::to_string(n) +
                       " but there are " + std::to_string(xs.size()) +
                       " tensors");
  }
  return {stack(xs, 0)};
}

/// An index tensor's values made non-negative (from the end when negative).
Tensor wrap_index(const Tensor& idx, int64_t n) {
  Tensor i = idx.dtype() == DType::I64 ? idx : cast(idx, DType::I64);
  Tensor zero = scalar_like(0, i);
  return where(lt(i, zero), add(i, scalar_like(double(n), i)), i);
}

// The index param [p] when it is one integer, exactly: a host int as
// itself (ctx.tensor would make it a weak scalar of x's dtype: 2^24 + 1
// of an f32 x is 2^24), a 0-d int tensor by its value (an i64 past 2^53 is
// no double; 2^63 - 1 read as one is 2^63, which no int64 holds: its cast
// was undefined, the runtime fuzzer's take(x, 9223372036854775807)).
int64_t index_value(ForwardCtx& ctx, size_t p, const Tensor& i) {
  if (ctx.arg_type(p).kind == K::Int) return ctx.integer(p);
  const Tensor h = i.to(Device{});
  if (h.dtype() == DType::I64) return h.data<int64_t>()[0];
  if (h.dtype() == DType::I32) return h.data<int32_t>()[0];
  const double v = h.item();
  if (!(std::fabs(v) < 9.2e18)) {
    char b[40];
    std::snprintf(b, sizeof b, "%.17g", v);
    fwd::value_error(std::string("index ") + b + " is out of int64's range");
  }
  return static_cast<int64_t>(v);
}

// take(x, i, over=A): an int (host or 0-d) drops A, an index tensor puts
// its axes there. (ds.take(n) is the evaluator's.)
std::vector<Tensor> take_fwd(ForwardCtx& ctx) {
  Tensor x = ctx.tensor(0);
  int a = fwd::over_one(ctx, 2, x);
  Tensor i = ctx.tensor(1);
  if (i.rank() == 0) return {take_one(x, index_value(ctx, 1, i), a)};
  return {take(x, i, a)};
}

// put(x, i, v, over=A): x with the slice at i set to v. One index: the
// slices before and after, with v between (concat); an index tensor: v
// scattered into x with its written positions zeroed, so the written
// positions take v's gradient.
std::vector<Tensor> put_fwd(ForwardCtx& ctx) {
  Tensor x = ctx.tensor(0);
  int a = fwd::over_one(ctx, 3, x);
  Tensor i = ctx.tensor(1);
  Tensor v = ctx.tensor(2);
  if (v.dtype() != x.dtype()) v = cast(v, x.dtype());
  int64_t n = x.shape()[a];
  if (i.rank() == 0) {
    int64_t k = index_value(ctx, 1, i);
    if (k < -n || k >= n)
      fwd::value_error("index " + std::to_string(k) +
                       " is out of range for an axis of size " +
                       std::to_string(n));
    if (k < 0) k += n;
    Shape s = x.shape();
    s.erase(s.begin() + a);
    Tensor mid = unsqueeze(broadcast_to(v, s), a);
    return {concat({slice(x, a, 0, k), mid, slice(x, a, k + 1, n)}, a)};
  }
  // The slice's shape: x's with axis a replaced by the index's axes.
  Tensor flat = wrap_index(reshape(i, {i.numel()}), n);
  Shape slice_shape(x.shape().begin(), x.shape().begin() + a);
  slice_shape.insert(slice_shape.end(), i.shape().begin(), i.shape().end());
  slice_shape.insert(
      slice_shape.end(), x.shape().begin() + a + 1, x.shape().end());
  Shape merged = x.shape();
  merged[a] = i.numel();
  Tensor vm = reshape(broadcast_to(v, slice_shape), merged);
  // An index given twice (-1 and n - 1 too) is written once, by its last
  // slice, as numpy's x[..., i] = v and torch's index_put_ write: the
  // scatter below adds each slice, which twice gives 2v.
  const std::vector<double> at = flat.to_doubles();
  std::vector<bool> kept(at.size(), false);
  std::unordered_set<double> later;
  for (size_t k = at.size(); k-- > 0;) kept[k] = later.insert(at[k]).second;
  if (later.size() < at.size()) {
    std::vector<double> last;  // the slices kept, in order
    for (size_t k = 0; k < at.size(); ++k)
      if (kept[k]) last.push_back(double(k));
    Tensor keep = Tensor::from_doubles({int64_t(last.size())}, last, DType::I64)
                      .to(x.device());
    flat = take(flat, keep, 0);
    vm = take(vm, keep, a);
    merged[a] = flat.numel();
  }
  // The indices laid along axis a of a tensor shaped like vm (gather's form).
  Shape line(x.rank(), 1);
  line[a] = flat.numel();
  Tensor idx = broadcast_to(reshape(flat, line), merged);
  // Written positions zeroed, then v added there (scatter's form): x + (v
  // - x) would be NaN where x is NaN or infinite.
  Tensor hit =
      gt(scatter_add(zeros_like(x), idx, ones_like(vm), a), scalar_like(0, x));
  Tensor y = scatter_add(where(hit, zeros_like(x), x), idx, vm, a);
  return {y.dtype() == x.dtype() ? y : cast(y, x.dtype())};  // bools add as i64
}

// x shifted cyclically by k along over= (torch.roll): element j moves to
// j + k.
std::vector<Tensor> roll_fwd(ForwardCtx& ctx) {
  Tensor x = ctx.tensor(0);
  int a = fwd::over_one(ctx, 2, x);
  int64_t n = x.shape()[a];
  if (n == 0) return {x};
  int64_t k = ((ctx.integer(1) % n) + n) % n;
  if (k == 0) return {x};
  return {concat({slice(x, a, n - k, n), slice(x, a, 0, n - k)}, a)};
}

// Padded at the end of over= with value= (0) up to size to=.
std::vector<Tensor> pad_fwd(ForwardCtx& ctx) {
  Tensor x = ctx.tensor(0);
  int a = fwd::over_one(ctx, 1, x);
  int64_t to = ctx.size(2);
  int64_t n = x.shape()[a];
  if (to < n)
    fwd::value_error("to=" + std::to_string(to) +
                     " is smaller than the axis (" + std::to_string(n) + ")");
  double value = ctx.has(3) ? ctx.number(3) : 0.0;
  return {pad(x, a, 0, to - n, value)};
}

std::vector<Tensor> reshape_fwd(ForwardCtx& ctx) {
  Tensor x = ctx.tensor(0);
  Shape s = ctx.shape_arg(1);
  if (numel_of(s) != x.numel())
    fwd::shape_error("cannot reshape " + shape_string(x.shape()) + " (" +
                     std::to_string(x.numel()) + " values) to " +
                     shape_string(s) + " (" + std::to_string(numel_of(s)) +
                     " values)");
  return {reshape(x, s)};
}

std::vector<Tensor> to_fwd(ForwardCtx& ctx) {
  return {cast(ctx.tensor(0), ctx.dtype_arg(1))};
}

OpDef def(const char* name,
          std::vector<ParamSpec> params,
          ShapeRule rule,
          const char* summary,
          bool diff = true,
          Forward forward = nullptr) {
  OpDef d{name, std::move(params), rule, summary};
  d.differentiable = diff;
  d.forward = forward;
  return d;
}

// Ops that index or move data along their over= axis: across the batch
// axis they have no lowering (library.md: indexing or slicing it).
OpDef indexing(OpDef d, const char* help) {
  d.device = refused(Across::Indexing, help);
  return d;
}

}  // namespace

std::vector<OpDef> ops_shape() {
  constexpr ParamSpec over{"over", ParamKind::Axes, true};
  constexpr ParamSpec over_opt{"over", ParamKind::Axes, false};
  std::vector<OpDef> v = {
      indexing(def("concat",
                   {{"xs"}, over, {"as", ParamKind::Axes, false}},
                   concat_rule,
                   "joins tensors along over= (as= names the new size)",
                   true,
                   concat_fwd)
                   .with_torch("torch.cat(xs, dim)"),
               "each worker holds only its part of the batch: concat along "
               "another axis, or per example"),
      def("stack",
          {{"xs"}, {"new", ParamKind::Axis, false}},
          stack_rule,
          "stacks equal tensors along a new leading axis (new=N)",
          true,
          stack_fwd)
          .with_torch("torch.stack(xs, 0)"),
      indexing(def("take",
                   {{"x"}, {"i"}, over_opt},
                   take_rule,
                   "x at index i along over= (ds.take(n): the first n items)",
                   true,
                   take_fwd)
                   .with_torch(
                       "x.select(dim, i) of an int; x.index_select(dim, idx) "
                       "of an index tensor; ds.take(n): Subset(ds, range(n))"),
               "each worker holds only its part of the batch: take along "
               "another axis, or per example"),
      indexing(def("put",
                   {{"x"}, {"i"}, {"v"}, over},
                   put_rule,
                   "x with the slice at i along over= set to v",
                   true,
                   put_fwd)
                   .with_torch("torch.select_scatter(x, v, dim, i)"),
               "each worker holds only its part of the batch: put along "
               "another axis, or per example"),
      indexing(def("roll",
                   {{"x"}, {"k"}, over},
                   roll_rule,
                   "x shifted cyclically by k along over=",
                   true,
                   roll_fwd)
                   .with_torch("torch.roll(x, k, dim)"),
               "each worker holds only its part of the batch: roll along "
               "another axis, or per example"),
      indexing(def("pad",
                   {{"x"}, over, {"to"}, {"value", ParamKind::Value, false}},
                   pad_rule,
                   "x padded at the end along over= to size to=",
                   true,
                   pad_fwd)
                   .with_torch("torch.nn.functional.pad(x, (0, to - n)) on the "
                               "last axis (value=)"),
               "each worker holds only its part of the batch: pad along "
               "another axis, or per example"),
      def("reshape",
          {{"x"}, {"sizes", ParamKind::TypeArg}},
          reshape_rule,
          "x with a new shape of the same number of values",
          true,
          reshape_fwd)
          .with_torch("x.reshape(64, D)"),
      def("to",
          {{"x"}, {"dtype", ParamKind::TypeArg}},
          to_rule,
          "x converted to another dtype: to(x, bf16)",
          true,
          to_fwd)
          .with_torch("x.to(torch.bfloat16)"),
      def("size",
          {{"x"}, {"axis", ParamKind::Axis}},
          size_rule,
          "the size of one of x's axes, a host int",
          false)
          .with_torch("x.size(dim)"),
  };
  // size(x, b) of the batch axis: E1802 (a share's size).
  v.back().device.across = Across::SizeOf;
  OpDef re{"rearrange",
           {{"x"}},
           nullptr,
           "rearrange(x, b H n Dh -> b n (H Dh)): einops-style reshaping"};
  re.variadic = true;
  re.intrinsic = Intrinsic::Rearrange;
  re.torch =
      "none in torch: einops.rearrange(x, \"b h n d -> b n (h d)\"), or "
      "permute + reshape";
  re.device.heads = DeviceRule::Heads::PerHead;
  v.push_back(re);
  OpDef sp{"split",
           {{"x"}, {"frac", ParamKind::Value, false}},
           split_rule,
           "split(x, b n (3 D) -> b n D): a k-tuple; ds.split(f): two "
           "datasets"};
  sp.intrinsic = Intrinsic::Split;
  sp.torch =
      "einops.rearrange(x, \"b n (k d) -> k b n d\", k=3).unbind(0); "
      "ds.split(f): Subset(ds, range(k)), Subset(ds, range(k, n)) with k = "
      "round(f n), unshuffled";
  sp.device.heads = DeviceRule::Heads::PerHead;
  v.push_back(sp);
  return v;
}

}  // namespace ss::ops
