// The terminal printer: the format of ../shared/spec/errors.md.
#include <algorithm>
#include <string>

#include "diag/diagnostic.h"

namespace ss::diag {

namespace {

std::string location(const SourceMap& sm, Span s) {
  if (s.file >= sm.size()) return "<unknown>";
  LineCol lc = sm.line_col(s.file, s.begin);
  return sm.file(s.file).path + ":" + std::to_string(lc.line) + ":" +
         std::to_string(lc.column);
}

}  // namespace

std::string render_terminal(const Diagnostic& d, const SourceMap& sm) {
  std::string out = location(sm, d.span) + ": error[" + code_name(d.code) +
                    "]: " + d.message + "\n";
  if (d.span.file < sm.size()) {
    LineCol lc = sm.line_col(d.span.file, d.span.begin);
    std::string_view line = sm.line_text(d.span.file, lc.line);
    std::string num = std::to_string(lc.line);
    std::string gutter(num.size() + 1, ' ');
    // Carets cover the span, cut at the end of its first line.
    size_t start = lc.column - 1;
    size_t len = d.span.end > d.span.begin ? d.span.end - d.span.begin : 1;
    if (start > line.size()) start = line.size();
    len = std::max<size_t>(1, std::min(len, line.size() - start));
    out += gutter + "|\n";
    out += num + " | " + std::string(line) + "\n";
    out += gutter + "| " + std::string(start, ' ') + std::string(len, '^');
    if (!d.label.empty()) out += " " + d.label;
    out += "\n";
  }
  for (const Note& n : d.notes) {
    out += std::string(
        std::to_string(d.span.file < sm.size()
                           ? sm.line_col(d.span.file, d.span.begin).line
                           : 1)
                .size() +
            1,
        ' ');
    out += n.kind == Note::Kind::Help ? "= help: " : "= note: ";
    out += n.message;
    if (n.span) out += " (at " + location(sm, *n.span) + ")";
    out += "\n";
  }
  return out;
}

std::string render_terminal(const Diagnostics& ds, const SourceMap& sm) {
  std::string out;
  for (const Diagnostic& d : ds.list()) out += render_terminal(d, sm);
  return out;
}

}  // namespace ss::diag
