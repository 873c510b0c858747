// Note [The attention written out]
// Users write attention as the spec's example does, three lets:
//
//     let s = einsum(q, k, b H n Dh, b H t Dh -> b H n t) / sqrt(Dh)
//     let p = softmax(masked_fill(s, not causal(n, t), -inf), over=t)
//     let o = einsum(p, v, b H n t, b H t Dh -> b H n Dh)
//
// Run as written that is eight passes over b·H·n·t values (the scores,
// scaled, masked, softmax; backward the same) and, under the causal mask,
// every product above the diagonal computed and thrown away. When a fn's
// block holds these three statements in a row, and s and p are read
// nowhere else for the rest of their block (where a let's name lives,
// language.md), this pass records the third statement's product
// as a call of the op whose entry names this chain (OpDef::fuses:
// scaled_dot_product_attention, Note [Fused attention] in
// ops/cpu/cpu_attention.cpp), on q, k and v, causal where the mask is
// `not causal(n, t)` of the product's own n and t, scaled by the number
// written (`/ c`, `* c`, or 1). The evaluator then binds nothing for the
// two lets (nothing reads them) and runs the op where the product is.
//
// What is matched, and why no more: q, k and v are names (so reading them
// at the product reads what the first let read: nothing is assigned
// between consecutive lets); each einsum's labels are single names, the
// leading ones alike in all three sides and at least one (a per-example,
// per-head matrix, so the op's rule on several devices is per example),
// n, t, d and e distinct from them; the mask is absent or exactly `not
// causal(n, t)` with -inf; the scale is a host number built from names,
// literals, operators and builtins that draw nothing and touch no host;
// under `split H` none of n, t, d and e is the split dim.
// Inside an autocast instance it runs as written too (its products round
// to the half dtype one by one, as torch 1.13's autocast does). Anything
// else runs as written, which computes the same values: the
// fused op's are equal up to rounding (tests/torch checks both against
// torch in f64). The matrices' axes are the op's over= under `split H`,
// so a heads axis there is gathered (ops/defs/attention.cpp).
// `ss explain` lists each fused attention (explain.cpp).

#include "interp/check/fusion.h"

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "interp/check/checked.h"
#include "interp/parse/ast_walk.h"
#include "ops/registry/registry.h"

namespace ss::check {

namespace {

using EK = ast::Expr::Kind;
using SK = ast::Stmt::Kind;

/// The chain's ops, resolved from the fused op's entry.
struct Chain {
  const ops::OpDef* fused = nullptr;
  const ops::OpDef* product = nullptr;
  const ops::OpDef* fill = nullptr;
  const ops::OpDef* mask = nullptr;
  const ops::OpDef* normalise = nullptr;
};

std::optional<Chain> find_chain() {
  for (const ops::OpDef* d : ops::all_ops()) {
    if (!d->fuses) continue;
    Chain c{d,
            ops::find_op(d->fuses->product),
            ops::find_op(d->fuses->fill),
            ops::find_op(d->fuses->mask),
            ops::find_op(d->fuses->normalise)};
    if (c.product && c.fill && c.mask && c.normalise) return c;
  }
  return std::nullopt;
}

class Matcher {
 public:
  Matcher(Program& prog, const Chain& chain) : prog_(prog), c_(chain) {}

  void fn(const ast::FnDecl& d) {
    if (!d.expr_body) block(d.body);
  }

  /// Each product with v that finishes a fused attention, and its record.
  std::vector<std::pair<const ast::Expr*, FusedAttention>> found;

 private:
  Program& prog_;
  const Chain& c_;

  const ops::OpDef* builtin(const ast::Expr* e) const {
    return builtin_of(prog_, e);
  }
  const ast::Expr* arg(const ast::Expr& call, int k) const {
    return arg_of(prog_, call, k);
  }

  static bool is_name(const ast::Expr* e) { return e && e->kind == EK::Name; }

  /// A pattern side's labels, if each is a single name.
  static std::optional<std::vector<std::string>> labels(
      const ast::PatternSide& s) {
    std::vector<std::string> out;
    for (const ast::PatternItem& it : s.items) {
      if (it.kind != ast::PatternItem::Kind::Name) return std::nullopt;
      out.push_back(it.name);
    }
    return out;
  }

  /// einsum(x, y, L a c, L b c -> L a b) (scores: a = n, b = t, c = d) or
  /// einsum(x, y, L a c, L c b -> L a b) (the product with v: a = n, c =
  /// t, b = e): L, a, b, c when [e] is such a call on two names.
  struct Product {
    const ast::Expr* x;
    const ast::Expr* y;
    std::vector<std::string> lead;
    std::string a, b, c;
  };
  std::optional<Product> product(const ast::Expr* e, bool scores) const {
    if (builtin(e) != c_.product || !e->pattern || e->args.size() != 2)
      return std::nullopt;
    const ast::Pattern& p = *e->pattern;
    if (p.inputs.size() != 2) return std::nullopt;
    auto l0 = labels(p.inputs[0]), l1 = labels(p.inputs[1]),
         lo = labels(p.output);
    if (!l0 || !l1 || !lo) return std::nullopt;
    const size_t r = l0->size();
    if (r < 3 || l1->size() != r || lo->size() != r) return std::nullopt;
    Product out{e->args[0].value.get(), e->args[1].value.get(), {}, "", "", ""};
    if (!is_name(out.x) || !is_name(out.y)) return std::nullopt;
    for (size_t i = 0; i + 2 < r; ++i) {
      if ((*l1)[i] != (*l0)[i] || (*lo)[i] != (*l0)[i]) return std::nullopt;
      out.lead.push_back((*l0)[i]);
    }
    out.a = (*l0)[r - 2];
    out.c = (*l0)[r - 1];
    const std::string& y0 = (*l1)[r - 2];
    const std::string& y1 = (*l1)[r - 1];
    if (scores) {
      if (y1 != out.c) return std::nullopt;
      out.b = y0;
    } else {
      if (y0 != out.c) return std::nullopt;
      out.b = y1;
    }
    if ((*lo)[r - 2] != out.a || (*lo)[r - 1] != out.b) return std::nullopt;
    std::vector<std::string> all = out.lead;
    all.insert(all.end(), {out.a, out.b, out.c});
    for (size_t i = 0; i < all.size(); ++i)
      for (size_t j = i + 1; j < all.size(); ++j)
        if (all[i] == all[j]) return std::nullopt;
    return out;
  }

  /// A host number that evaluating again reads the same: names, literals,
  /// operators and builtins that draw nothing and touch no host.
  bool pure_number(const ast::Expr* e) const {
    const types::Type& t = prog_.type_of(e);
    if (t.kind != types::Type::Kind::Float && t.kind != types::Type::Kind::Int)
      return false;
    bool ok = true;
    ast::each_expr(*e, [&](const ast::Expr& x) {
      switch (x.kind) {
        case EK::Name:
        case EK::Int:
        case EK::Float:
        case EK::Unary:
        case EK::Binary:
          return;
        case EK::Call: {
          const ops::OpDef* op = builtin(&x);
          if (!op || !op->forward || op->draws_at_site ||
              op->device.kind == ops::DeviceRule::Kind::Host)
            ok = false;
          return;
        }
        default:
          ok = false;
      }
    });
    return ok;
  }

  static const ast::Stmt* single_let(const ast::Stmt& s) {
    return s.kind == SK::Let && s.targets.size() == 1 && s.value ? &s : nullptr;
  }

  void block(const ast::Block& b) {
    for (size_t i = 0; i < b.size(); ++i) {
      for (const ast::IfBranch& br : b[i]->branches) block(br.body);
      block(b[i]->body);
      if (i + 2 < b.size()) at(b, i);
    }
  }

  void at(const ast::Block& b, size_t i) {
    const ast::Stmt& s1 = *b[i];
    const ast::Stmt& s2 = *b[i + 1];
    const ast::Stmt& s3 = *b[i + 2];
    if (!single_let(s1) || !single_let(s2)) return;
    const std::string& sname = s1.targets[0].name;
    const std::string& pname = s2.targets[0].name;
    // let s = einsum(q, k, ..) [/ c | * c]
    FusedAttention f;
    f.op = c_.fused;
    const ast::Expr* scores = s1.value.get();
    if (scores->kind == EK::Binary &&
        (scores->binary_op == ast::BinaryOp::Div ||
         scores->binary_op == ast::BinaryOp::Mul)) {
      if (!pure_number(scores->rhs.get())) return;
      f.scale = scores->rhs.get();
      f.divides = scores->binary_op == ast::BinaryOp::Div;
      scores = scores->lhs.get();
    }
    auto qk = product(scores, true);
    if (!qk) return;
    // let p = softmax(s | masked_fill(s, not causal(n, t), -inf), over=t)
    const ast::Expr* probs = s2.value.get();
    if (builtin(probs) != c_.normalise) return;
    const ast::Expr* x = arg(*probs, 0);
    if (builtin(x) == c_.fill) {
      const ast::Expr* m = arg(*x, 1);
      const ast::Expr* fill = arg(*x, 2);
      if (!m || m->kind != EK::Unary || m->unary_op != ast::UnaryOp::Not)
        return;
      const ast::Expr* cz = m->lhs.get();
      if (builtin(cz) != c_.mask) return;
      const ast::Expr* n = arg(*cz, 0);
      const ast::Expr* t = arg(*cz, 1);
      if (!is_name(n) || !is_name(t) || n->name != qk->a || t->name != qk->b)
        return;
      if (!fill || fill->kind != EK::Unary ||
          fill->unary_op != ast::UnaryOp::Neg || !fill->lhs ||
          fill->lhs->kind != EK::Float || !std::isinf(fill->lhs->float_value) ||
          fill->lhs->float_value < 0)
        return;
      f.causal = true;
      x = arg(*x, 0);
    }
    if (!is_name(x) || x->name != sname) return;
    const ExprInfo* pi = prog_.info(probs);
    const int rank = static_cast<int>(qk->lead.size()) + 2;
    bool over_t = false;
    if (pi)
      for (const auto& [param, axes] : pi->axes)
        over_t = axes == std::vector<int>{rank - 1};
    if (!over_t) return;
    // The product with v, somewhere in the third statement.
    const ast::Expr* pv = nullptr;
    std::optional<Product> po;
    auto look = [&](const ast::Expr& e) {
      if (pv) return;
      auto p = product(&e, false);
      if (p && p->x->name == pname) pv = &e, po = p;
    };
    for (const ast::Expr* e :
         {s3.value.get(), s3.target.get(), s3.cond.get(), s3.iter.get()})
      if (e) ast::each_expr(*e, look);
    if (!pv || po->lead != qk->lead || po->a != qk->a || po->c != qk->b) return;
    // q, k, v are the fn's names (not s or p); s and p are read nowhere
    // but here.
    f.q = qk->x, f.k = qk->y, f.v = po->y;
    for (const ast::Expr* e : {f.q, f.k, f.v})
      if (e->name == sname || e->name == pname) return;
    if (sname == pname) return;
    if (!read_once_each(b, i, sname, pname)) return;
    const std::string& split = prog_.devices().split_dim;
    if (!split.empty())
      for (const std::string& l : {qk->a, qk->b, qk->c, po->b})
        if (l == split) return;
    // Inside autocast the products round to bf16 or f16 as torch 1.13's
    // autocast does op by op (tests/torch/autocast_oracle.py); the fused
    // kernel would round once, so an autocast instance runs as written.
    const ExprInfo* oi = prog_.info(pv);
    const ExprInfo* si = prog_.info(scores);
    if (!oi || !si || oi->autocast || si->autocast) return;
    f.info = as_call_of(*oi, c_.fused);
    f.scores = &s1;
    f.probs = &s2;
    found.emplace_back(pv, std::move(f));
  }

  /// A let's name lives for the rest of its block (language.md): in the
  /// statements after s's let, s is read once (in p's let) and p once (in
  /// the product), and neither is bound again there (a nested let or a
  /// loop's target would make a read another value's; an assignment is a
  /// read here too, so it refuses).
  static bool read_once_each(const ast::Block& b,
                             size_t i,
                             const std::string& s,
                             const std::string& p) {
    int reads_s = 0, reads_p = 0, binds = 0;
    std::function<void(const ast::Stmt&)> walk = [&](const ast::Stmt& st) {
      for (const ast::NameTarget& t : st.targets)
        if (t.name == s || t.name == p) ++binds;
      auto count = [&](const ast::Expr& e) {
        if (e.kind != EK::Name) return;
        reads_s += e.name == s;
        reads_p += e.name == p;
      };
      for (const ast::Expr* e :
           {st.value.get(), st.target.get(), st.cond.get(), st.iter.get()})
        if (e) ast::each_expr(*e, count);
      for (const ast::IfBranch& br : st.branches) {
        if (br.cond) ast::each_expr(*br.cond, count);
        for (const ast::StmtPtr& x : br.body) walk(*x);
      }
      for (const ast::StmtPtr& x : st.body) walk(*x);
    };
    for (size_t k = i + 1; k < b.size(); ++k) walk(*b[k]);
    // p's own let binds p once.
    return reads_s == 1 && reads_p == 1 && binds == 1;
  }
};

}  // namespace

const ops::OpDef* builtin_of(const Program& prog, const ast::Expr* e) {
  if (!e || e->kind != EK::Call) return nullptr;
  const ExprInfo* i = prog.info(e);
  return i && i->resolution.kind == Resolution::Kind::Builtin ? i->resolution.op
                                                              : nullptr;
}

const ast::Expr* arg_of(const Program& prog, const ast::Expr& call, int k) {
  const ExprInfo* i = prog.info(&call);
  if (!i) return nullptr;
  for (size_t g = 0; g < call.args.size() && g < i->arg_params.size(); ++g)
    if (i->arg_params[g] == k) return call.args[g].value.get();
  return nullptr;
}

ExprInfo as_call_of(const ExprInfo& root, const ops::OpDef* op) {
  ExprInfo info = root;
  info.resolution = Resolution{};
  info.resolution.kind = Resolution::Kind::Builtin;
  info.resolution.op = op;
  info.arg_params.clear();
  info.axes.clear();
  info.pattern_labels.clear();
  return info;
}

void fuse_attention(Program& prog) {
  static const std::optional<Chain> chain = find_chain();
  if (!chain) return;
  Matcher m(prog, *chain);
  for (const auto& [name, fn] : prog.fns())
    if (fn.decl) m.fn(*fn.decl);
  for (auto& [call, f] : m.found) {
    prog.deferred_.insert(f.scores);
    prog.deferred_.insert(f.probs);
    prog.fused_.emplace(call, std::move(f));
  }
}

}  // namespace ss::check
