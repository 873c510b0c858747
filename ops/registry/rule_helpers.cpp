#include "ops/registry/rule_helpers.h"

namespace ss::ops {

std::string describe(RuleCtx& ctx, size_t i) {
  return ctx.text(i) + ": " + ctx.type(i).str();
}

std::optional<Type> broadcast(RuleCtx& ctx,
                              const Type& a,
                              const Type& b,
                              diag::Span span_a,
                              diag::Span span_b,
                              std::string_view label,
                              Arith arith) {
  static const Axes kEmpty;
  const Axes& sa = a.is_tensor() ? a.shape : kEmpty;
  const Axes& sb = b.is_tensor() ? b.shape : kEmpty;
  const Axis* x = nullptr;
  const Axis* y = nullptr;
  auto shape = broadcast_shapes(sa, sb, &x, &y);
  if (!shape) {
    std::string l(label);
    if (l.empty()) l = a.str() + " with " + b.str();
    // Note [Two sizes of one name]: `w2 vs w2` said nothing.
    const types::PrintedApart shown(sa, sb);
    diag::Diagnostic& d =
        ctx.error(diag::Code::E0301,
                  diag::Span::cover(span_a, span_b),
                  "cannot broadcast " + shown.a + " with " + shown.b + ": " +
                      shown.axis_a(*x) + " vs " + shown.axis_b(*y),
                  l);
    for (const auto& [text, at] : shown.notes()) d.note(text, at);
    return std::nullopt;
  }
  Type r = result_dtype(a, b, arith);
  if (!r.is_tensor()) return r;
  r.shape = std::move(*shape);
  r.varying = union_varying({&a, &b});
  return r;
}

bool require_float(RuleCtx& ctx, size_t i) {
  const Type& t = ctx.type(i);
  if (!require_tensor(ctx, i)) return false;
  if (types::is_float(t.dtype)) return true;
  ctx.error(diag::Code::E0304,
            ctx.span(i),
            std::string(ctx.op_name()) + " needs a float tensor, but " +
                ctx.text(i) + " is " + t.str(),
            describe(ctx, i));
  return false;
}

bool require_tensor(RuleCtx& ctx, size_t i, bool host_ok) {
  const Type& t = ctx.type(i);
  if (t.is_error()) return false;
  if (t.is_tensor() || (host_ok && t.is_host_number())) return true;
  ctx.error(diag::Code::E0303,
            ctx.span(i),
            std::string(ctx.op_name()) + " needs a tensor, but " + ctx.text(i) +
                " is " + t.str(),
            describe(ctx, i));
  return false;
}

bool require_kind(RuleCtx& ctx, size_t i, Type::Kind k, const char* what) {
  const Type& t = ctx.type(i);
  if (t.is_error()) return false;
  if (t.kind == k) return true;
  ctx.error(diag::Code::E0303,
            ctx.span(i),
            std::string(ctx.op_name()) + " needs " + what + ", but " +
                ctx.text(i) + " is " + t.str(),
            describe(ctx, i));
  return false;
}

bool require_number(RuleCtx& ctx, size_t i, bool zero_d_ok) {
  const Type& t = ctx.type(i);
  if (t.is_error()) return false;
  if (t.is_host_number() || (zero_d_ok && t.is_tensor() && t.rank() == 0))
    return true;
  ctx.error(diag::Code::E0303,
            ctx.span(i),
            std::string(ctx.op_name()) + " needs a number, but " + ctx.text(i) +
                " is " + t.str(),
            describe(ctx, i));
  return false;
}

std::optional<size_t> over_one(RuleCtx& ctx, size_t i, const Axes& shape) {
  auto pos = ctx.over(i, shape);
  if (!pos) return std::nullopt;
  if (pos->size() != 1) {
    ctx.error(diag::Code::E0303,
              ctx.span(i),
              std::string(ctx.op_name()) +
                  " works along one axis, but over= names " +
                  std::to_string(pos->size()),
              "over=" + ctx.text(i));
    return std::nullopt;
  }
  return (*pos)[0];
}

std::optional<Axis> size_arg(RuleCtx& ctx, size_t i) {
  Axis a = ctx.size_axis(i);
  if (a.kind == Axis::Kind::Var) return std::nullopt;
  return a;
}

}  // namespace ss::ops
