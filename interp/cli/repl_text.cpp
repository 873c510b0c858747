#include "interp/cli/repl_text.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <sstream>
#include <utility>

#include "interp/lex/lexer.h"
#include "interp/parse/parser.h"

namespace ss::cli {

std::vector<ReplDecl> split_declarations(const std::string& text,
                                         size_t origin,
                                         uint32_t line) {
  std::string whole = text;
  if (whole.empty() || whole.back() != '\n') whole += '\n';
  diag::SourceMap sm;
  diag::Diagnostics diags;
  uint32_t f = sm.add("<input>", whole);
  ast::Module m = parse::parse(lex::lex(sm, f, diags), f, diags);
  if (!diags.empty()) return {{"", whole, origin, line}};
  std::vector<std::pair<uint32_t, std::string>> starts;  // offset, key
  for (const auto& d : m.devices) starts.push_back({d.span.begin, "devices"});
  for (const auto& d : m.meshes) starts.push_back({d.span.begin, "mesh"});
  for (const auto& d : m.imports)
    starts.push_back({d.span.begin, "import " + d.path});
  for (const auto& d : m.dims) starts.push_back({d.span.begin, d.name});
  for (const auto& d : m.datas) starts.push_back({d.span.begin, d.name});
  for (const auto& d : m.models) starts.push_back({d.span.begin, d.name});
  for (const auto& d : m.fns) starts.push_back({d.span.begin, d.name});
  if (starts.empty()) return {{"", whole, origin, line}};
  std::sort(starts.begin(), starts.end());
  // Each declaration owns whole lines: from its line's start (`spmd fn`
  // and `extern fn` spans may start after a word) to the next one's.
  for (auto& [at, key] : starts)
    at = sm.file(f).line_starts[sm.line_col(f, at).line - 1];
  starts.front().first = 0;
  std::vector<ReplDecl> out;
  for (size_t i = 0; i < starts.size(); ++i) {
    uint32_t b = starts[i].first;
    uint32_t e = i + 1 < starts.size() ? starts[i + 1].first
                                       : static_cast<uint32_t>(whole.size());
    out.push_back({starts[i].second,
                   whole.substr(b, e - b),
                   origin,
                   line + sm.line_col(f, b).line - 1});
  }
  return out;
}

void ReplText::generated(const std::string& text) {
  std::istringstream in(text);
  std::string l;
  while (std::getline(in, l)) {
    text_ += l + "\n";
    lines_.push_back({SIZE_MAX, 0, 0});
  }
}

void ReplText::add(const std::string& text,
                   size_t origin,
                   uint32_t line,
                   const std::string& pad,
                   uint32_t first_column) {
  std::istringstream in(text);
  std::string l;
  for (uint32_t k = 0; std::getline(in, l); ++k) {
    text_ += pad + l + "\n";
    int32_t shift = int32_t(pad.size());
    if (k == 0) shift -= int32_t(first_column) - 1;
    lines_.push_back({origin, line + k, shift});
  }
}

devices::protocol::SessionText ReplText::session(
    const std::vector<ReplOrigin>& origins) const {
  devices::protocol::SessionText t;
  t.text = text_;
  std::map<size_t, uint32_t> ids;  // origin -> its index in t.files
  for (const Line& l : lines_) {
    diag::LineOrigin& o = t.lines.emplace_back();
    if (l.origin >= origins.size()) continue;  // generated
    auto it = ids.find(l.origin);
    if (it == ids.end()) {
      it = ids.emplace(l.origin, uint32_t(t.files.size())).first;
      t.files.push_back({origins[l.origin].path, origins[l.origin].text});
    }
    o = {it->second, l.line, l.shift};
  }
  return t;
}

}  // namespace ss::cli
