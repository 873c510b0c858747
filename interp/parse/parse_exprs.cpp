// Expressions: Python precedence with `@` at `*`'s level and `**` binding
// tighter than unary minus; primaries, lists, comprehensions, type literals,
// indexing and f-strings. Calls are in parse_calls.cpp.

#include <cstdlib>

#include "interp/lex/lexer.h"
#include "interp/parse/parser_impl.h"

namespace ss::parse::detail {

using ast::BinaryOp;
using ast::Expr;
using ast::ExprPtr;
using ast::UnaryOp;

namespace {

ExprPtr binary(BinaryOp op, ExprPtr lhs, ExprPtr rhs) {
  auto e = std::make_unique<Expr>();
  e->kind = Expr::Kind::Binary;
  e->binary_op = op;
  e->span = Span::cover(lhs->span, rhs->span);
  e->lhs = std::move(lhs);
  e->rhs = std::move(rhs);
  return e;
}

ExprPtr unary(UnaryOp op, Span op_span, ExprPtr operand) {
  auto e = std::make_unique<Expr>();
  e->kind = Expr::Kind::Unary;
  e->unary_op = op;
  e->span = Span::cover(op_span, operand->span);
  e->lhs = std::move(operand);
  return e;
}

}  // namespace

bool Parser::can_start_expr() const {
  switch (kind()) {
    case Tok::Name:
    case Tok::Int:
    case Tok::Float:
    case Tok::String:
    case Tok::FString:
    case Tok::KwTrue:
    case Tok::KwFalse:
    case Tok::LParen:
    case Tok::LBracket:
    case Tok::Minus:
    case Tok::Plus:
    case Tok::KwNot:
      return true;
    default:
      return false;
  }
}

ExprPtr Parser::parse_expr() {
  DepthGuard g(*this);
  return parse_or();
}

ExprPtr Parser::parse_expr_list() {
  ExprPtr first = parse_expr();
  if (!at(Tok::Comma)) return first;
  auto t = make(Expr::Kind::Tuple, first->span);
  t->elems.push_back(std::move(first));
  while (accept(Tok::Comma)) {
    if (!can_start_expr()) break;  // `return a, b,`
    t->elems.push_back(parse_expr());
  }
  t->span = cover_from(t->span);
  return t;
}

ExprPtr Parser::parse_or() {
  ExprPtr lhs = parse_and();
  ChainGuard chain(*this);
  while (at(Tok::KwOr)) {
    chain.step();
    advance();
    lhs = binary(BinaryOp::Or, std::move(lhs), parse_and());
  }
  return lhs;
}

ExprPtr Parser::parse_and() {
  ExprPtr lhs = parse_not();
  ChainGuard chain(*this);
  while (at(Tok::KwAnd)) {
    chain.step();
    advance();
    lhs = binary(BinaryOp::And, std::move(lhs), parse_not());
  }
  return lhs;
}

ExprPtr Parser::parse_not() {
  if (at(Tok::KwNot)) {
    DepthGuard g(*this);
    Span s = advance().span;
    return unary(UnaryOp::Not, s, parse_not());
  }
  return parse_comparison();
}

ExprPtr Parser::parse_comparison() {
  ExprPtr lhs = parse_additive();
  ChainGuard chain(*this);
  while (true) {
    BinaryOp op;
    switch (kind()) {
      case Tok::EqEq:
        op = BinaryOp::Eq;
        break;
      case Tok::NotEq:
        op = BinaryOp::Ne;
        break;
      case Tok::Less:
        op = BinaryOp::Lt;
        break;
      case Tok::LessEq:
        op = BinaryOp::Le;
        break;
      case Tok::Greater:
        op = BinaryOp::Gt;
        break;
      case Tok::GreaterEq:
        op = BinaryOp::Ge;
        break;
      default:
        return lhs;
    }
    chain.step();
    advance();
    lhs = binary(op, std::move(lhs), parse_additive());
  }
}

ExprPtr Parser::parse_additive() {
  ExprPtr lhs = parse_multiplicative();
  ChainGuard chain(*this);
  while (at(Tok::Plus) || at(Tok::Minus)) {
    chain.step();
    BinaryOp op = at(Tok::Plus) ? BinaryOp::Add : BinaryOp::Sub;
    advance();
    lhs = binary(op, std::move(lhs), parse_multiplicative());
  }
  return lhs;
}

ExprPtr Parser::parse_multiplicative() {
  ExprPtr lhs = parse_unary();
  ChainGuard chain(*this);
  while (true) {
    BinaryOp op;
    switch (kind()) {
      case Tok::Star:
        op = BinaryOp::Mul;
        break;
      case Tok::Slash:
        op = BinaryOp::Div;
        break;
      case Tok::SlashSlash:
        op = BinaryOp::FloorDiv;
        break;
      case Tok::Percent:
        op = BinaryOp::Mod;
        break;
      case Tok::At:
        op = BinaryOp::MatMul;
        break;
      default:
        return lhs;
    }
    chain.step();
    advance();
    lhs = binary(op, std::move(lhs), parse_unary());
  }
}

ExprPtr Parser::parse_unary() {
  if (at(Tok::Minus) || at(Tok::Plus)) {
    DepthGuard g(*this);
    UnaryOp op = at(Tok::Minus) ? UnaryOp::Neg : UnaryOp::Plus;
    Span s = advance().span;
    return unary(op, s, parse_unary());
  }
  return parse_power();
}

ExprPtr Parser::parse_power() {
  ExprPtr base = parse_postfix();
  if (!at(Tok::StarStar)) return base;
  DepthGuard g(*this);
  advance();
  // Right-associative, and the exponent may carry a sign: `2**-1`.
  return binary(BinaryOp::Pow, std::move(base), parse_unary());
}

ExprPtr Parser::parse_postfix() {
  ExprPtr e = parse_primary();
  ChainGuard chain(*this);
  while (true) {
    if (at(Tok::LParen) || at(Tok::Dot) || at(Tok::LBracket)) chain.step();
    if (at(Tok::LParen)) {
      auto call = make(Expr::Kind::Call, e->span);
      call->callee = std::move(e);
      parse_call_args(*call);
      call->span = cover_from(call->span);
      e = std::move(call);
    } else if (at(Tok::Dot)) {
      advance();
      const Token& n = expect(Tok::Name, "a field name after '.'");
      auto f = make(Expr::Kind::Field, Span::cover(e->span, n.span));
      f->name = n.text;
      f->name_span = n.span;
      f->lhs = std::move(e);
      e = std::move(f);
    } else if (at(Tok::LBracket)) {
      auto ix = make(Expr::Kind::Index, e->span);
      ix->lhs = std::move(e);
      parse_index(*ix);
      ix->span = cover_from(ix->span);
      e = std::move(ix);
    } else {
      return e;
    }
  }
}

void Parser::parse_index(Expr& e) {
  advance();  // [
  if (at(Tok::RBracket)) fail_expected("an index");
  while (true) {
    ast::IndexItem item;
    Span start = here();
    if (at(Tok::Colon)) {
      advance();
      item.is_slice = true;
      if (!at(Tok::Comma) && !at(Tok::RBracket)) item.hi = parse_expr();
    } else {
      ExprPtr x = parse_expr();
      if (accept(Tok::Colon)) {
        item.is_slice = true;
        item.lo = std::move(x);
        if (!at(Tok::Comma) && !at(Tok::RBracket)) item.hi = parse_expr();
      } else {
        item.index = std::move(x);
      }
    }
    item.span = cover_from(start);
    e.indices.push_back(std::move(item));
    if (!accept(Tok::Comma) || at(Tok::RBracket)) break;
  }
  expect(Tok::RBracket, "']' to close the index");
}

ExprPtr Parser::parse_primary() {
  const Token& t = peek();
  switch (t.kind) {
    case Tok::Name: {
      auto e = make(Expr::Kind::Name, t.span);
      e->name = t.text;
      advance();
      return e;
    }
    case Tok::Int: {
      auto e = make(Expr::Kind::Int, t.span);
      auto v = parse_int_text(t.text);
      if (!v)
        report(Code::E0101,
               t.span,
               "integer literal too large",
               "does not fit in 64 bits");
      e->int_value = v.value_or(0);
      advance();
      return e;
    }
    case Tok::Float: {
      auto e = make(Expr::Kind::Float, t.span);
      e->float_value = std::strtod(t.text.c_str(), nullptr);
      advance();
      return e;
    }
    case Tok::String: {
      auto e = make(Expr::Kind::String, t.span);
      e->name = t.text;
      advance();
      return e;
    }
    case Tok::FString:
      return parse_fstring();
    case Tok::KwTrue:
    case Tok::KwFalse: {
      auto e = make(Expr::Kind::Bool, t.span);
      e->bool_value = t.kind == Tok::KwTrue;
      advance();
      return e;
    }
    case Tok::LParen:
      return parse_paren();
    case Tok::LBracket:
      return parse_bracket();
    default:
      fail_expected("an expression");
  }
}

ExprPtr Parser::parse_paren() {
  Span start = advance().span;  // (
  if (accept(Tok::RParen)) return make(Expr::Kind::Tuple, cover_from(start));
  ExprPtr first = parse_expr();
  if (!at(Tok::Comma)) {
    expect(Tok::RParen, "')' to close '('");
    first->span = cover_from(start);
    return first;
  }
  auto t = make(Expr::Kind::Tuple, start);
  t->elems.push_back(std::move(first));
  while (accept(Tok::Comma)) {
    if (at(Tok::RParen)) break;
    t->elems.push_back(parse_expr());
  }
  expect(Tok::RParen, "')' to close the tuple");
  t->span = cover_from(start);
  return t;
}

ExprPtr Parser::parse_bracket() {
  Span start = here();
  // A type in value position? `[b D]`, `[m/x k]`, `[(H Dh)]`, `[8] i64`.
  {
    Speculation spec(*this);
    bool saved = in_value_type_;
    in_value_type_ = true;
    std::optional<ast::TypeExpr> t;
    try {
      t = parse_tensor_type();
    } catch (const ParseError&) {
    }
    in_value_type_ = saved;
    if (t) {
      bool type_like = t->axes.size() >= 2 || !t->elem.empty();
      for (const auto& a : t->axes)
        if (!a.split.empty() || (a.kind != ast::AxisExpr::Kind::Name &&
                                 a.kind != ast::AxisExpr::Kind::Literal))
          type_like = true;
      if (type_like) {
        auto e = make(Expr::Kind::TypeLit, t->span);
        e->type = std::make_unique<ast::TypeExpr>(std::move(*t));
        return e;
      }
    }
    spec.rewind();
  }

  advance();  // [
  if (accept(Tok::RBracket)) return make(Expr::Kind::List, cover_from(start));
  ExprPtr first = parse_expr();
  if (at(Tok::KwFor)) {
    advance();
    auto c = make(Expr::Kind::Comprehension, start);
    c->elem = std::move(first);
    bool paren = accept(Tok::LParen);
    do {
      c->targets.push_back(expect(Tok::Name, "a loop variable name").text);
    } while (accept(Tok::Comma));
    if (paren) expect(Tok::RParen, "')' after the loop variables");
    expect(Tok::KwIn, "'in' after the loop variables");
    c->iter = parse_expr();
    if (accept(Tok::KwIf)) c->cond = parse_expr();
    expect(Tok::RBracket, "']' to close the comprehension");
    c->span = cover_from(start);
    return c;
  }
  auto l = make(Expr::Kind::List, start);
  l->elems.push_back(std::move(first));
  while (accept(Tok::Comma)) {
    if (at(Tok::RBracket)) break;
    l->elems.push_back(parse_expr());
  }
  expect(Tok::RBracket, "']' to close the list");
  l->span = cover_from(start);
  return l;
}

// ---------------------------------------------------------------- f-strings

namespace {

void flush_text(std::string& lit, std::vector<ast::FStringPart>& parts) {
  if (lit.empty()) return;
  ast::FStringPart p;
  p.text = std::move(lit);
  parts.push_back(std::move(p));
  lit.clear();
}

}  // namespace

ExprPtr Parser::parse_fstring() {
  const Token& tok = advance();
  auto e = make(Expr::Kind::FString, tok.span);
  const std::string raw = tok.text;
  // The raw text starts after `f"`.
  uint32_t base = tok.span.begin + 2;
  auto sp = [&](size_t b, size_t en) {
    return Span{file_,
                static_cast<uint32_t>(base + b),
                static_cast<uint32_t>(base + en)};
  };
  std::string lit;
  size_t n = raw.size();
  size_t i = 0;
  while (i < n) {
    char c = raw[i];
    if (c == '{') {
      if (i + 1 < n && raw[i + 1] == '{') {
        lit += '{';
        i += 2;
        continue;
      }
      int depth = 0;
      size_t colon = std::string::npos;
      size_t j = i + 1;
      for (; j < n; ++j) {
        char d = raw[j];
        if (d == '(' || d == '[' || d == '{') {
          ++depth;
        } else if (d == ')' || d == ']') {
          --depth;
        } else if (d == '}') {
          if (depth <= 0) break;
          --depth;
        } else if (d == ':' && depth <= 0 && colon == std::string::npos) {
          colon = j;
        }
      }
      if (j >= n) {
        report(Code::E0101,
               sp(i, i + 1),
               "unclosed '{' in an f-string",
               "no matching '}'");
        lit += raw.substr(i);
        break;
      }
      flush_text(lit, e->fparts);
      size_t expr_end = colon != std::string::npos ? colon : j;
      std::string_view frag(raw.data() + i + 1, expr_end - (i + 1));
      if (frag.find_first_not_of(" ") == std::string_view::npos) {
        report(Code::E0101,
               sp(i, j + 1),
               "an empty expression in an f-string",
               "expected an expression inside the braces");
      } else {
        lex::Tokens sub = lex::lex_fragment(
            frag, file_, static_cast<uint32_t>(base + i + 1), *diags_);
        Parser p(sub, file_, *diags_, depth_ + 1);
        p.inherit_quiet_zones(*this);
        try {
          ExprPtr x = p.parse_expr();
          if (!p.at(Tok::Eof))
            p.fail_expected("'}' to end the f-string's expression");
          ast::FStringPart part;
          part.expr = std::move(x);
          if (colon != std::string::npos)
            part.format_spec = raw.substr(colon + 1, j - colon - 1);
          e->fparts.push_back(std::move(part));
        } catch (const ParseError&) {
        }
      }
      i = j + 1;
    } else if (c == '}') {
      if (i + 1 < n && raw[i + 1] == '}') {
        lit += '}';
        i += 2;
        continue;
      }
      report(Code::E0101,
             sp(i, i + 1),
             "a single '}' in an f-string",
             "write '}}' for a literal brace");
      lit += '}';
      ++i;
    } else if (c == '\\' && i + 1 < n) {
      char d = raw[i + 1];
      switch (d) {
        case 'n':
          lit += '\n';
          break;
        case 't':
          lit += '\t';
          break;
        case '"':
          lit += '"';
          break;
        case '\\':
          lit += '\\';
          break;
        case '{':
          lit += '{';
          break;
        case '}':
          lit += '}';
          break;
        default:
          lit += c;
          lit += d;
          break;
      }
      i += 2;
    } else {
      lit += c;
      ++i;
    }
  }
  flush_text(lit, e->fparts);
  return e;
}

}  // namespace ss::parse::detail
