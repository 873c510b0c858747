// `ss explain` with `split H` (devices.md items 9 and 10): each value's
// layout and each op's collectives by the plan the ranks run
// (check::plan_heads; Note [Split heads] in heads_plan.cpp). A figure is
// written with the dims' names, then their values put in, as the seed
// does: the attention example's `@ m.w_o` all-reduces 4·D·b·n = 3,072·b·n
// bytes.
#include <algorithm>

#include "interp/check/operators.h"
#include "interp/check/plan/explain_impl.h"
#include "interp/check/plan/heads_plan.h"
#include "ops/core/batch_split.h"

namespace ss::check::comms::detail {

namespace {

using TK = types::Type::Kind;
using AK = types::Axis::Kind;

// A tensor type's values: the number (dims' values put in) and the
// product as written with the dims' names (`D·b·n`), after [coef].
struct Count {
  int64_t coef = 1;
  std::vector<std::string> dims, vars;
  Size size() const {
    Size s;
    std::vector<std::string> key = vars;
    std::sort(key.begin(), key.end());
    s.terms[key] = coef;
    return s;
  }
};

void add_axis(const types::Axis& a, Count& c, Count& named) {
  if (a.kind == AK::Group) {
    for (const types::Axis& i : a.items) add_axis(i, c, named);
  } else if (a.kind == AK::Var) {
    c.vars.push_back(a.label.empty() ? a.name : a.label);
    named.vars.push_back(c.vars.back());
  } else if (a.kind == AK::Dim && a.size >= 0) {
    c.coef *= a.size;
    named.dims.push_back(a.label.empty() ? a.name : a.label);
  } else if (a.size >= 0) {
    c.coef *= a.size;
    named.coef *= a.size;
  }
}

// `4·D·b·n = 3,072·b·n bytes`: the values of [ts], summed, in bytes.
std::string figure(const std::vector<types::Type>& ts, Size& bytes) {
  // Equal terms once, with their count: `3 × 4·H·Dh·b·n` for q, k, v.
  std::vector<std::pair<std::string, int>> terms;
  bytes = Size{};
  for (const types::Type& t : ts) {
    Count c, named;
    for (const types::Axis& a : t.shape) add_axis(a, c, named);
    const int64_t w = types::dtype_size(t.dtype);
    bytes += c.size() * w;
    std::string s = std::to_string(w * named.coef);
    for (const std::string& d : named.dims) s += "·" + d;
    for (const std::string& v : named.vars) s += "·" + v;
    auto same = std::find_if(
        terms.begin(), terms.end(), [&](auto& x) { return x.first == s; });
    if (same == terms.end())
      terms.push_back({s, 1});
    else
      ++same->second;
  }
  std::string sym;
  bool named_any = false;
  for (const auto& [s, k] : terms) {
    sym += (sym.empty() ? "" : " + ") +
           (k > 1 ? std::to_string(k) + " × " : "") + s;
    named_any |= k > 1 || s.find("·") != std::string::npos;
  }
  // A number alone (a 0-d sum) is its bytes.
  return named_any ? sym + " = " + bytes_text(bytes) : bytes_text(bytes);
}

Collective item(const std::string& op,
                const std::string& text,
                const std::vector<types::Type>& ts,
                bool backward) {
  Collective c;
  c.op = op;
  c.source = "split H";
  c.dtype = ts.empty() ? "f32" : types::dtype_name(ts[0].dtype);
  const std::string f = figure(ts, c.bytes);
  c.count = c.bytes;  // bytes; the values are in the text
  c.what = text;
  c.backward = backward;
  c.text = (backward ? "in the backward pass: " : "") + op + " of " + text +
           ": " + f;
  return c;
}

// The whole types of [ts]' split items.
std::vector<types::Type> split_items(const types::Type& t,
                                     const std::string& dim) {
  std::vector<types::Type> out;
  if (t.kind == TK::Tuple) {
    for (const types::Type& e : t.elems)
      if (heads_axis(e, dim) >= 0) out.push_back(e);
  } else if (heads_axis(t, dim) >= 0) {
    out.push_back(t);
  }
  return out;
}

// [a] with [dim] in it as one of [n] blocks: `(H/3)`, what a device holds.
types::Axis local_axis(const types::Axis& a, const std::string& dim, size_t n) {
  if (a.kind == AK::Dim && a.name == dim)
    return types::Axis::dim("(" + dim + "/" + std::to_string(n) + ")",
                            a.size < 0 ? -1 : a.size / int64_t(n));
  types::Axis out = a;
  for (types::Axis& i : out.items) i = local_axis(i, dim, n);
  return out;
}

// The collectives of one op typed [site] by its plan, on [n] devices.
std::vector<Collective> site_sends(const HeadsSite& site,
                                   const std::string& dim,
                                   size_t n) {
  std::vector<Collective> out;
  const HeadsStep step = plan_heads(site, dim);
  if (step == HeadsStep::Local || step == HeadsStep::Partial) {
    // A whole operand beside split ones is tied (Megatron's f).
    std::vector<types::Type> tied;
    for (const types::Type& t : site.operands)
      if (heads_axis(t, dim) < 0 && types::is_float(t.dtype)) tied.push_back(t);
    if (!tied.empty())
      out.push_back(item("all-reduce",
                         "the cotangent of each whole operand, which each "
                         "device computes from its own heads",
                         tied,
                         true));
  }
  switch (step) {
    case HeadsStep::None:
    case HeadsStep::Local:
      break;
    case HeadsStep::Cut:
      out.push_back(item("all-reduce",
                         "the cotangent of the heads each device cut from "
                         "the whole value, which adds up every device's "
                         "heads",
                         split_items(site.result, dim),
                         true));
      break;
    case HeadsStep::Partial:
      out.push_back(item("all-reduce",
                         "each device's partial sum over its heads of " + dim +
                             ", which adds up every device's heads",
                         {site.result},
                         false));
      break;
    case HeadsStep::Gather: {
      // Each device hands the gather its own heads.
      std::vector<types::Type> split;
      for (const types::Type& t : site.operands)
        if (const int a = heads_axis(t, dim); a >= 0) {
          split.push_back(t);
          split.back().shape[a] = local_axis(t.shape[a], dim, n);
        }
      if (!split.empty())
        out.push_back(item("all-gather",
                           "every device's heads of the operands, for an op "
                           "that runs whole, each device handing its own",
                           split,
                           false));
      std::vector<types::Type> cut = split_items(site.result, dim);
      if (!cut.empty())
        out.push_back(item("all-reduce",
                           "the cotangent of the heads each device cut from "
                           "the whole result, which adds up every device's "
                           "heads",
                           cut,
                           true));
      break;
    }
  }
  return out;
}

}  // namespace

HeadsVars call_heads_vars(const Program& P,
                          const FnInfo& callee,
                          const std::vector<const ast::Expr*>& args,
                          const HeadsVars& caller,
                          const std::string& dim) {
  HeadsVars out;
  for (size_t k = 0; k < callee.params.size() && k < args.size(); ++k)
    if (args[k])
      bind_heads_vars(callee.params[k].type,
                      put_heads_vars(P.type_of(args[k]), caller),
                      dim,
                      out);
  return out;
}

std::string heads_vars_key(const HeadsVars& vars) {
  std::string key;
  for (const auto& [var, axis] : vars)
    key += "|" + std::to_string(var) + "=" + axis.str();
  return key;
}

std::vector<Collective> heads_sends(const Program& P,
                                    const ast::Expr& e,
                                    const std::string& dim,
                                    const HeadsVars& vars,
                                    size_t n) {
  // Each type as the op runs it: Note [Size variables carry the split].
  auto type_of = [&](const ast::Expr* x) {
    return put_heads_vars(P.type_of(x), vars);
  };
  HeadsSite site;
  site.result = type_of(&e);
  if (e.kind == ast::Expr::Kind::Binary) {
    site.rule = operator_def(e.binary_op).device.heads;
    for (const ast::Expr* x : {e.lhs.get(), e.rhs.get()})
      if (x && P.type_of(x).kind == TK::Tensor)
        site.operands.push_back(type_of(x));
  } else if (e.kind == ast::Expr::Kind::Call) {
    const ExprInfo* info = P.info(&e);
    if (!info || info->resolution.kind != Resolution::Kind::Builtin ||
        !info->resolution.op)
      return {};
    const ops::OpDef& op = *info->resolution.op;
    if (op.device.heads_parts) {
      // Note [An op in parts under split H]: each part's collectives.
      std::vector<types::Type> args;
      for (size_t k = 0; k < op.params.size(); ++k) {
        const ast::Expr* a = param_arg(e, *info, static_cast<int>(k));
        args.push_back(a ? type_of(a) : types::Type{});
      }
      std::vector<Collective> out;
      for (ops::HeadsPart& part : op.device.heads_parts(args, site.result)) {
        HeadsSite ps;
        ps.rule = part.rule;
        ps.operands = std::move(part.operands);
        ps.result = std::move(part.result);
        ps.over = std::move(part.over);
        for (Collective& c : site_sends(ps, dim, n))
          out.push_back(std::move(c));
      }
      return out;
    }
    site.rule = op.device.heads;
    bool over_given = false, reads_model = false;
    for (size_t k = 0; k < op.params.size(); ++k)
      if ((op.params[k].kind == ops::ParamKind::Axes ||
           op.params[k].kind == ops::ParamKind::Axis) &&
          param_arg(e, *info, static_cast<int>(k)))
        over_given = true;
    for (const ast::Expr* a : given_args(e)) {
      const types::Type t = type_of(a);
      if (t.kind == TK::Tensor) site.operands.push_back(t);
      reads_model |= t.kind == TK::Model && op.forward;
    }
    if (reads_model) site.rule = ops::DeviceRule::Heads::Gathers;
    for (const auto& [param, axes] : info->axes)
      site.over.insert(site.over.end(), axes.begin(), axes.end());
    site.reduces_all =
        !over_given && op.device.across == ops::Across::Reduction;
  } else {
    return {};
  }
  return site_sends(site, dim, n);
}

namespace {

// Each tensor of model type [m]: its path and type.
void leaves(const types::Type& m,
            const std::string& prefix,
            std::vector<std::pair<std::string, types::Type>>& out,
            int depth = 0) {
  if (!m.model || depth > 32) return;
  for (const types::FieldInfo& f : m.model->fields) {
    types::Type ft = types::model_field_type(m, f);
    if (ft.kind == TK::Tensor)
      out.push_back({prefix + f.name, ft});
    else if (ft.kind == TK::Model)
      leaves(ft, prefix + f.name + ".", out, depth + 1);
  }
}

}  // namespace

std::string heads_model_layout(const types::Type& m,
                               const std::string& dim,
                               int64_t size,
                               size_t n,
                               bool shard,
                               std::optional<int64_t>& bytes_out) {
  std::vector<std::pair<std::string, types::Type>> ls;
  leaves(m, "", ls);
  std::vector<std::string> split;
  int64_t bytes = 0;
  bool open = false;  // sizes the model's type leaves open (`Linear[i j]`)
  for (const auto& [path, t] : ls) {
    Count c, named;
    for (const types::Axis& a : t.shape) add_axis(a, c, named);
    open |= !c.vars.empty();
    const bool by_heads = heads_axis(t, dim) >= 0;
    if (by_heads) split.push_back("`" + path + "`");
    if (open) continue;
    const int64_t all = c.coef * types::dtype_size(t.dtype);
    if (by_heads) {
      bytes += all / static_cast<int64_t>(n);
    } else if (shard) {
      bytes += ops::shard_piece_numel(c.coef, static_cast<int>(n)) *
               types::dtype_size(t.dtype);
    } else {
      bytes += all;
    }
  }
  if (split.empty()) return "";
  if (!open) bytes_out = bytes;
  std::string names;
  for (size_t i = 0; i < split.size(); ++i)
    names += (i == 0 ? "" : i + 1 == split.size() ? " and " : ", ") + split[i];
  return "split along " + dim + ": each device holds " +
         std::to_string(size / static_cast<int64_t>(n)) + " of " + dim + " = " +
         std::to_string(size) + " heads of " + names +
         (shard ? ", and a piece of every other param"
                : ", and a copy of the others") +
         (open ? "" : ": " + bytes_text(Size::constant(bytes)) + " each");
}

std::string heads_layout(const types::Type& t,
                         const std::string& dim,
                         int64_t size,
                         size_t n) {
  if (heads_axis(t, dim) < 0) return "";
  return "split along " + dim + ": each device holds " +
         std::to_string(size / static_cast<int64_t>(n)) + " of " + dim + " = " +
         std::to_string(size);
}

}  // namespace ss::check::comms::detail
