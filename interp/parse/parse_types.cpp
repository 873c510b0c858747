// Types as written: tensors `[b D] f64`, named `AdamW[Mlp]`, `Net/x`,
// `Net{w/stages}`, tuples `(T1, T2)`; and their axes.

#include "interp/parse/parser_impl.h"

namespace ss::parse::detail {

ast::TypeExpr Parser::parse_type() {
  DepthGuard g(*this);
  ast::TypeExpr t;
  Span start = here();
  if (at(Tok::LBracket)) return parse_tensor_type();

  if (at(Tok::LParen)) {
    advance();
    t.kind = ast::TypeExpr::Kind::Tuple;
    bool comma = false;
    while (!at(Tok::RParen)) {
      t.elems.push_back(parse_type());
      if (!accept(Tok::Comma)) break;
      comma = true;
    }
    expect(Tok::RParen, "')' to close the tuple type");
    if (t.elems.size() == 1 && !comma) {
      ast::TypeExpr inner = std::move(t.elems[0]);
      inner.span = cover_from(start);
      return inner;
    }
    t.span = cover_from(start);
    return t;
  }

  if (!at(Tok::Name) && !at(Tok::KwFn))
    fail_expected("a type (like [b D], f32 or Mlp)");
  const Token& name = advance();
  t.kind = ast::TypeExpr::Kind::Named;
  t.name = name.kind == Tok::KwFn ? "fn" : name.text;
  if (at(Tok::LBracket)) {
    advance();
    t.has_args = true;
    while (!at(Tok::RBracket)) {
      t.args.push_back(parse_axis(/*allow_star=*/false, /*allow_split=*/true));
      accept(Tok::Comma);  // `Dense[D, Hd]` is accepted too
    }
    expect(Tok::RBracket, "']' to close the type arguments");
  }
  if (at(Tok::Slash)) {
    advance();
    Span end;
    t.split = parse_split(end);
  }
  if (at(Tok::LBrace)) {
    advance();
    while (!at(Tok::RBrace)) {
      ast::FieldSpec fs;
      const Token& f = expect(Tok::Name, "a field name in the spec");
      fs.field = f.text;
      fs.span = f.span;
      if (accept(Tok::Slash)) {
        Span end;
        fs.split = parse_split(end);
        fs.span = Span::cover(fs.span, end);
      }
      t.field_specs.push_back(std::move(fs));
      if (!accept(Tok::Comma)) break;
    }
    expect(Tok::RBrace, "'}' to close the field specs");
  }
  parse_model_dtype(t);
  t.span = cover_from(start);
  return t;
}

void Parser::parse_model_dtype(ast::TypeExpr& t) {
  // `Linear[D H] f64`: a model's dtype, written where a tensor's is; but
  // in `(m: Mlp x: [b D])` the name is the next parameter, a comma missing.
  if (!can_take_elem() || kind(1) == Tok::Colon) return;
  const Token& d = advance();
  t.dtype = d.text;
  t.dtype_span = d.span;
}

bool Parser::can_take_elem() const {
  // `[b D] f64`, `[b] Digit`; but `tokens: [n] pad=0` has no element word.
  return at(Tok::Name) && !(peek().text == "pad" && kind(1) == Tok::Assign);
}

ast::TypeExpr Parser::parse_tensor_type() {
  ast::TypeExpr t;
  t.kind = ast::TypeExpr::Kind::Tensor;
  Span start = expect(Tok::LBracket, "'['").span;
  while (!at(Tok::RBracket)) {
    if (!(at(Tok::Name) || at(Tok::Int) || at(Tok::LParen) || at(Tok::Star)))
      fail_expected("an axis (a name, a size, a group or *s) or ']'");
    t.axes.push_back(parse_axis(/*allow_star=*/true, /*allow_split=*/true));
  }
  advance();  // ]
  if (can_take_elem()) {
    const Token& e = advance();
    t.elem = e.text;
    t.elem_span = e.span;
    // `[L] Layer[F F]`: a stacked model that takes dims (its `[` touching
    // the name, as in `Layer[F F]` alone), kept as the one Named type in
    // the tensor type's elems (which otherwise only a tuple has).
    if (at(Tok::LBracket) && peek().span.begin == e.span.end) {
      ast::TypeExpr m;
      m.kind = ast::TypeExpr::Kind::Named;
      m.name = e.text;
      advance();
      m.has_args = true;
      while (!at(Tok::RBracket)) {
        m.args.push_back(
            parse_axis(/*allow_star=*/false, /*allow_split=*/true));
        accept(Tok::Comma);
      }
      expect(Tok::RBracket, "']' to close the type arguments");
      m.span = Span::cover(e.span, last_span());
      t.elem_span = m.span;
      t.elems.push_back(std::move(m));
    }
    // `[L] Block f64`, `[L] Layer[F F] T`: the stacked model's dtype.
    if (can_take_elem()) {
      if (t.elems.empty()) {
        ast::TypeExpr m;
        m.kind = ast::TypeExpr::Kind::Named;
        m.name = e.text;
        m.span = e.span;
        t.elems.push_back(std::move(m));
      }
      parse_model_dtype(t.elems[0]);
      t.elems[0].span = Span::cover(t.elems[0].span, last_span());
      t.elem_span = t.elems[0].span;
    }
  }
  t.span = cover_from(start);
  return t;
}

std::vector<std::string> Parser::parse_split(Span& end) {
  std::vector<std::string> out;
  if (at(Tok::Name)) {
    const Token& n = advance();
    out.push_back(n.text);
    end = n.span;
    return out;
  }
  if (at(Tok::LParen)) {
    advance();
    while (at(Tok::Name)) {
      out.push_back(advance().text);
      accept(Tok::Comma);
    }
    if (out.empty()) fail_expected("a mesh axis name");
    end = expect(Tok::RParen, "')' to close the mesh axes").span;
    return out;
  }
  fail_expected("a mesh axis name after '/'");
}

ast::AxisExpr Parser::parse_axis(bool allow_star, bool allow_split) {
  DepthGuard g(*this);
  ast::AxisExpr a;
  Span start = here();
  if (allow_star && at(Tok::Star)) {
    advance();
    const Token& n = expect(Tok::Name, "a name after '*' (like *s)");
    a.kind = ast::AxisExpr::Kind::Star;
    a.name = n.text;
  } else if (at(Tok::Name)) {
    a.kind = ast::AxisExpr::Kind::Name;
    a.name = advance().text;
    // `S/2`: a dim divided by a literal (Note [Divided dims] in
    // ops/core/type.h); `S/x` with a name is a split over mesh axis x.
    if (at(Tok::Slash) && kind(1) == Tok::Int) {
      advance();
      const Token& n = advance();
      auto v = parse_int_text(n.text);
      if (!v || *v < 1)
        fail(Code::E0101, n.span, "a divisor must be a positive int", "here");
      a.divisor = *v;
    }
  } else if (at(Tok::Int)) {
    const Token& n = advance();
    a.kind = ast::AxisExpr::Kind::Literal;
    auto v = parse_int_text(n.text);
    if (!v) fail(Code::E0101, n.span, "axis size too large", "does not fit");
    a.value = *v;
  } else if (at(Tok::LParen)) {
    if (in_value_type_ && pos() > 0) {
      // `[f(x)]` is a list holding a call, not a type.
      const Token& open = peek();
      Tok before = prev_kind();
      if ((before == Tok::Name || before == Tok::RParen ||
           before == Tok::RBracket) &&
          last_span().end == open.span.begin)
        fail_expected("an axis");
    }
    advance();
    a.kind = ast::AxisExpr::Kind::Group;
    while (!at(Tok::RParen)) {
      if (!(at(Tok::Name) || at(Tok::Int) || at(Tok::LParen)))
        fail_expected("an axis or ')' in the group");
      a.items.push_back(parse_axis(/*allow_star=*/false, allow_split));
    }
    if (a.items.empty())
      fail(Code::E0101,
           cover_from(start),
           "an empty axis group",
           "a group needs at least one axis");
    advance();  // )
  } else {
    fail_expected("an axis (a name, a size or a group)");
  }
  if (allow_split && at(Tok::Slash)) {
    advance();
    Span end;
    a.split = parse_split(end);
  }
  a.span = cover_from(start);
  return a;
}

}  // namespace ss::parse::detail
