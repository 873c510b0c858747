// Top-level declarations: import, devices, mesh, dim, data, model, fn.

#include "interp/parse/parser_impl.h"

namespace ss::parse::detail {

namespace {

bool is_decl_word(const std::string& w) {
  return w == "devices" || w == "mesh" || w == "dim" || w == "data" ||
         w == "model" || w == "spmd" || w == "extern";
}

}  // namespace

bool Parser::at_decl_start(bool repl) const {
  if (!at_line_start_col0()) return false;
  if (at(Tok::KwFn)) return true;
  if (at(Tok::KwImport)) return !repl || kind(1) == Tok::String;
  if (!at(Tok::Name) || !is_decl_word(peek().text)) return false;
  if (!repl) return true;
  // At the repl `data.take(3)` is a statement: a declaration word must be
  // followed by what its declaration needs.
  const std::string& w = peek().text;
  if (w == "spmd") return kind(1) == Tok::KwFn || kind(1) == Tok::LParen;
  if (w == "extern") return kind(1) == Tok::KwFn;
  return kind(1) == Tok::Name;
}

void Parser::parse_decl(ast::Module& m) {
  if (at(Tok::KwFn)) return parse_fn(m);
  if (at(Tok::KwImport)) return parse_import(m);
  const std::string w = peek().text;
  if (w == "devices") return parse_devices(m);
  if (w == "mesh") return parse_mesh(m);
  if (w == "dim") return parse_dim(m);
  if (w == "data") return parse_data(m);
  if (w == "model") return parse_model(m);
  return parse_fn(m);  // spmd, extern
}

void Parser::parse_import(ast::Module& m) {
  ast::ImportDecl d;
  Span start = advance().span;
  const Token& path =
      expect(Tok::String, "a path string after 'import' (import \"other.ss\")");
  d.path = path.text;
  d.span = cover_from(start);
  end_stmt("the import");
  m.imports.push_back(std::move(d));
}

void Parser::parse_devices(ast::Module& m) {
  ast::DevicesDecl d;
  Span start = advance().span;
  const Token& k = expect(Tok::Name, "a device kind (cpu or cuda)");
  d.kind = k.text;
  d.kind_span = k.span;
  if (accept(Tok::LBracket)) {
    d.has_list = true;
    while (!at(Tok::RBracket)) {
      if (!at(Tok::Int)) fail_expected("a device number or ']'");
      const Token& n = advance();
      auto v = parse_int_text(n.text);
      if (!v) fail(Code::E0101, n.span, "device number too large");
      d.ids.push_back(*v);
      accept(Tok::Comma);
    }
    advance();  // ]
  }
  d.span = cover_from(start);
  end_stmt("the devices line");
  size_t index = m.devices.size();
  m.devices.push_back(std::move(d));
  if (!at(Tok::Indent)) return;
  // Options, one per indented line: `shard params`, `split H`.
  advance();
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
             "an option line is indented more than the others");
      skip_block();
      continue;
    }
    try {
      ast::DeviceOption o;
      Span ostart = here();
      while (at(Tok::Name) || at(Tok::Int)) {
        const Token& w = advance();
        o.words.push_back(w.text);
        o.word_spans.push_back(w.span);
      }
      if (o.words.empty()) fail_expected("a device option (like shard params)");
      o.span = cover_from(ostart);
      end_stmt("the option");
      m.devices[index].options.push_back(std::move(o));
    } catch (const ParseError&) {
      sync_line();
    }
    if (pos() == before) advance();
  }
  accept(Tok::Dedent);
}

void Parser::parse_mesh(ast::Module& m) {
  ast::MeshDecl d;
  Span start = advance().span;
  if (!at(Tok::Name)) fail_expected("a mesh axis like x=4");
  while (at(Tok::Name)) {
    ast::MeshAxisDecl a;
    const Token& n = advance();
    a.name = n.text;
    expect(Tok::Assign, "'=' and a size after the mesh axis name");
    const Token& s = expect(Tok::Int, "the mesh axis's size (an integer)");
    auto v = parse_int_text(s.text);
    if (!v) fail(Code::E0101, s.span, "mesh axis size too large");
    a.size = *v;
    a.span = Span::cover(n.span, s.span);
    d.axes.push_back(std::move(a));
  }
  d.span = cover_from(start);
  end_stmt("the mesh axes");
  m.meshes.push_back(std::move(d));
}

void Parser::parse_dim(ast::Module& m) {
  ast::DimDecl d;
  Span start = advance().span;
  const Token& n = expect(Tok::Name, "the dim's name");
  d.name = n.text;
  d.name_span = n.span;
  expect(Tok::Assign, "'=' and a size after the dim's name");
  d.value = parse_expr();
  d.span = cover_from(start);
  end_stmt("the dim's size");
  m.dims.push_back(std::move(d));
}

namespace {

/// Runs [line] for each line of the indented block after a header's `:`,
/// recovering at the end of each line. Returns false when no block follows.
template <typename F>
void field_block(Parser& p, F line) {
  if (!p.accept(Tok::Newline) && !p.at(Tok::Eof))
    p.fail_expected("end of line after ':'");
  if (!p.at(Tok::Indent)) {
    p.report(Code::E0102,
             p.here(),
             "expected an indented block after ':'",
             "the fields should start here, indented");
    return;
  }
  p.advance();
  while (!p.at(Tok::Dedent) && !p.at(Tok::Eof)) {
    size_t before = p.pos();
    if (p.at(Tok::Newline)) {
      p.advance();
      continue;
    }
    if (p.at(Tok::Indent)) {
      p.report(Code::E0102,
               p.here(),
               "unexpected indent",
               "this line is indented more than the fields");
      p.skip_block();
      continue;
    }
    try {
      line();
    } catch (const ParseError&) {
      p.sync_line();
    }
    if (p.pos() == before) p.advance();
  }
  p.accept(Tok::Dedent);
}

}  // namespace

void Parser::parse_data(ast::Module& m) {
  ast::DataDecl d;
  Span start = advance().span;
  const Token& n = expect(Tok::Name, "the record's name");
  d.name = n.text;
  d.name_span = n.span;
  expect(Tok::Colon, "':' after the record's name");
  d.span = cover_from(start);
  size_t index = m.datas.size();
  m.datas.push_back(std::move(d));
  field_block(*this, [&] {
    ast::DataField f = parse_data_field();
    auto& decl = m.datas[index];
    decl.span = Span::cover(decl.span, f.span);
    decl.fields.push_back(std::move(f));
  });
}

ast::DataField Parser::parse_data_field() {
  ast::DataField f;
  Span start = here();
  const Token& n = expect(Tok::Name, "a field name");
  f.name = n.text;
  f.name_span = n.span;
  expect(Tok::Colon, "':' and a type after the field name");
  f.type = parse_type();
  while (true) {
    if (at(Tok::KwIn) && !f.domain) {
      ast::Domain dom;
      Span ds = advance().span;
      dom.lo = parse_expr();
      if (accept(Tok::DotDotEq))
        dom.inclusive = true;
      else
        expect(Tok::DotDot, "'..' or '..=' in the domain (in 0..C)");
      dom.hi = parse_expr();
      dom.span = cover_from(ds);
      f.domain = std::move(dom);
    } else if (at_name("pad") && kind(1) == Tok::Assign && !f.pad) {
      advance();
      advance();
      f.pad = parse_expr();
    } else {
      break;
    }
  }
  f.span = cover_from(start);
  end_stmt("the field");
  return f;
}

void Parser::parse_model(ast::Module& m) {
  ast::ModelDecl d;
  Span start = advance().span;
  const Token& n = expect(Tok::Name, "the model's name");
  d.name = n.text;
  d.name_span = n.span;
  if (accept(Tok::LBracket)) {
    while (at(Tok::Name)) {
      const Token& p = advance();
      d.dim_params.push_back({p.span, p.text});
      accept(Tok::Comma);
    }
    expect(Tok::RBracket, "']' after the model's dim parameters");
  }
  if (at(Tok::Name)) {  // `model Linear[I O] T:`, generic over its dtype
    const Token& t = advance();
    d.dtype_param = ast::NameTarget{t.span, t.text};
  }
  expect(Tok::Colon, "':' after the model's name");
  d.span = cover_from(start);
  size_t index = m.models.size();
  m.models.push_back(std::move(d));
  field_block(*this, [&] {
    ast::ModelField f = parse_model_field();
    auto& decl = m.models[index];
    decl.span = Span::cover(decl.span, f.span);
    decl.fields.push_back(std::move(f));
  });
}

ast::ModelField Parser::parse_model_field() {
  ast::ModelField f;
  Span start = here();
  if (at_name("buffer") && kind(1) == Tok::Name) {
    advance();
    f.buffer = true;
  }
  const Token& n = expect(Tok::Name, "a field name");
  f.name = n.text;
  f.name_span = n.span;
  expect(Tok::Colon, "':' and a type after the field name");
  f.type = parse_type();
  if (accept(Tok::Assign)) f.init = parse_expr();
  f.span = cover_from(start);
  end_stmt("the field");
  return f;
}

ast::Param Parser::parse_param() {
  ast::Param p;
  Span start = here();
  p.mut = accept(Tok::KwMut);
  const Token& n = expect(Tok::Name, "a parameter name");
  p.name = n.text;
  p.name_span = n.span;
  expect(Tok::Colon, "':' and a type after the parameter name");
  p.type = parse_type();
  if (accept(Tok::Assign)) p.default_value = parse_expr();
  p.span = cover_from(start);
  return p;
}

void Parser::parse_fn(ast::Module& m) {
  ast::FnDecl f;
  Span start = here();
  if (at_name("spmd")) {
    advance();
    f.is_spmd = true;
    if (accept(Tok::LParen)) {
      const Token& k = expect(Tok::Name, "'check'");
      if (k.text != "check")
        fail(Code::E0101,
             k.span,
             "expected 'check', found name '" + k.text + "'",
             "spmd takes only check=true or check=false");
      expect(Tok::Assign, "'=' after 'check'");
      if (at(Tok::KwTrue) || at(Tok::KwFalse))
        f.spmd_check = advance().kind == Tok::KwTrue;
      else
        fail_expected("true or false");
      expect(Tok::RParen, "')' after check=...");
    }
  } else if (at_name("extern")) {
    advance();
    f.is_extern = true;
  }
  expect(Tok::KwFn, "'fn'");
  const Token& n = expect(Tok::Name, "the function's name");
  f.name = n.text;
  f.name_span = n.span;
  expect(Tok::LParen, "'(' after the function's name");
  while (!at(Tok::RParen)) {
    f.params.push_back(parse_param());
    if (!accept(Tok::Comma)) break;
  }
  expect(Tok::RParen, "')' after the parameters");
  if (accept(Tok::Arrow)) f.result = parse_type();

  if (f.is_extern) {
    expect(Tok::Assign,
           "'= \"module.function\"' after an extern fn's signature");
    const Token& s =
        expect(Tok::String, "a string naming the host function (\"nn.f\")");
    f.extern_target = s.text;
    f.extern_span = s.span;
    f.span = cover_from(start);
    end_stmt("the extern fn");
  } else if (accept(Tok::Colon)) {
    f.span = cover_from(start);
    f.body = parse_block();
  } else if (accept(Tok::Assign)) {
    f.expr_body = parse_expr();
    f.span = cover_from(start);
    end_stmt("the function's expression");
  } else {
    fail_expected("':' or '=' after the function's signature");
  }
  m.fns.push_back(std::move(f));
}

}  // namespace ss::parse::detail
