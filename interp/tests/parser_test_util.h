#pragma once
// Shared helpers for the parser tests: the doc examples, parse helpers and
// the AST printer (show).

#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "interp/lex/lexer.h"
#include "interp/parse/parser.h"

namespace parser_test {

using namespace ss;
using ast::Expr;
using ast::Stmt;
using diag::Code;

inline const char* kReadme = R"(devices cpu

dim D = 784
dim Hd = 256
dim C = 10

data Digit:
    img: [D] in 0.0..=1.0
    label: i64 in 0..C

model Mlp:
    w1: [D Hd] = normal(std=1/sqrt(D))
    w2: [Hd C] = normal(std=1/sqrt(Hd))

fn forward(m: Mlp, x: [b D]) -> [b C]:
    return relu(x @ m.w1) @ m.w2

fn loss(m: Mlp, batch: [b] Digit) -> f32:
    return cross_entropy(forward(m, batch.img), batch.label)

fn train_step(mut m: Mlp, mut opt: AdamW[Mlp], batch: [b] Digit) -> Logs:
    let l, g = value_and_grad(loss, m, batch)
    update(m, opt, g)
    return logs(loss=l)

fn evaluate(m: Mlp, batch: [b] Digit) -> Logs:
    let logits = forward(m, batch.img)
    return logs(loss=cross_entropy(logits, batch.label),
                acc=mean(argmax(logits, over=C) == batch.label))

fn run(train: Dataset[Digit], mut m: Mlp, mut opt: AdamW[Mlp], out: Sink):
    for epoch in range(3):
        for batch in progress(train.batches(64, shuffle=epoch)):
            out.write(train_step(m, opt, batch))

fn main():
    let train, test = synthetic_digits(Digit, 60000, seed=0).split(0.9)
    let m = Mlp.init(seed=0)
    let opt = adamw(m, lr=1e-3)
    run(train, m, opt, csv("train.csv"))
    print(mean_logs(evaluate, m, test.batches(1000)))
    save("mlp.safetensors", m, opt)
)";

inline const char* kAttention = R"(devices cuda[0 1 2]
    split H

dim D = 768
dim H = 12
dim Dh = 64

model Attention:
    w_qkv: [D (3 H Dh)] = normal(std=0.02)
    w_o: [(H Dh) D] = normal(std=0.02)

fn attention(m: Attention, x: [b n D]) -> [b n D]:
    let q, k, v = split(x @ m.w_qkv, b n (3 H Dh) -> b H n Dh)
    let s = einsum(q, k, b H n Dh, b H t Dh -> b H n t) / sqrt(Dh)
    let p = softmax(masked_fill(s, not causal(n, t), -inf), over=t)
    let o = einsum(p, v, b H n t, b H t Dh -> b H n Dh)
    return rearrange(o, b H n Dh -> b n (H Dh)) @ m.w_o
)";

struct Parsed {
  diag::SourceMap sm;
  diag::Diagnostics diags;
  ast::Module m;
  parse::ReplInput repl;
  std::string text_of(diag::Span s) const { return std::string(sm.text(s)); }
  uint32_t line(size_t i = 0) const {
    return sm
        .line_col(diags.list().at(i).span.file, diags.list().at(i).span.begin)
        .line;
  }
  std::string dump() const { return diag::render_terminal(diags, sm); }
};

inline std::unique_ptr<Parsed> parse_text(const std::string& text,
                                          bool repl = false) {
  auto p = std::make_unique<Parsed>();
  uint32_t f = p->sm.add("test.ss", text);
  auto toks = lex::lex(p->sm, f, p->diags);
  if (repl)
    p->repl = parse::parse_repl(toks, f, p->diags);
  else
    p->m = parse::parse(toks, f, p->diags);
  p->diags.sort();
  return p;
}

/// Parses `fn t():` + the statement, and returns the fn's body.
inline std::unique_ptr<Parsed> parse_body(const std::string& stmts) {
  std::string text = "fn t():\n";
  size_t b = 0;
  while (b < stmts.size()) {
    size_t e = stmts.find('\n', b);
    if (e == std::string::npos) e = stmts.size();
    text += "    " + stmts.substr(b, e - b) + "\n";
    b = e + 1;
  }
  return parse_text(text);
}

inline const Expr& expr_of(const Parsed& p, size_t stmt = 0) {
  const auto& body = p.m.fns.at(0).body;
  const Stmt& s = *body.at(stmt);
  return s.value ? *s.value : *s.cond;
}

inline const Expr& parse_expr_text(std::unique_ptr<Parsed>& holder,
                                   const std::string& e) {
  holder = parse_body(e);
  INFO(holder->dump());
  REQUIRE(holder->diags.empty());
  return expr_of(*holder);
}

/// A compact rendering of an expression to test structure.
inline std::string show(const Expr& e);
inline std::string show_axis(const ast::AxisExpr& a) {
  std::string s;
  switch (a.kind) {
    case ast::AxisExpr::Kind::Name:
      s = a.name;
      break;
    case ast::AxisExpr::Kind::Literal:
      s = std::to_string(a.value);
      break;
    case ast::AxisExpr::Kind::Star:
      s = "*" + a.name;
      break;
    case ast::AxisExpr::Kind::Group:
      s = "(";
      for (size_t i = 0; i < a.items.size(); ++i)
        s += (i ? " " : "") + show_axis(a.items[i]);
      s += ")";
      break;
  }
  if (!a.split.empty()) {
    s += "/";
    for (size_t i = 0; i < a.split.size(); ++i)
      s += (i ? "," : "") + a.split[i];
  }
  return s;
}
inline std::string show_item(const ast::PatternItem& it) {
  switch (it.kind) {
    case ast::PatternItem::Kind::Name:
      return it.name;
    case ast::PatternItem::Kind::Literal:
      return std::to_string(it.value);
    case ast::PatternItem::Kind::Group: {
      std::string s = "(";
      for (size_t i = 0; i < it.items.size(); ++i)
        s += (i ? " " : "") + show_item(it.items[i]);
      return s + ")";
    }
  }
  return "?";
}
inline std::string show_side(const ast::PatternSide& side) {
  std::string s;
  for (size_t i = 0; i < side.items.size(); ++i)
    s += (i ? " " : "") + show_item(side.items[i]);
  return s;
}
inline std::string show_type(const ast::TypeExpr& t) {
  std::string s;
  switch (t.kind) {
    case ast::TypeExpr::Kind::Tensor:
      s = "[";
      for (size_t i = 0; i < t.axes.size(); ++i)
        s += (i ? " " : "") + show_axis(t.axes[i]);
      s += "]";
      if (!t.elem.empty()) s += " " + t.elem;
      return s;
    case ast::TypeExpr::Kind::Named:
      s = t.name;
      if (t.has_args) {
        s += "[";
        for (size_t i = 0; i < t.args.size(); ++i)
          s += (i ? " " : "") + show_axis(t.args[i]);
        s += "]";
      }
      if (!t.split.empty()) {
        s += "/";
        for (size_t i = 0; i < t.split.size(); ++i)
          s += (i ? "," : "") + t.split[i];
      }
      if (!t.field_specs.empty()) {
        s += "{";
        for (size_t i = 0; i < t.field_specs.size(); ++i) {
          s += (i ? ", " : "") + t.field_specs[i].field;
          for (const auto& x : t.field_specs[i].split) s += "/" + x;
        }
        s += "}";
      }
      return s;
    case ast::TypeExpr::Kind::Tuple:
      s = "(";
      for (size_t i = 0; i < t.elems.size(); ++i)
        s += (i ? ", " : "") + show_type(t.elems[i]);
      return s + ")";
  }
  return "?";
}
inline std::string show(const Expr& e) {
  switch (e.kind) {
    case Expr::Kind::Name:
      return e.name;
    case Expr::Kind::Int:
      return std::to_string(e.int_value);
    case Expr::Kind::Float: {
      std::string s = std::to_string(e.float_value);
      return s;
    }
    case Expr::Kind::String:
      return "\"" + e.name + "\"";
    case Expr::Kind::FString:
      return "f\"...\"";
    case Expr::Kind::Bool:
      return e.bool_value ? "true" : "false";
    case Expr::Kind::List:
    case Expr::Kind::Tuple: {
      std::string s = e.kind == Expr::Kind::List ? "[" : "(";
      for (size_t i = 0; i < e.elems.size(); ++i)
        s += (i ? ", " : "") + show(*e.elems[i]);
      return s + (e.kind == Expr::Kind::List ? "]" : ")");
    }
    case Expr::Kind::Comprehension: {
      std::string s = "[" + show(*e.elem) + " for";
      for (const auto& t : e.targets) s += " " + t;
      s += " in " + show(*e.iter);
      if (e.cond) s += " if " + show(*e.cond);
      return s + "]";
    }
    case Expr::Kind::Unary:
      return std::string("(") + ast::unary_op_spelling(e.unary_op) +
             (e.unary_op == ast::UnaryOp::Not ? " " : "") + show(*e.lhs) + ")";
    case Expr::Kind::Binary:
      return "(" + show(*e.lhs) + " " + ast::binary_op_spelling(e.binary_op) +
             " " + show(*e.rhs) + ")";
    case Expr::Kind::Call: {
      std::string s = show(*e.callee) + "(";
      bool first = true;
      for (const auto& a : e.args) {
        s += (first ? "" : ", ");
        first = false;
        if (!a.keyword.empty()) s += a.keyword + "=";
        s += show(*a.value);
      }
      if (e.pattern) {
        for (const auto& side : e.pattern->inputs)
          s += (first ? "" : ", ") + show_side(side), first = false;
        s += " -> " + show_side(e.pattern->output);
      }
      return s + ")";
    }
    case Expr::Kind::Field:
      return show(*e.lhs) + "." + e.name;
    case Expr::Kind::Index: {
      std::string s = show(*e.lhs) + "[";
      for (size_t i = 0; i < e.indices.size(); ++i) {
        const auto& it = e.indices[i];
        s += (i ? ", " : "");
        if (it.is_slice)
          s += (it.lo ? show(*it.lo) : "") + ":" + (it.hi ? show(*it.hi) : "");
        else
          s += show(*it.index);
      }
      return s + "]";
    }
    case Expr::Kind::TypeLit:
      return "type " + show_type(*e.type);
    case Expr::Kind::AxisRef:
      return "axis " + show_axis(*e.axis);
  }
  return "?";
}

inline std::string show_text(const std::string& text) {
  std::unique_ptr<Parsed> p;
  return show(parse_expr_text(p, text));
}

}  // namespace parser_test
