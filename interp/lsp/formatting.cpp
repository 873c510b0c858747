// textDocument/formatting and /rangeFormatting: `ss fmt`'s layout as the
// few line edits that make it (interp/fmt/edits.h, Note [Edits by
// declaration]). The client's FormattingOptions (tabSize, insertSpaces)
// are not asked: there is one layout, as gofmt's and black's servers have.
#include "interp/lsp/formatting.h"

#include "diag/utf16.h"
#include "interp/fmt/edits.h"

namespace ss::lsp {

namespace {

using nlohmann::json;

// Line [line], column 0; past the last line of a text that does not end
// in a newline, the end of that line.
json line_start(const std::string& text, uint32_t line) {
  uint32_t lines = 0;
  size_t last = 0;
  for (size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n') {
      ++lines;
      last = i + 1;
    }
  if (line > lines) line = lines;
  if (line == lines && last < text.size())
    return {
        {"line", lines},
        {"character", diag::utf16_length(std::string_view(text).substr(last))}};
  return {{"line", line}, {"character", 0}};
}

}  // namespace

json formatting(const std::string& text,
                std::optional<std::pair<uint32_t, uint32_t>> lines) {
  json edits = json::array();
  for (const fmt::LineEdit& e : fmt::formatting_edits(text, {}, lines))
    edits.push_back({{"range",
                      {{"start", line_start(text, e.first)},
                       {"end", line_start(text, e.end)}}},
                     {"newText", e.text}});
  return edits;
}

}  // namespace ss::lsp
