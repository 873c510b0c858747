// textDocument/documentSymbol and workspace/symbol (features.h): the
// declarations of a document's module as the outline editors show, and
// those of every open document matched against a query.
#include <algorithm>
#include <cctype>

#include "diag/render_lsp.h"
#include "interp/lsp/features.h"

namespace ss::lsp {

namespace {

using nlohmann::json;

// LSP's SymbolKind numbers.
constexpr int kNamespace = 3, kClass = 5, kField = 8, kFunction = 12,
              kConstant = 14, kStruct = 23;

// The end of the last statement of [b] (nested blocks included).
uint32_t block_end(const ast::Block& b, uint32_t end) {
  for (const ast::StmtPtr& s : b) {
    end = std::max(end, s->span.end);
    if (s->value) end = std::max(end, s->value->span.end);
    for (const ast::IfBranch& br : s->branches) end = block_end(br.body, end);
    end = block_end(s->body, end);
  }
  return end;
}

json symbol(const diag::SourceMap& sm,
            const std::string& name,
            int kind,
            diag::Span whole,
            diag::Span name_span,
            const std::string& detail = "") {
  json s{{"name", name},
         {"kind", kind},
         {"range", diag::lsp_range(sm, whole)},
         {"selectionRange", diag::lsp_range(sm, name_span)}};
  if (!detail.empty()) s["detail"] = detail;
  return s;
}

// Each declaration of [m] as (a DocumentSymbol, its name).
json module_symbols(const diag::SourceMap& sm,
                    const ast::Module& m,
                    const check::Program& p) {
  std::vector<std::pair<uint32_t, json>> out;  // by position
  for (const ast::DevicesDecl& d : m.devices) {
    std::string name = "devices " + d.kind;
    if (d.has_list) {
      name += "[";
      for (size_t i = 0; i < d.ids.size(); ++i)
        name += (i ? " " : "") + std::to_string(d.ids[i]);
      name += "]";
    }
    out.emplace_back(d.span.begin,
                     symbol(sm, name, kNamespace, d.span, d.kind_span));
  }
  for (const ast::MeshDecl& d : m.meshes)
    out.emplace_back(
        d.span.begin,
        symbol(sm, sm.one_line(d.span), kNamespace, d.span, d.span));
  for (const ast::DimDecl& d : m.dims)
    out.emplace_back(d.span.begin,
                     symbol(sm,
                            d.name,
                            kConstant,
                            d.span,
                            d.name_span,
                            d.value ? "= " + sm.one_line(d.value->span) : ""));
  for (const ast::DataDecl& d : m.datas) {
    json s = symbol(sm, d.name, kStruct, d.span, d.name_span, "data");
    s["children"] = json::array();
    for (const ast::DataField& f : d.fields)
      s["children"].push_back(symbol(
          sm, f.name, kField, f.span, f.name_span, sm.one_line(f.type.span)));
    out.emplace_back(d.span.begin, std::move(s));
  }
  for (const ast::ModelDecl& d : m.models) {
    json s = symbol(sm, d.name, kClass, d.span, d.name_span, "model");
    s["children"] = json::array();
    for (const ast::ModelField& f : d.fields)
      s["children"].push_back(
          symbol(sm,
                 f.name,
                 kField,
                 f.span,
                 f.name_span,
                 (f.buffer ? "buffer " : "") + sm.one_line(f.type.span)));
    out.emplace_back(d.span.begin, std::move(s));
  }
  for (const ast::FnDecl& d : m.fns) {
    diag::Span whole = d.span;
    whole.end = block_end(d.body, whole.end);
    if (d.expr_body) whole.end = std::max(whole.end, d.expr_body->span.end);
    const check::FnInfo* fn = p.fn(d.name);
    out.emplace_back(d.span.begin,
                     symbol(sm,
                            d.name,
                            kFunction,
                            whole,
                            d.name_span,
                            fn ? check::fn_signature(*fn) : ""));
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.first < b.first;
  });
  json list = json::array();
  for (auto& [at, s] : out) list.push_back(std::move(s));
  return list;
}

// [pattern]'s characters appear in [name] in order, ignoring case (the
// fuzzy match editors' symbol pickers use).
bool matches(const std::string& name, const std::string& pattern) {
  size_t i = 0;
  for (char c : name)
    if (i < pattern.size() &&
        std::tolower(static_cast<unsigned char>(c)) ==
            std::tolower(static_cast<unsigned char>(pattern[i])))
      ++i;
  return i == pattern.size();
}

void flatten(const json& symbols,
             const std::string& uri,
             const std::string& container,
             const std::string& query,
             json& out) {
  for (const json& s : symbols) {
    const std::string name = s["name"];
    if (matches(name, query)) {
      json info{{"name", name},
                {"kind", s["kind"]},
                {"location", {{"uri", uri}, {"range", s["range"]}}}};
      if (!container.empty()) info["containerName"] = container;
      out.push_back(std::move(info));
    }
    if (s.contains("children")) flatten(s["children"], uri, name, query, out);
  }
}

}  // namespace

json document_symbols(const Analysis& a) {
  const ast::Module* m = a.module();
  if (!m || !a.prog) return json::array();
  return module_symbols(a.sm, *m, *a.prog);
}

json workspace_symbols(
    const std::vector<std::pair<std::string, const Analysis*>>& docs,
    const std::string& query) {
  json out = json::array();
  for (const auto& [uri, a] : docs)
    if (a) flatten(document_symbols(*a), uri, "", query, out);
  return out;
}

}  // namespace ss::lsp
