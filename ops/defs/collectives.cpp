// Collectives of spmd fns (spmd.md): psum pmean pmax pmin pvary all_gather
// psum_scatter ppermute all_to_all axis_index axis_size. Only legal inside
// an spmd fn (E2002). Varying sets and split lists follow spmd.md's
// "Typing of split axes".

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>

#include "ops/core/op_error.h"
#include "ops/registry/mesh_comm.h"
#include "ops/registry/op_def.h"
#include "ops/registry/rule_helpers.h"

namespace ss::ops {
namespace {

using K = Type::Kind;
using diag::Code;

bool is(const char* a, const char* b) {
  return std::strcmp(a, b) == 0;
}

bool in_spmd(RuleCtx& ctx) {
  if (ctx.in_spmd()) return true;
  ctx.error(Code::E2002,
            ctx.call_span(),
            std::string(ctx.op_name()) +
                " is a collective and may only be used inside an spmd fn");
  return false;
}

/// The mesh axes named by param [i]: `x`, `(x, y)` or `(x y)`; [one]
/// demands exactly one.
std::optional<std::vector<std::string>> mesh_names(RuleCtx& ctx,
                                                   size_t i,
                                                   bool one = false) {
  auto names = ctx.mesh_axes(i);
  if (!names) return std::nullopt;
  if (one && names->size() != 1) {
    ctx.error(
        Code::E2002,
        ctx.span(i),
        std::string(ctx.op_name()) + " needs one mesh axis, not " + ctx.text(i),
        ctx.text(i));
    return std::nullopt;
  }
  return names;
}

/// Applies [f] to every tensor in [t] (tuples and lists recursively).
template <class F>
Type map_tensors(const Type& t, F&& f) {
  if (t.is_tensor()) return f(t);
  if (t.kind == K::Tuple || t.kind == K::List) {
    Type r = t;
    for (Type& e : r.elems) e = map_tensors(e, f);
    return r;
  }
  return t;
}

bool value_arg(RuleCtx& ctx, size_t i) {
  const Type& v = ctx.type(i);
  if (v.is_error()) return false;
  if (v.is_numeric() || v.kind == K::Tuple || v.kind == K::List ||
      v.kind == K::Grads)
    return true;
  require_tensor(ctx, i, true);
  return false;
}

Type reduce_rule(RuleCtx& ctx) {
  if (!in_spmd(ctx) || !value_arg(ctx, 0)) return Type::error();
  auto names = mesh_names(ctx, 1);
  if (!names) return Type::error();
  bool mean = is(ctx.op_name(), "pmean");
  bool add = is(ctx.op_name(), "pvary");
  return map_tensors(ctx.type(0), [&](Type t) {
    for (const std::string& n : *names) {
      if (add) {
        t.varying.push_back(n);
      } else {
        t.varying.erase(std::remove(t.varying.begin(), t.varying.end(), n),
                        t.varying.end());
      }
    }
    normalize_names(t.varying);
    if (mean) t.dtype = float_result(t.dtype);
    return t;
  });
}

bool untiled(RuleCtx& ctx, size_t i) {
  return ctx.has(i) && ctx.const_bool(i) == std::optional<bool>(false);
}

/// Splits [a] further over mesh axis [x] (psum_scatter, all_to_all's
/// split=): E2003 when a static block does not divide; an axis already
/// split over x becomes a fresh size.
std::optional<Axis> split_more(
    RuleCtx& ctx, const Axis& a, const std::string& x, int64_t nx, size_t at) {
  if (std::find(a.split.begin(), a.split.end(), x) != a.split.end())
    return ctx.fresh(a.name.empty() ? "n" : a.name);
  // Note [A split axis is sized as its block]: [b] is the block's size.
  auto b = a.static_size();
  if (b && nx > 0 && *b % nx != 0) {
    ctx.error(Code::E2003,
              ctx.span(at),
              std::string(ctx.op_name()) + " splits " + a.str() +
                  " (a block of " + std::to_string(*b) + ") over " + x +
                  " of size " + std::to_string(nx) + ", which does not divide",
              describe(ctx, 0));
    return std::nullopt;
  }
  Axis r = a;
  r.split.push_back(x, nx);
  return r;
}

/// Joins [a]'s blocks over [x], which must be its split's last entry.
std::optional<Axis> split_less(RuleCtx& ctx,
                               const Axis& a,
                               const std::string& x,
                               size_t at) {
  if (a.split.empty() || a.split.back() != x) {
    ctx.error(Code::E2003,
              ctx.span(at),
              std::string(ctx.op_name()) + " over " + x + " needs " + a.str() +
                  " split over " + x + " last",
              describe(ctx, 0));
    return std::nullopt;
  }
  Axis r = a;
  r.split.pop_back();
  return r;
}

bool tensor_value(RuleCtx& ctx) {
  return in_spmd(ctx) && !ctx.type(0).is_error() && require_tensor(ctx, 0);
}

Type all_gather_rule(RuleCtx& ctx) {
  if (!tensor_value(ctx)) return Type::error();
  auto names = mesh_names(ctx, 1, true);
  if (!names) return Type::error();
  const std::string& x = (*names)[0];
  int64_t nx = *ctx.mesh_axis(x);
  Type r = ctx.type(0);
  if (untiled(ctx, 3)) {
    r.shape.insert(r.shape.begin(), Axis::lit(nx));
    return r;
  }
  if (!ctx.has(2)) {
    ctx.error(Code::E0305,
              ctx.call_span(),
              "all_gather needs over=",
              describe(ctx, 0));
    return Type::error();
  }
  auto pos = over_one(ctx, 2, r.shape);
  if (!pos) return Type::error();
  auto a = split_less(ctx, r.shape[*pos], x, 2);
  if (!a) return Type::error();
  r.shape[*pos] = *a;
  return r;
}

Type psum_scatter_rule(RuleCtx& ctx) {
  if (!tensor_value(ctx)) return Type::error();
  auto names = mesh_names(ctx, 1, true);
  if (!names) return Type::error();
  const std::string& x = (*names)[0];
  int64_t nx = *ctx.mesh_axis(x);
  Type r = ctx.type(0);
  add_varying(r.varying, x);
  if (untiled(ctx, 3)) {
    // The block's size: [N/i] with N = 16 over |i| = 4 is 4.
    auto s = r.rank() ? r.shape[0].static_size() : std::nullopt;
    if (!s || *s != nx) {
      ctx.error(Code::E2003,
                ctx.span(0),
                "psum_scatter with tiled=false needs a leading axis of size " +
                    std::to_string(nx) + " (|" + x + "|), but " + ctx.text(0) +
                    " is " + r.str(),
                describe(ctx, 0));
      return Type::error();
    }
    r.shape.erase(r.shape.begin());
    return r;
  }
  if (!ctx.has(2)) {
    ctx.error(Code::E0305,
              ctx.call_span(),
              "psum_scatter needs over=",
              describe(ctx, 0));
    return Type::error();
  }
  auto pos = over_one(ctx, 2, r.shape);
  if (!pos) return Type::error();
  auto a = split_more(ctx, r.shape[*pos], x, nx, 2);
  if (!a) return Type::error();
  r.shape[*pos] = *a;
  return r;
}

// E2004: a literal perm= names each instance at most once as a source and
// once as a destination (a permutation, as jax.lax.ppermute demands).
bool distinct_ends(RuleCtx& ctx, const std::vector<std::string>& axes) {
  auto pairs = ctx.const_int_pairs(2);
  if (!pairs) return true;                      // known at run time only
  std::map<int64_t, int64_t> from_src, to_dst;  // instance -> the other end
  for (const RuleCtx::IntPair& p : *pairs) {
    auto [s, s_new] = from_src.emplace(p.first, p.second);
    auto [d, d_new] = to_dst.emplace(p.second, p.first);
    if (s_new && d_new) continue;
    const bool dst = !d_new;
    const int64_t inst = dst ? p.second : p.first;
    auto& e = ctx.error(
        Code::E2004,
        p.span,
        dst ? "ppermute's perm sends to instance " + std::to_string(inst) +
                  " twice (from " + std::to_string(d->second) + " and from " +
                  std::to_string(p.first) + ")"
            : "ppermute's perm sends from instance " + std::to_string(inst) +
                  " twice (to " + std::to_string(s->second) + " and to " +
                  std::to_string(p.second) + ")",
        std::to_string(inst) +
            (dst ? " is already a destination" : " is already a source"));
    // Sources 0, 1, ... in order with the first pair's step: a shift.
    // The instance count is capped past the pairs' (a mesh of size 0 or
    // 2^62 is its own error, at the mesh line): only a count equal
    // to theirs suggests one.
    const int64_t cap = static_cast<int64_t>(pairs->size()) + 1;
    int64_t n = 1;
    for (const std::string& a : axes)
      n = std::min(
          cap, n * std::clamp<int64_t>(ctx.mesh_axis(a).value_or(1), 0, cap));
    bool ordered = static_cast<int64_t>(pairs->size()) == n && n > 1;
    for (size_t i = 0; ordered && i < pairs->size(); ++i)
      ordered = (*pairs)[i].first == static_cast<int64_t>(i) &&
                (*pairs)[i].second >= 0 && (*pairs)[i].second < n;
    const int64_t k =
        ordered ? ((*pairs)[0].second - (*pairs)[0].first + n) % n : 0;
    ordered = ordered && k != 0;
    if (ordered) {
      std::string perm;
      for (int64_t i = 0; i < n; ++i)
        perm += (i ? ", (" : "(") + std::to_string(i) + ", " +
                std::to_string((i + k) % n) + ")";
      e.help("a cyclic shift is shift=" + std::to_string(k) + ": perm=[" +
             perm + "]");
    }
    return false;
  }
  return true;
}

Type ppermute_rule(RuleCtx& ctx) {
  if (!in_spmd(ctx) || !value_arg(ctx, 0)) return Type::error();
  auto names = mesh_names(ctx, 1, true);
  if (!names) return Type::error();
  if (ctx.has(2) == ctx.has(3)) {
    ctx.error(Code::E0305,
              ctx.call_span(),
              "ppermute takes one of perm=[(src, dst), ...] and shift=k",
              describe(ctx, 0));
    return Type::error();
  }
  if (ctx.has(2)) {
    const Type& p = ctx.type(2);
    if (p.is_error()) return Type::error();
    bool ok = p.kind == K::List || p.kind == K::Tuple;
    if (ok && p.kind == K::List && !p.elems.empty()) {
      const Type& e = p.elems[0];
      ok = e.is_error() ||
           (e.kind == K::Tuple && e.elems.size() == 2 &&
            e.elems[0].kind == K::Int && e.elems[1].kind == K::Int);
    }
    if (!ok) {
      ctx.error(Code::E0303,
                ctx.span(2),
                "ppermute's perm= is a list of (source, destination) int "
                "pairs, but " +
                    ctx.text(2) + " is " + p.str(),
                describe(ctx, 2));
      return Type::error();
    }
    if (!distinct_ends(ctx, *names)) return Type::error();
  } else {
    if (ctx.type(3).is_error()) return Type::error();
    if (!require_kind(ctx, 3, K::Int, "an int shift")) return Type::error();
  }
  return ctx.type(0);
}

Type all_to_all_rule(RuleCtx& ctx) {
  if (!tensor_value(ctx)) return Type::error();
  auto names = mesh_names(ctx, 1, true);
  if (!names) return Type::error();
  const std::string& x = (*names)[0];
  int64_t nx = *ctx.mesh_axis(x);
  Type r = ctx.type(0);
  auto sp = over_one(ctx, 2, r.shape);
  if (!sp) return Type::error();
  auto cp = over_one(ctx, 3, r.shape);
  if (!cp) return Type::error();
  if (untiled(ctx, 4)) {
    auto s = r.shape[*sp].static_size();
    if (!s || *s != nx) {
      ctx.error(Code::E2003,
                ctx.span(2),
                "all_to_all with tiled=false needs split= of size " +
                    std::to_string(nx) + " (|" + x + "|), but it is " +
                    r.shape[*sp].str_sized(),
                describe(ctx, 0));
      return Type::error();
    }
    // As jax.lax.all_to_all(tiled=False): each piece is one entry of
    // split=, which goes, and the pieces are stacked along a new axis of
    // size |x| at concat='s position counted without split= (ref/'s
    // all_to_all; the same axis: the shape is unchanged).
    if (*sp != *cp) {
      r.shape.erase(r.shape.begin() + *sp);
      r.shape.insert(r.shape.begin() + *cp, Axis::lit(nx));
    }
    return r;
  }
  if (*sp == *cp) return r;  // block size unchanged
  auto a = split_more(ctx, r.shape[*sp], x, nx, 2);
  if (!a) return Type::error();
  auto b = split_less(ctx, r.shape[*cp], x, 3);
  if (!b) return Type::error();
  r.shape[*sp] = *a;
  r.shape[*cp] = *b;
  return r;
}

Type axis_index_rule(RuleCtx& ctx) {
  if (!in_spmd(ctx)) return Type::error();
  auto names = mesh_names(ctx, 0, true);
  if (!names) return Type::error();
  Type r = Type::scalar(DType::I32);
  r.varying = *names;
  return r;
}

Type axis_size_rule(RuleCtx& ctx) {
  if (!in_spmd(ctx)) return Type::error();
  auto names = mesh_names(ctx, 0, true);
  if (!names) return Type::error();
  return Type::of(K::Int);
}

// ---------------------------------------------------------------- forwards
// Each forward names its collective and, beside it, the transpose that is
// its VJP (spmd.md's table; Note [Cotangents of invariant values] in
// ops/registry/mesh_comm.h), and hands both to the instance's mesh.

MeshComm& need_mesh(ForwardCtx& ctx) {
  if (MeshComm* m = ctx.mesh()) return *m;
  throw OpError(OpError::Kind::Value,
                "runs only inside an instance of an spmd fn");
}

// A tensor, or each tensor of a tuple or list (psum of (loss, count)).
std::vector<Tensor> operands(ForwardCtx& ctx) {
  K k = ctx.arg_type(0).kind;
  if (k == K::Tuple || k == K::List) return ctx.tensors(0);
  return {ctx.tensor(0)};
}

std::vector<Tensor> run_each(ForwardCtx& ctx,
                             const MeshOp& op,
                             const MeshOp& transpose) {
  MeshComm& mesh = need_mesh(ctx);
  std::vector<Tensor> out;
  for (const Tensor& x : operands(ctx))
    out.push_back(mesh.collective(op, transpose, x));
  return out;
}

MeshOp op_of(MeshOpKind k, ForwardCtx& ctx, size_t axes_param = 1) {
  MeshOp op;
  op.kind = k;
  op.axes = ctx.mesh_axes(axes_param);
  if (op.axes.empty())
    throw OpError(OpError::Kind::Value, "names no mesh axis");
  return op;
}

MeshOp with_kind(MeshOp op, MeshOpKind k) {
  op.kind = k;
  return op;
}

int over_axis(ForwardCtx& ctx, size_t i) {
  auto a = ctx.axes(i);
  return a && !a->empty() ? (*a)[0] : 0;
}

// psum -> psum, pmean -> pmean, pvary -> the identity, pmax/pmin -> the
// cotangent to the instance that held the extremum.
std::vector<Tensor> reduce_forward(ForwardCtx& ctx) {
  static const std::map<std::string, std::pair<MeshOpKind, MeshOpKind>> kinds{
      {"psum", {MeshOpKind::Sum, MeshOpKind::Sum}},
      {"pmean", {MeshOpKind::Mean, MeshOpKind::Mean}},
      {"pmax", {MeshOpKind::Max, MeshOpKind::SumToExtremum}},
      {"pmin", {MeshOpKind::Min, MeshOpKind::SumToExtremum}},
      {"pvary", {MeshOpKind::Vary, MeshOpKind::Vary}},
  };
  const auto& [fk, tk] = kinds.at(ctx.op_name());
  MeshOp op = op_of(fk, ctx);
  return run_each(ctx, op, with_kind(op, tk));
}

// all_gather <-> psum_scatter, over the same axis, tiled alike.
std::vector<Tensor> gather_scatter_forward(ForwardCtx& ctx) {
  bool gather = is(ctx.op_name(), "all_gather");
  MeshOp op =
      op_of(gather ? MeshOpKind::AllGather : MeshOpKind::PsumScatter, ctx);
  op.tiled = ctx.flag(3, true);
  op.axis = op.tiled ? over_axis(ctx, 2) : 0;
  return run_each(
      ctx,
      op,
      with_kind(op, gather ? MeshOpKind::PsumScatter : MeshOpKind::AllGather));
}

// ppermute -> ppermute with every pair reversed.
std::vector<Tensor> ppermute_forward(ForwardCtx& ctx) {
  MeshOp op = op_of(MeshOpKind::Ppermute, ctx);
  if (ctx.has(2)) {
    for (const Tensor& p : ctx.tensors(2)) {
      std::vector<double> v = p.to_doubles();
      if (v.size() != 2)
        throw OpError(OpError::Kind::Value,
                      "perm= is a list of (source, destination) pairs");
      op.perm.push_back(
          {static_cast<int64_t>(v[0]), static_cast<int64_t>(v[1])});
    }
  } else {
    // shift=k: the cyclic perm i -> i + k.
    const int64_t n = need_mesh(ctx).axis_size(op.axes[0]);
    const int64_t k = ((ctx.integer(3) % n) + n) % n;
    for (int64_t i = 0; i < n; ++i) op.perm.push_back({i, (i + k) % n});
  }
  const int64_t n = need_mesh(ctx).axis_size(op.axes[0]);
  for (const auto& [src, dst] : op.perm)
    if (src < 0 || src >= n || dst < 0 || dst >= n)
      throw OpError(OpError::Kind::Value,
                    "perm= names instance " +
                        std::to_string(src < 0 || src >= n ? src : dst) +
                        ", but " + op.axes[0] + " has " + std::to_string(n));
  MeshOp back = op;
  for (auto& [src, dst] : back.perm) std::swap(src, dst);
  return run_each(ctx, op, back);
}

// all_to_all -> all_to_all with split= and concat= swapped.
std::vector<Tensor> all_to_all_forward(ForwardCtx& ctx) {
  MeshOp op = op_of(MeshOpKind::AllToAll, ctx);
  op.axis = over_axis(ctx, 2);
  op.concat = over_axis(ctx, 3);
  op.tiled = ctx.flag(4, true);
  MeshOp back = op;
  std::swap(back.axis, back.concat);
  return run_each(ctx, op, back);
}

std::vector<Tensor> axis_index_forward(ForwardCtx& ctx) {
  MeshOp op = op_of(MeshOpKind::Vary, ctx, 0);
  return {Tensor::scalar(
      static_cast<double>(need_mesh(ctx).axis_index(op.axes[0])), DType::I32)};
}

std::vector<Tensor> axis_size_forward(ForwardCtx& ctx) {
  MeshOp op = op_of(MeshOpKind::Vary, ctx, 0);
  return {Tensor::scalar(
      static_cast<double>(need_mesh(ctx).axis_size(op.axes[0])), DType::I64)};
}

OpDef def(const char* name,
          std::vector<ParamSpec> params,
          ShapeRule rule,
          const char* summary,
          Forward forward,
          bool diff = true) {
  OpDef d{name, std::move(params), rule, summary};
  d.differentiable = diff;
  d.forward = forward;
  return d;
}

// psum and its kin: the rule sets the result's varying axes (it no longer
// varies over the axes it reduces).
OpDef reducing(OpDef d) {
  d.device.sets_varying = true;
  d.device.collective = true;
  return d;
}

// Every instance along its axes takes part (E2006).
OpDef collective(OpDef d) {
  d.device.collective = true;
  return d;
}

// What it sends, in `ss explain`'s words ("{}": the group's blocks).
OpDef sends(OpDef d, const MeshPayload& p) {
  d.device.mesh_payload = &p;
  return d;
}

constexpr MeshPayload kPsum{"all-reduce", "adds up {}", nullptr, nullptr};
constexpr MeshPayload kPmean{"all-reduce", "averages {}", nullptr, nullptr};
constexpr MeshPayload kPmax{"all-reduce",
                            "takes the largest of {}",
                            "reduce",
                            "to the instance that held the maximum"};
constexpr MeshPayload kPmin{"all-reduce",
                            "takes the smallest of {}",
                            "reduce",
                            "to the instance that held the minimum"};
constexpr MeshPayload kPvary{
    nullptr, nullptr, "all-reduce", "psum, pvary's transpose"};
constexpr MeshPayload kAllGather{"all-gather",
                                 "joins {}",
                                 "reduce-scatter",
                                 "psum_scatter, all_gather's transpose"};
constexpr MeshPayload kPsumScatter{"reduce-scatter",
                                   "adds up {} and hands each its part",
                                   "all-gather",
                                   "all_gather, psum_scatter's transpose"};
constexpr MeshPayload kPpermute{"send/receive",
                                "passes each of {} on to its destination",
                                "send/receive",
                                "ppermute with the inverse perm"};
constexpr MeshPayload kAllToAll{"all-to-all",
                                "cuts each of {} into pieces and exchanges "
                                "them",
                                "all-to-all",
                                "all_to_all with split= and concat= swapped"};

}  // namespace

std::vector<OpDef> ops_collectives() {
  constexpr ParamSpec v{"v"};
  constexpr ParamSpec axes{"axes", ParamKind::Axis};
  constexpr ParamSpec axis{"axis", ParamKind::Axis};
  constexpr ParamSpec over{"over", ParamKind::Axes, false};
  constexpr ParamSpec tiled{"tiled", ParamKind::Value, false};
  constexpr ParamKind V = ParamKind::Value;
  return {
      sends(reducing(def("psum",
                         {v, axes},
                         reduce_rule,
                         "sum over mesh axes; the result no longer varies over "
                         "them",
                         reduce_forward)
                         .with_torch("torch.distributed.all_reduce(v) over the "
                                     "axis's group; JAX: jax.lax.psum")),
            kPsum),
      sends(reducing(def("pmean",
                         {v, axes},
                         reduce_rule,
                         "mean over mesh axes",
                         reduce_forward)
                         .with_torch(
                             "all_reduce(v) / world size; JAX: jax.lax.pmean")),
            kPmean),
      sends(reducing(
                def("pmax",
                    {v, axes},
                    reduce_rule,
                    "maximum over mesh axes",
                    reduce_forward)
                    .with_torch(
                        "all_reduce(v, op=ReduceOp.MAX); JAX: jax.lax.pmax")),
            kPmax),
      sends(reducing(
                def("pmin",
                    {v, axes},
                    reduce_rule,
                    "minimum over mesh axes",
                    reduce_forward)
                    .with_torch(
                        "all_reduce(v, op=ReduceOp.MIN); JAX: jax.lax.pmin")),
            kPmin),
      sends(
          def("pvary",
              {v, axes},
              reduce_rule,
              "marks v as varying over mesh axes (no data moves)",
              reduce_forward)
              .with_torch("none in torch (no data moves); JAX: jax.lax.pvary"),
          kPvary),
      sends(collective(
                def("all_gather",
                    {v, axis, over, tiled},
                    all_gather_rule,
                    "joins the blocks of over= along a mesh axis: A/x -> A",
                    gather_scatter_forward)
                    .with_torch("torch.distributed.all_gather_into_tensor; "
                                "JAX: jax.lax.all_gather")),
            kAllGather),

      sends(
          collective(def("psum_scatter",
                         {v, axis, over, tiled},
                         psum_scatter_rule,
                         "sums over a mesh axis and keeps one block: A -> A/x",
                         gather_scatter_forward)
                         .with_torch("torch.distributed.reduce_scatter_tensor; "
                                     "JAX: jax.lax.psum_scatter")),
          kPsumScatter),

      sends(collective(
                def("ppermute",
                    {v, axis, {"perm", V, false}, {"shift", V, false}},
                    ppermute_rule,
                    "sends blocks along a mesh axis by a permutation",
                    ppermute_forward)
                    .with_torch("torch.distributed send/recv pairs "
                                "(batch_isend_irecv); JAX: jax.lax.ppermute")),
            kPpermute),

      sends(collective(
                def("all_to_all",
                    {v,
                     axis,
                     {"split", ParamKind::Axes},
                     {"concat", ParamKind::Axes},
                     tiled},
                    all_to_all_rule,
                    "block transpose: split= is cut and sent, concat= joined",
                    all_to_all_forward)
                    .with_torch("torch.distributed.all_to_all_single; JAX: "
                                "jax.lax.all_to_all")),
            kAllToAll),

      def("axis_index",
          {axis},
          axis_index_rule,
          "this instance's index along a mesh axis, an i32",
          axis_index_forward,
          false)
          .with_torch(
              "torch.distributed.get_rank(group); JAX: jax.lax.axis_index"),
      def("axis_size",
          {axis},
          axis_size_rule,
          "the size of a mesh axis, a host int",
          axis_size_forward,
          false)
          .with_torch("torch.distributed.get_world_size(group); JAX: "
                      "jax.lax.psum(1, axis)"),
  };
}

}  // namespace ss::ops
