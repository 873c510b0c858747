// Note [Words side by side]
// Most of a `.ss` line is spaced by its tokens alone (format.cpp's
// spacing): `a + b`, `f(x)`, `x[0]`. But types, patterns and a few
// declaration lines write words side by side, and there the space is the
// separator: `[b D]` is two axes, `b H n Dh -> b n (H Dh)` four labels, then
// three, `devices cuda[0 1 2]` three ids, `mesh x=4 y=2` two axes. Whether
// a space may be added or taken away there depends on the words, so the
// formatter asks the parser where those regions are, and inside one keeps
// a space where the author wrote whitespace and none where they wrote none,
// except around the tokens that can never run together (`,` `->` `/` and
// the brackets). The region of a token is the outermost such span holding
// it.
#include "interp/fmt/roles.h"

#include <algorithm>

#include "interp/parse/ast_walk.h"

namespace ss::fmt {

namespace {

using ast::Expr;
using ast::TypeExpr;

class Collector {
 public:
  explicit Collector(const lex::Tokens& tokens) : tokens_(tokens) {}

  void region(diag::Span s) { spans_.push_back(s); }
  void type(const std::optional<TypeExpr>& t) {
    if (t) region(t->span);
  }

  void expr(const Expr* e) {
    if (!e) return;
    ast::each_expr(*e, [&](const Expr& x) {
      if (x.kind == Expr::Kind::TypeLit && x.type) region(x.type->span);
      if (x.kind == Expr::Kind::AxisRef) region(x.span);
      if (x.kind == Expr::Kind::Call && x.pattern) region(x.pattern->span);
    });
  }

  void block(const ast::Block& b) {
    for (const ast::StmtPtr& s : b) {
      type(s->annotation);
      expr(s->target.get());
      expr(s->value.get());
      expr(s->iter.get());
      expr(s->cond.get());
      for (const ast::IfBranch& br : s->branches) {
        expr(br.cond.get());
        block(br.body);
      }
      block(s->body);
    }
  }

  // The `=` right before [value], written tight.
  void tight_before(const Expr* value) {
    if (!value) return;
    size_t i = index_at(value->span.begin);
    if (i > 0 && tokens_[i - 1].kind == lex::Tok::Assign)
      tight_.push_back(i - 1);
  }

  // The tokens of a model's header after its name up to its `:`:
  // `Dense[I O] T`.
  void model_header(const ast::ModelDecl& m) {
    size_t i = index_at(m.name_span.end);
    size_t j = i;
    while (j < tokens_.size() && tokens_[j].kind != lex::Tok::Colon &&
           tokens_[j].kind != lex::Tok::Newline)
      ++j;
    if (j > i) region(diag::Span::cover(tokens_[i].span, tokens_[j - 1].span));
  }

  TokenRoles finish() {
    TokenRoles r;
    r.region.assign(tokens_.size(), 0);
    r.tight_assign.assign(tokens_.size(), false);
    // Outermost first: by start, the longer of two at one start first.
    std::sort(spans_.begin(), spans_.end(), [](diag::Span a, diag::Span b) {
      return a.begin != b.begin ? a.begin < b.begin : a.end > b.end;
    });
    uint32_t id = 0;
    for (diag::Span s : spans_) {
      ++id;
      for (size_t i = index_at(s.begin);
           i < tokens_.size() && tokens_[i].span.end <= s.end;
           ++i)
        if (r.region[i] == 0 && tokens_[i].span.begin >= s.begin &&
            tokens_[i].span.end > tokens_[i].span.begin)
          r.region[i] = id;
    }
    for (size_t i : tight_) r.tight_assign[i] = true;
    return r;
  }

 private:
  // The first token starting at or after [offset].
  size_t index_at(uint32_t offset) const {
    auto it = std::lower_bound(
        tokens_.begin(),
        tokens_.end(),
        offset,
        [](const lex::Token& t, uint32_t o) { return t.span.begin < o; });
    return static_cast<size_t>(it - tokens_.begin());
  }

  const lex::Tokens& tokens_;
  std::vector<diag::Span> spans_;
  std::vector<size_t> tight_;
};

}  // namespace

TokenRoles token_roles(const ast::Module& module, const lex::Tokens& tokens) {
  Collector c(tokens);
  for (const ast::DevicesDecl& d : module.devices) c.region(d.span);
  for (const ast::MeshDecl& m : module.meshes) c.region(m.span);
  for (const ast::DimDecl& d : module.dims) c.expr(d.value.get());
  for (const ast::DataDecl& d : module.datas)
    for (const ast::DataField& f : d.fields) {
      c.region(f.type.span);
      if (f.domain) {
        c.expr(f.domain->lo.get());
        c.expr(f.domain->hi.get());
      }
      c.expr(f.pad.get());
      c.tight_before(f.pad.get());
    }
  for (const ast::ModelDecl& m : module.models) {
    c.model_header(m);
    for (const ast::ModelField& f : m.fields) {
      c.region(f.type.span);
      c.expr(f.init.get());
    }
  }
  for (const ast::FnDecl& f : module.fns) {
    for (const ast::Param& p : f.params) {
      c.type(p.type);
      c.expr(p.default_value.get());
    }
    c.type(f.result);
    c.expr(f.expr_body.get());
    c.block(f.body);
  }
  return c.finish();
}

}  // namespace ss::fmt
