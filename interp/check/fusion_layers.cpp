// Note [Layers run as one product]
// A layer is written as a product and the steps after it:
//
//     relu(x @ m.w1 + m.b1)         gelu(linear(blk.up, x))
//     h + linear(blk.down, y)       (x @ w) / c + b
//
// Run as written, each step after the product is a pass over its whole
// output. This pass, the checker's last with fuse_attention, finds such
// layers in every fn body and records each as one call of the op whose
// entry names them (OpDef::fuses_layer: fused_linear), which runs the
// product with the steps as its epilogue (Note [Products with epilogues]
// in ops/cpu/cpu_epilogue.cpp). The evaluator evaluates the operands in
// the order written and calls the op at the layer's root expression.
//
// A layer, from the inside out:
//   P   x @ w, with w of rank 2 (a weight: rows of x times it),
//       optionally `* c` or `/ c` (c a number); or linear(l, x)
//   B   P + b, with b of the output's last axis [N] exactly
//   A   relu(B) or gelu(B) (approximate= absent or a string literal)
//   R   h + A or A + h, with h of the output's shape exactly
// and the root is the outermost of these around a product that is more
// than the product alone (`x @ w` alone stays matmul). Every tensor is of
// one dtype, f32 or f64 (no promotion, no halves: fused_linear would round
// a half layer once where the ops written out round each step). Not fused,
// and run as written (the same values up to rounding): inside an autocast
// instance (torch 1.13's autocast rounds each op's output), under `split
// H` (the product and the bias are then parts of their own), anything
// broadcast but the bias, and a `+` whose other side's type differs.
// Operands are expressions, evaluated once each, in the order written, so
// a layer computes what it did; nested layers (`relu(relu(x @ w1) @ w2)`)
// are each fused.

#include <cstdlib>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "interp/check/checked.h"
#include "interp/check/fusion.h"
#include "interp/check/operators.h"
#include "interp/parse/ast_walk.h"
#include "ops/registry/registry.h"

namespace ss::check {

namespace {

using EK = ast::Expr::Kind;
using B = ast::BinaryOp;

/// The layer's ops, resolved from the fused op's entry.
struct Chain {
  const ops::OpDef* fused = nullptr;
  const ops::OpDef* product = nullptr;
  const ops::OpDef* add = nullptr;
  const ops::OpDef* linear = nullptr;
  const ops::OpDef* relu = nullptr;
  const ops::OpDef* gelu = nullptr;
};

std::optional<Chain> find_chain() {
  for (const ops::OpDef* d : ops::all_ops()) {
    if (!d->fuses_layer) continue;
    Chain c{d,
            ops::find_op(d->fuses_layer->product),
            ops::find_op(d->fuses_layer->add),
            ops::find_op(d->fuses_layer->linear),
            ops::find_op(d->fuses_layer->relu),
            ops::find_op(d->fuses_layer->gelu)};
    if (c.product && c.add && c.linear && c.relu && c.gelu) return c;
  }
  return std::nullopt;
}

/// A match: the record and the expressions inside it that are not
/// operands (its root included).
struct Match {
  const ast::Expr* root = nullptr;
  FusedLayer layer;
  std::vector<const ast::Expr*> interior;
};

class Matcher {
 public:
  Matcher(const Program& prog, const Chain& chain) : prog_(prog), c_(chain) {}

  std::optional<Match> at(const ast::Expr& root) const {
    const ast::Expr* e = &root;
    // R: h + A or A + h.
    if (is_binary(e, c_.add))
      for (bool first : {true, false}) {
        const ast::Expr* h = first ? e->lhs.get() : e->rhs.get();
        const ast::Expr* a = first ? e->rhs.get() : e->lhs.get();
        Match m;
        if (!same_type(h, e) || !same_type(a, e) || !activation(a, m)) continue;
        m.layer.residual = h;
        m.layer.residual_first = first;
        m.interior.push_back(e);
        return finish(root, std::move(m));
      }
    Match m;
    if (!activation(e, m)) return std::nullopt;
    // A product alone (no bias, scale, act or residual) stays matmul.
    const FusedLayer& l = m.layer;
    if (!l.linear && !l.bias && !l.scale && l.act == "none")
      return std::nullopt;
    return finish(root, std::move(m));
  }

 private:
  const Program& prog_;
  const Chain& c_;

  const ops::OpDef* builtin(const ast::Expr* e) const {
    return builtin_of(prog_, e);
  }
  const ast::Expr* arg(const ast::Expr& call, int k) const {
    return arg_of(prog_, call, k);
  }
  /// An operator spelling [op] (`a + b` for add, `a @ b` for matmul).
  static bool is_binary(const ast::Expr* e, const ops::OpDef* op) {
    return e && e->kind == EK::Binary && &operator_def(e->binary_op) == op;
  }

  /// An f32 or f64 tensor (not inside autocast).
  bool float_tensor(const ast::Expr* e) const {
    const ExprInfo* i = prog_.info(e);
    if (!i || i->autocast) return false;
    const types::Type& t = i->type;
    return t.kind == types::Type::Kind::Tensor &&
           (t.dtype == types::DType::F32 || t.dtype == types::DType::F64);
  }
  bool same_type(const ast::Expr* a, const ast::Expr* b) const {
    if (!float_tensor(a) || !float_tensor(b)) return false;
    const types::Type &ta = prog_.type_of(a), &tb = prog_.type_of(b);
    return ta.dtype == tb.dtype && ta.shape == tb.shape;
  }

  /// A: relu(B), gelu(B) or B.
  bool activation(const ast::Expr* e, Match& m) const {
    const ops::OpDef* op = builtin(e);
    if (op && (op == c_.relu || op == c_.gelu)) {
      if (e->args.empty() || !float_tensor(e)) return false;
      std::string act = op == c_.relu ? "relu" : "gelu";
      if (op == c_.gelu) {
        if (e->args.size() > 2) return false;
        if (const ast::Expr* a = arg(*e, 1)) {
          if (a->kind != EK::String) return false;
          if (a->name == "tanh")
            act = "gelu_tanh";
          else if (a->name != "none")
            return false;
        }
      } else if (e->args.size() != 1) {
        return false;
      }
      const ast::Expr* x = arg(*e, 0);
      if (!x || !same_type(x, e) || !biased(x, m)) return false;
      m.layer.act = act;
      m.interior.push_back(e);
      return true;
    }
    return biased(e, m);
  }

  /// B: P + b, or P.
  bool biased(const ast::Expr* e, Match& m) const {
    if (is_binary(e, c_.add)) {
      const ast::Expr* p = e->lhs.get();
      const ast::Expr* b = e->rhs.get();
      if (!same_type(p, e) || !float_tensor(b)) return false;
      const types::Type& tb = prog_.type_of(b);
      const types::Type& te = prog_.type_of(e);
      if (tb.dtype != te.dtype || te.shape.empty() ||
          tb.shape != std::vector<types::Axis>{te.shape.back()})
        return false;
      if (!product(p, m) || m.layer.linear) return false;  // linear has a b
      m.layer.bias = b;
      m.interior.push_back(e);
      return true;
    }
    return product(e, m);
  }

  /// P: x @ w [* c | / c], or linear(l, x).
  bool product(const ast::Expr* e, Match& m) const {
    if (!float_tensor(e)) return false;
    if (builtin(e) == c_.linear) {
      const ast::Expr* l = arg(*e, 0);
      const ast::Expr* x = arg(*e, 1);
      if (!l || !x || e->args.size() != 2 || !same_dtype(x, e)) return false;
      // The Linear's w and b in the layer's dtype (no promotion).
      const types::Type& lt = prog_.type_of(l);
      if (!lt.model) return false;
      for (const char* f : {"w", "b"}) {
        const types::FieldInfo* fi = lt.model->field(f);
        if (!fi ||
            types::model_field_type(lt, *fi).dtype != prog_.type_of(e).dtype)
          return false;
      }
      m.layer.linear = l;
      m.layer.x = x;
      m.interior.push_back(e);
      return true;
    }
    const ast::Expr* p = e;
    if (e->kind == EK::Binary &&
        (e->binary_op == B::Mul || e->binary_op == B::Div)) {
      const types::Type& c = prog_.type_of(e->rhs.get());
      if (c.kind != types::Type::Kind::Float &&
          c.kind != types::Type::Kind::Int)
        return false;
      if (!same_type(e->lhs.get(), e)) return false;
      m.layer.scale = e->rhs.get();
      m.layer.divides = e->binary_op == B::Div;
      m.interior.push_back(e);
      p = e->lhs.get();
    }
    if (!is_binary(p, c_.product)) return false;
    const ast::Expr* x = p->lhs.get();
    const ast::Expr* w = p->rhs.get();
    if (!float_tensor(x) || !float_tensor(w) || !float_tensor(p)) return false;
    if (!same_dtype(x, p) || !same_dtype(w, p)) return false;
    if (prog_.type_of(w).rank() != 2 || prog_.type_of(x).rank() < 1)
      return false;
    m.layer.x = x;
    m.layer.w = w;
    m.interior.push_back(p);
    return true;
  }

  bool same_dtype(const ast::Expr* a, const ast::Expr* b) const {
    return float_tensor(a) && float_tensor(b) &&
           prog_.type_of(a).dtype == prog_.type_of(b).dtype;
  }

  std::optional<Match> finish(const ast::Expr& root, Match m) const {
    m.root = &root;
    m.layer.op = c_.fused;
    const ExprInfo* ri = prog_.info(&root);
    if (!ri) return std::nullopt;
    m.layer.info = as_call_of(*ri, c_.fused);
    return m;
  }
};

}  // namespace

void fuse_layers(Program& prog) {
  static const std::optional<Chain> chain = find_chain();
  if (!chain || !prog.devices().split_dim.empty()) return;
  // Benchmarks compare a step with and without (docs/trust.md).
  if (const char* v = std::getenv("SHAPESCRIPT_FUSE_LAYERS");
      v && std::string(v) == "0")
    return;
  Matcher matcher(prog, *chain);
  std::vector<Match> found;
  for (const auto& [name, fn] : prog.fns()) {
    if (!fn.decl) continue;
    ast::each_body_expr(*fn.decl, [&](const ast::Expr& e) {
      if (e.kind != EK::Call && e.kind != EK::Binary) return;
      if (auto m = matcher.at(e)) found.push_back(std::move(*m));
    });
  }
  // A match inside another's interior (`x @ w + b` inside `relu(x @ w +
  // b)`) is the larger one's part: the larger one's root runs it.
  std::unordered_set<const ast::Expr*> inside;
  for (const Match& m : found)
    for (const ast::Expr* e : m.interior)
      if (e != m.root) inside.insert(e);
  for (Match& m : found)
    if (!inside.count(m.root))
      prog.fused_layers_.emplace(m.root, std::move(m.layer));
}

}  // namespace ss::check
