// The LSP printer (render_lsp.h).
#include "diag/render_lsp.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "diag/utf16.h"

namespace ss::diag {

nlohmann::json lsp_position(const SourceMap& sm,
                            uint32_t file,
                            uint32_t offset) {
  const SourceFile& f = sm.file(file);
  offset = std::min<uint32_t>(offset, static_cast<uint32_t>(f.text.size()));
  LineCol lc = sm.line_col(file, offset);
  std::string_view line = sm.line_text(file, lc.line);
  uint32_t col =
      std::min<uint32_t>(lc.column - 1, static_cast<uint32_t>(line.size()));
  return {{"line", lc.line - 1},
          {"character", utf16_length(line.substr(0, col))}};
}

nlohmann::json lsp_range(const SourceMap& sm, Span s) {
  return {{"start", lsp_position(sm, s.file, s.begin)},
          {"end", lsp_position(sm, s.file, std::max(s.begin, s.end))}};
}

namespace {

nlohmann::json to_lsp(const Diagnostic& d,
                      const SourceMap& sm,
                      bool here,
                      const UriOf& uri) {
  nlohmann::json j;
  if (here) {
    j["range"] = lsp_range(sm, d.span);
  } else {
    nlohmann::json zero{{"line", 0}, {"character", 0}};
    j["range"] = {{"start", zero}, {"end", zero}};
  }
  j["severity"] = 1;  // Error
  j["source"] = "ss";
  j["code"] = d.kind.empty() ? code_name(d.code) : d.kind;
  std::string message = d.message;
  // A diagnostic shown away from its place says where it is.
  if (!here && d.located && d.span.file < sm.size())
    message = sm.location(d.span) + ": " + message;
  nlohmann::json related = nlohmann::json::array();
  for (const Note& n : d.notes) {
    std::string where =
        n.span && n.span->file < sm.size() ? uri(n.span->file) : std::string();
    if (n.kind == Note::Kind::Note && !where.empty()) {
      related.push_back(
          {{"location", {{"uri", where}, {"range", lsp_range(sm, *n.span)}}},
           {"message", n.message}});
      continue;
    }
    message += (n.kind == Note::Kind::Help ? "\nhelp: " : "\nnote: ");
    message += n.message;
  }
  j["message"] = message;
  if (!related.empty()) j["relatedInformation"] = related;
  return j;
}

}  // namespace

std::map<uint32_t, nlohmann::json> render_lsp(const Diagnostics& ds,
                                              const SourceMap& sm,
                                              uint32_t fallback,
                                              const UriOf& uri) {
  std::map<uint32_t, nlohmann::json> out;
  out[fallback] = nlohmann::json::array();
  for (const Diagnostic& d : ds.list()) {
    bool here =
        d.located && d.span.file < sm.size() && !uri(d.span.file).empty();
    uint32_t file = here ? d.span.file : fallback;
    out.try_emplace(file, nlohmann::json::array())
        .first->second.push_back(to_lsp(d, sm, here, uri));
  }
  return out;
}

}  // namespace ss::diag
