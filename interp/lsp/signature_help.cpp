// textDocument/signatureHelp (features.h). Asked while a call is being
// typed, when the text rarely parses (`f(a, ` with its `)` not yet
// written), so the call around the cursor is found in the tokens, not the
// tree: the innermost open `(` that follows a name, the commas at its
// depth before the cursor, a `name=` starting the current argument. The
// callee is a fn of the last checked program, or a builtin of the op table.
#include "diag/utf16.h"
#include "interp/lex/lexer.h"
#include "interp/lsp/describe.h"
#include "interp/lsp/features.h"
#include "ops/registry/registry.h"

namespace ss::lsp {

namespace {

using lex::Tok;
using nlohmann::json;

struct CallAt {
  std::string callee;
  bool method = false;  // `x.f(...)`: x is the first parameter
  size_t commas = 0;
  std::string keyword;  // the current argument's `name=`
};

std::optional<CallAt> call_at(const std::string& text, uint32_t offset) {
  diag::SourceMap sm;
  diag::Diagnostics diags;
  const uint32_t f = sm.add("d.ss", text);
  const lex::Tokens toks = lex::lex(sm, f, diags);
  struct Open {
    size_t at;  // the bracket's token
    Tok kind;
    size_t commas = 0;
    size_t arg_start = 0;  // the current argument's first token
  };
  std::vector<Open> open;
  size_t end = 0;
  for (; end < toks.size() && toks[end].span.begin < offset; ++end) {
    const Tok t = toks[end].kind;
    if (t == Tok::LParen || t == Tok::LBracket || t == Tok::LBrace)
      open.push_back({end, t, 0, end + 1});
    else if ((t == Tok::RParen || t == Tok::RBracket || t == Tok::RBrace) &&
             !open.empty())
      open.pop_back();
    else if (t == Tok::Comma && !open.empty()) {
      ++open.back().commas;
      open.back().arg_start = end + 1;
    }
  }
  for (size_t k = open.size(); k-- > 0;) {
    const Open& o = open[k];
    if (o.kind != Tok::LParen || o.at == 0 || toks[o.at - 1].kind != Tok::Name)
      continue;  // a grouping, a list, an index: look further out
    CallAt c;
    c.callee = toks[o.at - 1].text;
    c.method = o.at >= 2 && toks[o.at - 2].kind == Tok::Dot;
    c.commas = o.commas;
    if (o.arg_start + 1 < end && toks[o.arg_start].kind == Tok::Name &&
        toks[o.arg_start + 1].kind == Tok::Assign)
      c.keyword = toks[o.arg_start].text;
    return c;
  }
  return std::nullopt;
}

// The parameters of [label] (`fn f(p1: T, mut p2: U) -> R`, `f(x, [over=])`):
// each one's [start, end) in UTF-16 units, and its name.
std::vector<std::pair<std::pair<uint32_t, uint32_t>, std::string>> params_of(
    const std::string& label) {
  std::vector<std::pair<std::pair<uint32_t, uint32_t>, std::string>> out;
  size_t open = label.find('(');
  if (open == std::string::npos) return out;
  int depth = 0;
  size_t start = open + 1;
  auto add = [&](size_t a, size_t b) {
    while (a < b && label[a] == ' ') ++a;
    if (a >= b) return;
    // `x: [b D]`, `mut m: Mlp`, `[over=]`, `mut opt`, `...`.
    std::string name = label.substr(a, b - a);
    if (!name.empty() && name[0] == '[') name = name.substr(1);
    if (name.rfind("mut ", 0) == 0) name = name.substr(4);
    name = name.substr(0, name.find_first_of(":=]"));
    while (!name.empty() && name.back() == ' ') name.pop_back();
    const std::string_view v(label);
    out.push_back({{diag::utf16_length(v.substr(0, a)),
                    diag::utf16_length(v.substr(0, b))},
                   name});
  };
  for (size_t i = open + 1; i < label.size(); ++i) {
    const char c = label[i];
    if (c == '(' || c == '[' || c == '{') ++depth;
    if ((c == ')' || c == ']' || c == '}') && depth-- == 0) {
      add(start, i);
      break;
    }
    if (c == ',' && depth == 0) {
      add(start, i);
      start = i + 1;
    }
  }
  return out;
}

}  // namespace

json signature_help(const Analysis* a,
                    const std::string& text,
                    uint32_t offset) {
  std::optional<CallAt> c = call_at(text, offset);
  if (!c) return nullptr;
  std::string label, doc;
  const check::FnInfo* fn = a && a->prog ? a->prog->fn(c->callee) : nullptr;
  if (fn && !fn->is_stdlib) {
    label = check::fn_signature(*fn);
  } else if (const ops::OpDef* op = ops::find_op(c->callee)) {
    label = builtin_signature(*op);
    doc = op->summary;
  } else if (fn) {
    label = check::fn_signature(*fn);
  } else {
    return nullptr;
  }
  auto params = params_of(label);
  json sig{{"label", label}, {"parameters", json::array()}};
  if (!doc.empty()) sig["documentation"] = doc;
  for (const auto& [range, name] : params)
    sig["parameters"].push_back({{"label", {range.first, range.second}}});
  size_t active = c->commas + (c->method ? 1 : 0);
  if (!c->keyword.empty())
    for (size_t i = 0; i < params.size(); ++i)
      if (params[i].second == c->keyword) active = i;
  json out{{"signatures", json::array({sig})}, {"activeSignature", 0}};
  if (active < params.size()) out["activeParameter"] = active;
  return out;
}

}  // namespace ss::lsp
