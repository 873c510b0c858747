// Statements and blocks.

#include "interp/parse/parser_impl.h"

namespace ss::parse::detail {

using ast::Stmt;
using ast::StmtPtr;

namespace {

StmtPtr make_stmt(Stmt::Kind k, Span s) {
  auto st = std::make_unique<Stmt>();
  st->kind = k;
  st->span = s;
  return st;
}

}  // namespace

void Parser::end_stmt(const char* what) {
  if (accept(Tok::Newline) || at(Tok::Eof) || at(Tok::Dedent)) return;
  fail_expected(std::string("end of line after ") + what);
}

ast::Block Parser::parse_block() {
  if (accept(Tok::Newline)) return parse_indented_block();
  if (at(Tok::Eof)) {
    report(Code::E0102,
           here(),
           "expected an indented block after ':'",
           "the file ends here");
    return {};
  }
  // `if c: break` — one statement on the same line.
  ast::Block b;
  b.push_back(parse_stmt());
  return b;
}

ast::Block Parser::parse_indented_block() {
  if (!at(Tok::Indent)) {
    report(Code::E0102,
           here(),
           "expected an indented block after ':'",
           "indent this line to put it in the block");
    return {};
  }
  DepthGuard g(*this);
  advance();  // Indent
  ast::Block b;
  while (!at(Tok::Dedent) && !at(Tok::Eof)) {
    size_t before = pos();
    if (at(Tok::Newline)) {
      advance();
      continue;
    }
    if (at(Tok::Indent)) {
      report(Code::E0102,
             here(),
             "unexpected indent",
             "this line is indented more than the block");
      skip_block();
      continue;
    }
    try {
      b.push_back(parse_stmt());
    } catch (const ParseError&) {
      sync_line();
    }
    if (pos() == before) advance();
  }
  accept(Tok::Dedent);
  return b;
}

StmtPtr Parser::parse_stmt() {
  DepthGuard g(*this);
  Span start = here();
  switch (kind()) {
    case Tok::KwLet:
      return parse_let();
    case Tok::KwIf:
      return parse_if();
    case Tok::KwFor:
      return parse_for();
    case Tok::KwWhile:
      return parse_while();
    case Tok::KwBreak:
    case Tok::KwContinue: {
      auto st = make_stmt(
          at(Tok::KwBreak) ? Stmt::Kind::Break : Stmt::Kind::Continue, start);
      const char* what = at(Tok::KwBreak) ? "'break'" : "'continue'";
      advance();
      end_stmt(what);
      return st;
    }
    case Tok::KwReturn: {
      auto st = make_stmt(Stmt::Kind::Return, start);
      advance();
      if (!at(Tok::Newline) && !at(Tok::Eof) && !at(Tok::Dedent))
        st->value = parse_expr_list();
      st->span = cover_from(start);
      end_stmt("the return value");
      return st;
    }
    case Tok::KwElif:
    case Tok::KwElse:
      fail(Code::E0101,
           here(),
           std::string("'") + lex::tok_spelling(kind()) +
               "' without an 'if' before it",
           "no 'if' at this indentation");
    default:
      return parse_simple();
  }
}

StmtPtr Parser::parse_let() {
  Span start = advance().span;  // let
  auto st = make_stmt(Stmt::Kind::Let, start);
  do {
    const Token& n = expect(Tok::Name, "a name after 'let'");
    st->targets.push_back({n.span, n.text});
  } while (accept(Tok::Comma));
  if (accept(Tok::Colon)) st->annotation = parse_type();
  expect(Tok::Assign, "'=' and a value after the name in 'let'");
  st->value = parse_expr_list();
  st->span = cover_from(start);
  end_stmt("the value");
  return st;
}

StmtPtr Parser::parse_if() {
  Span start = here();
  auto st = make_stmt(Stmt::Kind::If, start);
  // if / elif
  do {
    ast::IfBranch br;
    br.span = advance().span;
    br.cond = parse_expr();
    expect(Tok::Colon, "':' after the condition");
    br.body = parse_block();
    st->branches.push_back(std::move(br));
  } while (at(Tok::KwElif));
  if (at(Tok::KwElse)) {
    ast::IfBranch br;
    br.span = advance().span;
    expect(Tok::Colon, "':' after 'else'");
    br.body = parse_block();
    st->branches.push_back(std::move(br));
  }
  st->span = cover_from(start);
  return st;
}

StmtPtr Parser::parse_for() {
  Span start = advance().span;  // for
  auto st = make_stmt(Stmt::Kind::For, start);
  do {
    const Token& n = expect(Tok::Name, "a loop variable name");
    st->targets.push_back({n.span, n.text});
  } while (accept(Tok::Comma));
  expect(Tok::KwIn, "'in' after the loop variable");
  st->iter = parse_expr();
  expect(Tok::Colon, "':' after the loop's iterable");
  st->body = parse_block();
  st->span = cover_from(start);
  return st;
}

StmtPtr Parser::parse_while() {
  Span start = advance().span;  // while
  auto st = make_stmt(Stmt::Kind::While, start);
  st->cond = parse_expr();
  expect(Tok::Colon, "':' after the condition");
  st->body = parse_block();
  st->span = cover_from(start);
  return st;
}

StmtPtr Parser::parse_simple() {
  Span start = here();
  ast::ExprPtr lhs = parse_expr_list();
  ast::BinaryOp aug{};
  bool is_aug = true;
  switch (kind()) {
    case Tok::PlusAssign:
      aug = ast::BinaryOp::Add;
      break;
    case Tok::MinusAssign:
      aug = ast::BinaryOp::Sub;
      break;
    case Tok::StarAssign:
      aug = ast::BinaryOp::Mul;
      break;
    case Tok::SlashAssign:
      aug = ast::BinaryOp::Div;
      break;
    default:
      is_aug = false;
  }
  if (is_aug || at(Tok::Assign)) {
    using K = ast::Expr::Kind;
    if (lhs->kind == K::Tuple && !is_aug) {
      // Tuple assignment: each element a name or a field, as Python's.
      for (const ast::ExprPtr& e : lhs->elems)
        if (e->kind != K::Name && e->kind != K::Field)
          fail(Code::E0101,
               e->span,
               "cannot assign to this expression",
               "each target of `a, b = ...` is a name or a field (m.w1)");
    } else if (lhs->kind != K::Name && lhs->kind != K::Field &&
               lhs->kind != K::Index) {
      fail(Code::E0101,
           lhs->span,
           "cannot assign to this expression",
           lhs->kind == K::Tuple
               ? "`a, b += ...` has no meaning: write each on its own line"
               : "expected a name, a field (m.w1) or an index (x[i])");
    }
    advance();
    auto st =
        make_stmt(is_aug ? Stmt::Kind::AugAssign : Stmt::Kind::Assign, start);
    st->aug_op = aug;
    st->target = std::move(lhs);
    st->value = parse_expr_list();
    st->span = cover_from(start);
    end_stmt("the assignment");
    return st;
  }
  auto st = make_stmt(Stmt::Kind::Expr, start);
  st->value = std::move(lhs);
  st->span = cover_from(start);
  end_stmt("the expression");
  return st;
}

}  // namespace ss::parse::detail
