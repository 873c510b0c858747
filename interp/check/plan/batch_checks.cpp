// The batch axis's checks in fn bodies: E1801 (an operation across it with
// no distributed lowering), E1802 (fixed, grouped, doubled or used as a
// number) and E1901 (a host call given split data).
#include <algorithm>
#include <functional>

#include "interp/check/checker_impl.h"
#include "interp/check/plan/placement_impl.h"

namespace ss::check::placement_detail {

namespace {

using diag::Code;
using SK = ast::Stmt::Kind;
using Placement = FnInfo::Placement;

int param_index(const ops::OpDef& op, const char* name) {
  for (size_t i = 0; i < op.params.size(); ++i)
    if (std::string(op.params[i].name) == name) return static_cast<int>(i);
  return -1;
}

// The first Axis param (size's axis), or -1 (len reads its operand's
// leading axis).
int axis_param(const ops::OpDef& op) {
  for (size_t i = 0; i < op.params.size(); ++i)
    if (op.params[i].kind == ops::ParamKind::Axis) return static_cast<int>(i);
  return -1;
}

const char* kLowered =
    "sum, mean, cross_entropy, mse, batch_norm and reduce(with=sum) are "
    "lowered to an all-reduce";
}  // namespace

void check_batch_bodies(
    Checker& ck,
    const std::vector<FnInfo*>& fns,
    const std::string& N,
    const std::function<bool(const FnInfo*, const ast::Expr&)>& is_split) {
  Program& P = *ck.prog_;
  auto type_of = [&](const ast::Expr* e) -> const Type& {
    return P.type_of(e);
  };

  // ---- E1801, E1802, E1901 in the bodies.
  for (FnInfo* fn : fns) {
    if (fn->is_stdlib || fn->decl->is_extern) continue;
    const Vars& bv = fn->batch_vars;
    const bool controller = fn->placement == Placement::Controller;
    std::set<std::string> tainted;  // locals computed from split data
    auto split_text = [&](const Axis& a) {
      return "`" + axis_name(a) + "` is split across the " + N + " devices";
    };
    // Grouping and doubling are reported where they are introduced: not
    // at a user fn's call, whose body reports it.
    auto S = [&](const ast::Expr* x) { return x && is_split(fn, *x); };
    auto check_layout = [&](const ast::Expr& e) {
      const Type& t = type_of(&e);
      if (!S(&e)) return;
      if (e.kind == EK::Call) {
        const ExprInfo* ci = P.info(&e);
        if (ci && ci->resolution.kind == Resolution::Kind::Fn) return;
      }
      if (e.kind == EK::Call || e.kind == EK::Binary) {
        std::vector<const ast::Expr*> ch = children(e);
        diag::Span at =
            e.kind == EK::Call && e.pattern ? e.pattern->output.span : e.span;
        if (const Axis* g = grouped_batch(t, bv)) {
          bool before = false;
          for (const ast::Expr* c : ch)
            before |= grouped_batch(type_of(c), bv) != nullptr;
          if (!before) {
            std::string grp;
            for (const Axis& a : t.shape)
              if (a.kind == Axis::Kind::Group && axis_find(a, bv))
                grp = a.str();
            ck.error(Code::E1802,
                     at,
                     "the batch axis `" + axis_name(*g) +
                         "` grouped with another axis: " + grp,
                     "grouped here")
                .help("the batch is split across the " + N +
                      " devices by examples: keep `" + axis_name(*g) +
                      "` an axis of its own");
          }
        } else if (batch_count(t, bv) >= 2) {
          bool before = false;
          for (const ast::Expr* c : ch)
            before |= batch_count(type_of(c), bv) >= 2;
          if (!before)
            ck.error(Code::E1802,
                     at,
                     "a value with two batch axes: " + t.str(),
                     "the batch axis twice")
                .help(
                    "each worker holds only its part of the batch, along "
                    "one axis: a value may have the batch axis once");
        }
      }
    };
    auto check_expr_dev = [&](const ast::Expr& e) {
      ExprInfo& in = ck.info_for(&e);
      const Type& t = in.type;
      if (t.is_error()) return;
      if (e.kind == EK::Index && e.lhs) {
        const Type& base = type_of(e.lhs.get());
        if (base.kind == TK::Tensor && S(e.lhs.get()))
          for (size_t i = 0; i < e.indices.size() && i < base.shape.size();
               ++i) {
            const ast::IndexItem& it = e.indices[i];
            if (!axis_is(base.shape[i], bv)) continue;
            if (it.is_slice && !it.lo && !it.hi) continue;
            ck.error(Code::E1801,
                     e.span,
                     std::string(it.is_slice ? "slicing" : "indexing") +
                         " the batch axis `" + axis_name(base.shape[i]) +
                         "` has no distributed lowering",
                     split_text(base.shape[i]))
                .help(
                    "each worker holds only its part of the batch: work "
                    "per example, or index another axis");
            break;
          }
        return;
      }
      if (e.kind == EK::Binary && e.binary_op == ast::BinaryOp::MatMul &&
          e.lhs && e.rhs && t.kind == TK::Tensor) {
        for (const ast::Expr* o : {e.lhs.get(), e.rhs.get()}) {
          const Axis* ax = S(o) ? find_batch(type_of(o), bv) : nullptr;
          if (!ax) continue;
          Vars one{ax->var};
          if (has_batch(t, one)) continue;
          ck.error(Code::E1801,
                   e.span,
                   "`@` contracts the batch axis `" + axis_name(*ax) +
                       "`, which has no distributed lowering",
                   split_text(*ax))
              .help(std::string(kLowered) +
                    "; write the contraction as sum(a * b, over=" +
                    axis_name(*ax) + ")");
          break;
        }
        return;
      }
      if (e.kind != EK::Call) return;
      const Resolution& r = in.resolution;
      std::vector<const ast::Expr*> given = given_args(e);
      if (r.kind == Resolution::Kind::Fn && r.fn) {
        // An extern fn given the batch axis as an Axis[...] argument.
        if (!r.fn->decl->is_extern) return;
        for (size_t g = 0; g < given.size() && g < in.arg_params.size(); ++g) {
          const Type& at = type_of(given[g]);
          if (at.kind != TK::AxisArg || at.shape.empty() ||
              !axis_is(at.shape[0], bv))
            continue;
          ck.error(Code::E1801,
                   e.span,
                   "`" + r.fn->name + "` along the batch axis `" +
                       axis_name(at.shape[0]) + "` has no distributed lowering",
                   split_text(at.shape[0]))
              .help(
                  "an extern fn works on each example by itself, along "
                  "every axis it isn't given as an Axis[...] argument: "
                  "give it another axis");
          break;
        }
        return;
      }
      if (r.kind != Resolution::Kind::Builtin || !r.op) return;
      const ops::OpDef& op = *r.op;
      const std::string n = op.name;
      // einsum: an operand's batch axis missing from the result.
      if (op.intrinsic == ops::Intrinsic::Einsum) {
        for (const ast::Expr* o : given) {
          const Axis* ax = S(o) ? find_batch(type_of(o), bv) : nullptr;
          if (!ax) continue;
          Vars one{ax->var};
          if (has_batch(t, one) || t.is_error()) continue;
          ck.error(Code::E1801,
                   e.span,
                   "einsum contracting the batch axis `" + axis_name(*ax) +
                       "` has no distributed lowering",
                   split_text(*ax))
              .help(std::string(kLowered) +
                    "; keep the batch axis in the output and reduce it "
                    "with sum(..., over=" +
                    axis_name(*ax) + ")");
          break;
        }
        return;
      }
      const ops::DeviceRule& rule = op.device;
      // The size of the batch axis used as a number: size(x, b), len(x).
      if (rule.across == ops::Across::SizeOf) {
        const Axis* ax = nullptr;
        if (given.empty() || !S(given[0])) return;
        if (int axis = axis_param(op); axis >= 0) {
          auto it = in.axis_args.find(axis);
          if (it != in.axis_args.end() && axis_is(it->second, bv))
            ax = &it->second;
        } else {
          const Type& x = type_of(given[0]);
          if ((x.kind == TK::Tensor || x.kind == TK::Batch) &&
              !x.shape.empty() && axis_is(x.shape[0], bv))
            ax = &x.shape[0];
        }
        if (ax)
          ck.error(Code::E1802,
                   e.span,
                   "the size of the batch axis `" + axis_name(*ax) +
                       "` used as a number",
                   "on each worker this would be its part's size")
              .help("the batch is split across the " + N +
                    " devices; use mean(...), which all-reduces a sum and a "
                    "count");
        return;
      }
      // Host calls given split data.
      if (rule.kind == ops::DeviceRule::Kind::Host) {
        if (rule.takes_split) return;
        for (const ast::Expr* g : given) {
          const Type& at = type_of(g);
          const Axis* ax = S(g) ? find_batch(at, bv) : nullptr;
          if (!ax) continue;
          ck.error(Code::E1901,
                   g->span,
                   "`" + n + "` is a host call, but `" + ck.text(g->span) +
                       "` is split across the " + N + " devices",
                   at.str() + ", split along " + axis_name(*ax))
              .help(
                  "compute what you need on the workers (a mean or a sum "
                  "over " +
                  axis_name(*ax) + " is all-reduced) and log it");
          break;
        }
        return;
      }
      if (rule.across == ops::Across::AxisArgs) {
        for (const auto& [k, ax] : in.axis_args)
          if (axis_is(ax, bv)) {
            ck.error(Code::E1801,
                     e.span,
                     n + " with the batch axis `" + axis_name(ax) +
                         "` has no distributed lowering",
                     split_text(ax))
                .help(rule.refused_help ? rule.refused_help : kLowered);
            break;
          }
        return;
      }
      // Across the batch axis: an over= naming it, a reduction of every
      // axis, or an operand with it.
      const bool reduction = rule.across == ops::Across::Reduction;
      const ast::Expr* x = param_arg(e, in, 0);
      const Type xt = S(x) ? type_of(x) : Type::error();
      const Axis* across = nullptr;
      bool all_axes = false;
      int over = param_index(op, "over");
      if (over >= 0) {
        auto it = in.axes.find(over);
        if (it != in.axes.end()) {
          const std::vector<Axis>* shape = nullptr;
          if (xt.kind == TK::Tensor)
            shape = &xt.shape;
          else if (xt.kind == TK::List && !xt.elems.empty())
            shape = &xt.elems[0].shape;
          if (shape)
            for (int pos : it->second)
              if (pos >= 0 && static_cast<size_t>(pos) < shape->size() &&
                  axis_find((*shape)[pos], bv)) {
                across = axis_find((*shape)[pos], bv);
                break;
              }
        } else if (!param_arg(e, in, over) && reduction &&
                   !(rule.elementwise_with &&
                     param_arg(
                         e, in, param_index(op, rule.elementwise_with)))) {
          across = find_batch(xt, bv);
          all_axes = across != nullptr;
        }
      }
      if (rule.across == ops::Across::Operands) {
        for (const ast::Expr* g : given)
          if (const Axis* ax = S(g) ? find_batch(type_of(g), bv) : nullptr) {
            across = ax;
            break;
          }
      }
      if (!across) return;
      const ops::Lowering* low =
          rule.kind == ops::DeviceRule::Kind::Lowered ? rule.lowering : nullptr;
      std::string what = n;
      if (low && low->only_with) {
        // reduce(with=sum) lowers; reduce(with=max) is refused.
        const ast::Expr* w = param_arg(e, in, low->only_param);
        if (w && !(w->kind == EK::Name && w->name == low->only_with)) {
          what = n + "(" + op.params[low->only_param].name + "=" +
                 ck.text(w->span) + ")";
          low = nullptr;
        }
      }
      if (low && low->per_example_with) {
        // A loss with reduction="none": each example's own, split as the
        // batch is; nothing is sent.
        const ast::Expr* r = param_arg(e, in, low->per_example_param);
        if (r && r->kind == ast::Expr::Kind::String &&
            r->name == low->per_example_with)
          return;
      }
      if (low) {
        in.allreduce = true;
        in.allreduce_payload = low->sends;
        return;
      }
      const bool indexing = rule.across == ops::Across::Indexing;
      std::string how =
          all_axes ? " over every axis, the batch axis `" + axis_name(*across) +
                         "` included,"
          : !reduction && !indexing
              ? " along the batch axis `" + axis_name(*across) + "`"
              : " over the batch axis `" + axis_name(*across) + "`";
      auto& d = ck.error(Code::E1801,
                         e.span,
                         what + how + " has no distributed lowering",
                         split_text(*across));
      if (rule.refused_help) {
        // The entry's help may show the call rewritten: {x} is the
        // operand as written, {b} the batch axis.
        std::string h = rule.refused_help;
        const ast::Expr* x = given.empty() ? nullptr : given[0];
        for (auto [key, value] :
             {std::pair<std::string, std::string>{"{b}", axis_name(*across)},
              {"{x}", x ? ck.text(x->span) : "x"}})
          for (size_t at; (at = h.find(key)) != std::string::npos;)
            h.replace(at, key.size(), value);
        d.help(h);
      } else
        d.help(std::string(kLowered) + "; " + what + " is not");
    };
    auto check_one = [&](const ast::Expr& e) {
      size_t before = ck.diags_.size();
      check_expr_dev(e);
      if (ck.diags_.size() == before) check_layout(e);
    };
    // Does [e] read split data (a value with the batch axis, or a local
    // computed from one)?
    std::function<bool(const ast::Expr&)> reads_split =
        [&](const ast::Expr& e) -> bool {
      if (is_split(fn, e)) return true;
      if (e.kind == EK::Name && tainted.count(e.name)) return true;
      if (e.kind == EK::Call && controller) {
        const ExprInfo* in = P.info(&e);
        // A call from the controller gives the workers' whole result.
        if (in && in->resolution.kind == Resolution::Kind::Fn) return false;
      }
      for (const ast::Expr* c : children(e))
        if (reads_split(*c)) return true;
      return false;
    };
    auto check_cond = [&](const ast::Expr& c) {
      size_t before = ck.diags_.size();
      each_expr(c, check_one);
      bool inner = false;
      for (size_t i = before; i < ck.diags_.size(); ++i)
        inner |= ck.diags_.list()[i].code == Code::E1801;
      const Type& t = type_of(&c);
      if (inner || t.kind != TK::Tensor || !reads_split(c)) return;
      ck.error(
            Code::E1801,
            c.span,
            "a condition computed from data split across the " + N + " devices",
            "each worker would read this from its own part of the batch")
          .help(
              "each worker holds only its part of the batch: decide in "
              "the controller, from a value the step logs (there `r.loss` "
              "is a host float)");
    };
    auto taint = [&](const std::vector<ast::NameTarget>& ts,
                     const ast::Expr* v) {
      if (!v || !reads_split(*v)) return;
      for (const ast::NameTarget& t : ts) tainted.insert(t.name);
    };
    std::function<void(const ast::Block&)> walk = [&](const ast::Block& b) {
      for (const ast::StmtPtr& sp : b) {
        if (!sp) continue;
        const ast::Stmt& s = *sp;
        switch (s.kind) {
          case SK::If:
            for (const ast::IfBranch& br : s.branches) {
              if (br.cond) check_cond(*br.cond);
              walk(br.body);
            }
            break;
          case SK::While:
            if (s.cond) check_cond(*s.cond);
            walk(s.body);
            break;
          case SK::For:
            if (s.iter) {
              each_expr(*s.iter, check_one);
              taint(s.targets, s.iter.get());
            }
            walk(s.body);
            break;
          case SK::Let:
            if (s.value) {
              each_expr(*s.value, check_one);
              taint(s.targets, s.value.get());
            }
            break;
          case SK::Assign:
          case SK::AugAssign:
            if (s.value) each_expr(*s.value, check_one);
            if (s.target) each_expr(*s.target, check_one);
            if (s.value && reads_split(*s.value))
              for (const ast::Expr* t : ast::assigned_places(s))
                if (t->kind == EK::Name) tainted.insert(t->name);
            break;
          default:
            if (s.value) each_expr(*s.value, check_one);
            break;
        }
      }
    };
    if (fn->decl->expr_body) each_expr(*fn->decl->expr_body, check_one);
    walk(fn->decl->body);
  }
}

}  // namespace ss::check::placement_detail
