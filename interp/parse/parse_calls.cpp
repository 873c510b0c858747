// Call arguments: positional, `name=value`, axis arguments (`over=`,
// `split=`, `concat=`, `new=`, `as=`), and pattern calls
// (`rearrange(x, b H n Dh -> b n (H Dh))`, `einsum(q, k, p1, p2 -> out)`).

#include "interp/parse/parser_impl.h"

namespace ss::parse::detail {

using ast::Expr;
using ast::ExprPtr;

namespace {

bool opens(Tok k) {
  return k == Tok::LParen || k == Tok::LBracket || k == Tok::LBrace;
}
bool closes(Tok k) {
  return k == Tok::RParen || k == Tok::RBracket || k == Tok::RBrace;
}
bool structural(Tok k) {
  return k == Tok::Newline || k == Tok::Eof || k == Tok::Indent ||
         k == Tok::Dedent;
}

}  // namespace

size_t Parser::matching_close(size_t open) const {
  int depth = 0;
  for (size_t i = open; i < toks_.size(); ++i) {
    Tok k = toks_[i].kind;
    if (structural(k)) return std::string::npos;
    if (opens(k)) ++depth;
    if (closes(k) && --depth == 0) return i;
  }
  return std::string::npos;
}

bool Parser::is_axis_keyword(const std::string& k) {
  return k == "over" || k == "split" || k == "concat" || k == "new" ||
         k == "as";
}

void Parser::parse_call_args(Expr& call) {
  size_t open = pos_;
  size_t close = matching_close(open);
  if (close != std::string::npos) {
    int depth = 0;
    for (size_t i = open + 1; i < close; ++i) {
      Tok k = toks_[i].kind;
      if (opens(k)) ++depth;
      if (closes(k)) --depth;
      if (depth == 0 && k == Tok::Arrow) {
        parse_pattern_call(call, close);
        return;
      }
    }
  }
  advance();  // (
  while (!at(Tok::RParen)) {
    call.args.push_back(parse_arg());
    if (!accept(Tok::Comma)) break;
  }
  expect(Tok::RParen, "')' after arguments");
}

ast::Arg Parser::parse_arg() {
  ast::Arg a;
  Span start = here();
  if (at(Tok::Name) && kind(1) == Tok::Assign) {
    const Token& k = advance();
    a.keyword = k.text;
    a.keyword_span = k.span;
    advance();  // =
    a.value = is_axis_keyword(a.keyword) ? parse_axis_arg() : parse_expr();
  } else {
    a.value = parse_expr();
  }
  a.span = cover_from(start);
  return a;
}

ast::AxisExpr Parser::parse_axis_ref_item() {
  if (at(Tok::Minus) && kind(1) == Tok::Int) {
    Span start = advance().span;
    const Token& n = advance();
    auto v = parse_int_text("-" + n.text);
    if (!v) fail(Code::E0101, n.span, "axis position too large");
    ast::AxisExpr a;
    a.kind = ast::AxisExpr::Kind::Literal;
    a.value = *v;
    a.span = Span::cover(start, n.span);
    return a;
  }
  if (!(at(Tok::Name) || at(Tok::Int) || at(Tok::LParen)))
    fail_expected("an axis (a name, a position or a group like (H Dh))");
  return parse_axis(/*allow_star=*/false, /*allow_split=*/false);
}

ExprPtr Parser::parse_axis_arg() {
  DepthGuard g(*this);
  auto ref = [](ast::AxisExpr a) {
    auto e = make(Expr::Kind::AxisRef, a.span);
    e->axis = std::make_unique<ast::AxisExpr>(std::move(a));
    return e;
  };
  if (!at(Tok::LParen)) return ref(parse_axis_ref_item());

  Span start = advance().span;  // (
  if (at(Tok::RParen)) fail_expected("an axis");
  ast::AxisExpr first = parse_axis_ref_item();
  if (at(Tok::Comma)) {
    // A tuple of axes: `over=(n, D)`.
    auto t = make(Expr::Kind::Tuple, start);
    t->elems.push_back(ref(std::move(first)));
    while (accept(Tok::Comma)) {
      if (at(Tok::RParen)) break;
      t->elems.push_back(ref(parse_axis_ref_item()));
    }
    expect(Tok::RParen, "')' to close the axes");
    t->span = cover_from(start);
    return t;
  }
  // A group: `over=(H Dh)`; `(D)` is just D.
  ast::AxisExpr group;
  group.kind = ast::AxisExpr::Kind::Group;
  group.items.push_back(std::move(first));
  while (!at(Tok::RParen)) {
    if (!(at(Tok::Name) || at(Tok::Int) || at(Tok::LParen)))
      fail_expected("an axis or ')' in the group");
    group.items.push_back(parse_axis(false, false));
  }
  advance();  // )
  if (group.items.size() == 1) {
    ast::AxisExpr one = std::move(group.items[0]);
    one.span = cover_from(start);
    return ref(std::move(one));
  }
  group.span = cover_from(start);
  return ref(std::move(group));
}

ast::PatternItem Parser::parse_pattern_item() {
  DepthGuard g(*this);
  ast::PatternItem it;
  Span start = here();
  if (at(Tok::Name)) {
    it.kind = ast::PatternItem::Kind::Name;
    it.name = advance().text;
  } else if (at(Tok::Int)) {
    const Token& n = advance();
    it.kind = ast::PatternItem::Kind::Literal;
    auto v = parse_int_text(n.text);
    if (!v) fail(Code::E0101, n.span, "size too large in a pattern");
    it.value = *v;
  } else if (at(Tok::LParen)) {
    advance();
    it.kind = ast::PatternItem::Kind::Group;
    while (!at(Tok::RParen)) {
      if (!(at(Tok::Name) || at(Tok::Int) || at(Tok::LParen)))
        fail_expected("a pattern label or ')'");
      it.items.push_back(parse_pattern_item());
    }
    if (it.items.empty())
      fail(Code::E0101, cover_from(start), "an empty group in a pattern");
    advance();  // )
  } else {
    fail_expected("a pattern label (a name, a size or a group)");
  }
  it.span = cover_from(start);
  return it;
}

void Parser::parse_pattern_call(Expr& call, size_t close) {
  struct Part {
    size_t begin, end;
    bool keyword;
    size_t arrow;  // npos when none
  };
  size_t open = pos_;
  std::vector<Part> parts;
  {
    int depth = 0;
    size_t begin = open + 1;
    size_t arrow = std::string::npos;
    for (size_t i = open + 1; i <= close; ++i) {
      Tok k = toks_[i].kind;
      if (i == close || (depth == 0 && k == Tok::Comma)) {
        parts.push_back({begin, i, false, arrow});
        begin = i + 1;
        arrow = std::string::npos;
        continue;
      }
      if (opens(k)) ++depth;
      if (closes(k)) --depth;
      if (depth == 0 && k == Tok::Arrow) {
        if (arrow != std::string::npos)
          fail(Code::E0101,
               toks_[i].span,
               "a pattern has only one '->'",
               "a second '->'");
        arrow = i;
      }
    }
  }
  // A trailing comma leaves an empty last part.
  if (parts.size() > 1 && parts.back().begin == parts.back().end)
    parts.pop_back();
  std::vector<size_t> positional;
  size_t arrow_part = std::string::npos;
  for (size_t p = 0; p < parts.size(); ++p) {
    Part& part = parts[p];
    if (part.begin == part.end) {
      pos_ = part.begin;
      fail_expected("an argument");
    }
    part.keyword = toks_[part.begin].kind == Tok::Name &&
                   part.begin + 1 < part.end &&
                   toks_[part.begin + 1].kind == Tok::Assign;
    if (part.arrow != std::string::npos) {
      if (part.keyword)
        fail(Code::E0101,
             toks_[part.arrow].span,
             "a pattern cannot be a keyword argument",
             "pattern here");
      arrow_part = positional.size();
    }
    if (!part.keyword) positional.push_back(p);
  }
  size_t n = positional.size();
  if (arrow_part != n - 1) {
    const Token& a = toks_[parts[positional[arrow_part]].arrow];
    fail(Code::E0101,
         a.span,
         "a pattern's `->` must be in its last part",
         "move the pattern's output to the last argument");
  }
  // `x.rearrange(p -> q)`: the receiver is the first operand, so the
  // parentheses hold k - 1 operands and k sides.
  bool method = call.callee && call.callee->kind == Expr::Kind::Field;
  if (n % 2 != 0 && !method) {
    const Token& a = toks_[parts[positional.back()].arrow];
    fail(Code::E0101,
         a.span,
         "this pattern call has " + std::to_string(n) +
             (n == 1 ? " part" : " parts") +
             "; it needs k operands followed by k pattern sides, the last "
             "holding `->` (count the commas: 2k parts)",
         "pattern here");
  }
  size_t k = n / 2;  // for a method call with odd n: (n - 1) / 2
  ast::Pattern pat;
  size_t index = 0;
  bool first_side = true;
  for (const Part& part : parts) {
    pos_ = part.begin;
    if (part.keyword) {
      call.args.push_back(parse_arg());
      if (pos_ != part.end) fail_expected("',' or ')' after the argument");
      continue;
    }
    size_t i = index++;
    if (i < k) {
      ast::Arg a;
      a.value = parse_expr();
      a.span = a.value->span;
      if (pos_ != part.end) fail_expected("',' or ')' after the argument");
      call.args.push_back(std::move(a));
      continue;
    }
    // A pattern side; the last one holds `->` and the output.
    ast::PatternSide side;
    side.span = here();
    size_t stop = part.arrow != std::string::npos ? part.arrow : part.end;
    while (pos_ < stop) side.items.push_back(parse_pattern_item());
    if (pos_ != stop) fail_expected("'->' or ',' after the pattern");
    if (!side.items.empty())
      side.span = Span::cover(side.items.front().span, side.items.back().span);
    if (first_side) pat.span = side.span;
    first_side = false;
    pat.inputs.push_back(std::move(side));
    if (part.arrow != std::string::npos) {
      Span arrow = advance().span;
      pat.output.span = {arrow.file, arrow.end, arrow.end};
      while (pos_ < part.end) pat.output.items.push_back(parse_pattern_item());
      if (pos_ != part.end) fail_expected("',' or ')' after the pattern");
      if (!pat.output.items.empty())
        pat.output.span = Span::cover(pat.output.items.front().span,
                                      pat.output.items.back().span);
      pat.span = Span::cover(pat.span, arrow);
      pat.span = Span::cover(pat.span, pat.output.span);
    }
  }
  call.pattern = std::move(pat);
  pos_ = close;
  advance();  // )
}

}  // namespace ss::parse::detail
