// textDocument/completion (features.h).
#include <cctype>
#include <string_view>

#include "interp/lsp/describe.h"
#include "interp/lsp/features.h"
#include "interp/lsp/locate.h"
#include "ops/registry/registry.h"

namespace ss::lsp {

namespace {

using nlohmann::json;

// LSP's CompletionItemKind values used here.
constexpr int kFunction = 3, kField = 5, kVariable = 6, kClass = 7,
              kKeyword = 14, kConstant = 21, kStruct = 22;

bool name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

json item(const std::string& label,
          int kind,
          const std::string& detail,
          const std::string& doc = "") {
  json j{{"label", label}, {"kind", kind}};
  if (!detail.empty()) j["detail"] = detail;
  if (!doc.empty()) j["documentation"] = doc;
  return j;
}

// The names of `a.b.` before [offset] (after the dot), outermost first;
// empty when the cursor does not follow a dot.
std::vector<std::string> receiver(std::string_view text, size_t offset) {
  size_t i = offset;
  while (i > 0 && name_char(text[i - 1])) --i;  // the field being typed
  std::vector<std::string> names;
  while (i > 0 && text[i - 1] == '.') {
    size_t end = i - 1, b = end;
    while (b > 0 && name_char(text[b - 1])) --b;
    if (b == end) return {};  // `(x).`, `]`: not a plain name chain
    names.insert(names.begin(), std::string(text.substr(b, end - b)));
    i = b;
  }
  return names;
}

// The fields of a value of type [t].
void fields_of(const types::Type& t, json& items) {
  const auto add = [&](const std::vector<types::FieldInfo>& fs) {
    for (const types::FieldInfo& f : fs)
      items.push_back(item(f.name, kField, f.type.str()));
  };
  if (t.kind == types::Type::Kind::Model && t.model) {
    for (const types::FieldInfo& f : t.model->fields)
      items.push_back(
          item(f.name, kField, types::model_field_type(t, f).str()));
  } else if (t.record) {
    add(t.record->fields);
  }
}

// The type of [names] (a local or param of [fn], then fields).
std::optional<types::Type> chain_type(const check::FnInfo& fn,
                                      const std::vector<std::string>& names) {
  std::optional<types::Type> t;
  for (const check::ParamInfo& p : fn.params)
    if (p.name == names[0]) t = p.type;
  for (const auto& [n, lt] : fn.locals)
    if (n == names[0]) t = lt;
  for (size_t k = 1; t && k < names.size(); ++k) {
    const types::FieldInfo* f = nullptr;
    if (t->kind == types::Type::Kind::Model && t->model)
      f = t->model->field(names[k]);
    else if (t->record)
      f = t->record->field(names[k]);
    if (!f) return std::nullopt;
    t = t->kind == types::Type::Kind::Model ? types::model_field_type(*t, *f)
                                            : f->type;
  }
  return t;
}

void keywords(json& items) {
#define TOK(e, s)                                \
  if (std::string_view(#e).substr(0, 2) == "Kw") \
    items.push_back(item(s, kKeyword, ""));
#include "interp/lex/tokens.def"
#undef TOK
}

void globals(const Analysis& a, uint32_t offset, json& items) {
  for (const ops::OpDef* op : ops::all_ops())
    items.push_back(
        item(op->name, kFunction, builtin_signature(*op), op->summary));
  if (!a.prog) return;
  const check::Program& p = *a.prog;
  for (const auto& [name, fn] : p.fns())
    if (!fn.is_stdlib)
      items.push_back(item(name, kFunction, check::fn_signature(fn)));
  for (const ast::Module& m : p.modules()) {
    for (const ast::ModelDecl& d : m.models)
      if (const types::ModelInfo* mi = p.model(d.name))
        items.push_back(item(d.name, kClass, model_text(*mi)));
    for (const ast::DataDecl& d : m.datas)
      if (const types::RecordInfo* r = p.record(d.name))
        items.push_back(item(d.name, kStruct, record_text(*r)));
  }
  for (const auto& [name, size] : p.dims())
    items.push_back(
        item(name, kConstant, "dim " + name + " = " + std::to_string(size)));
  if (const check::FnInfo* fn = fn_around(a, offset)) {
    for (const check::ParamInfo& pi : fn->params)
      items.push_back(item(pi.name, kVariable, pi.type.str()));
    for (const auto& [n, t] : fn->locals)
      items.push_back(item(n, kVariable, t.str()));
  }
}

}  // namespace

json completion(const Analysis* a, const std::string& text, uint32_t offset) {
  json items = json::array();
  offset = std::min<uint32_t>(offset, static_cast<uint32_t>(text.size()));
  // The fn around the cursor is looked up in [a] by line: [a] may be the
  // last analysis with a program, and the text typed since moves bytes,
  // rarely the fn's header line.
  uint32_t at = 0;
  if (a && a->prog) {
    uint32_t line = 0;
    for (uint32_t i = 0; i < offset; ++i) line += text[i] == '\n';
    at = a->offset(line, 0);
  }
  std::vector<std::string> names = receiver(text, offset);
  if (!names.empty()) {
    if (a && a->prog)
      if (const check::FnInfo* fn = fn_around(*a, at))
        if (auto t = chain_type(*fn, names)) fields_of(*t, items);
  } else {
    if (a) globals(*a, at, items);
    keywords(items);
  }
  return {{"isIncomplete", false}, {"items", items}};
}

}  // namespace ss::lsp
