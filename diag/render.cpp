// The terminal printer: the format of ../shared/spec/errors.md, for static
// errors, runtime errors and WorkerErrors alike.
#include <algorithm>
#include <string>

#include "diag/diagnostic.h"

namespace ss::diag {

std::string render_terminal(const Diagnostic& d, const SourceMap& sm) {
  const std::string head =
      d.kind.empty() ? "error[" + std::string(code_name(d.code)) + "]" : d.kind;
  // An error with no `.ss` location (a command-line option, workers that
  // failed to start): `error[E0201]: ...`, `error: WorkerError: ...`.
  std::string out =
      !d.located
          ? (d.kind.empty() ? "" : "error: ") + head + ": " + d.message + "\n"
          : sm.location(d.span) + ": " + head + ": " + d.message + "\n";
  // The gutter is as wide as the line number, plus one: notes and the
  // stack line up under it (errors.md).
  std::string gutter = "  ";
  if (d.located && d.span.file < sm.size()) {
    // What the user wrote, not the repl's wrapping (Note [Source origins]).
    const Span span = sm.origin(d.span);
    LineCol lc = sm.line_col(span.file, span.begin);
    std::string_view line = sm.line_text(span.file, lc.line);
    std::string num = std::to_string(lc.line);
    gutter = std::string(num.size() + 1, ' ');
    // Carets cover the span, cut at the end of its first line.
    size_t start = std::min<size_t>(lc.column - 1, line.size());
    size_t len = span.end > span.begin ? span.end - span.begin : 1;
    len = std::max<size_t>(1, std::min(len, line.size() - start));
    out += gutter + "|\n";
    out += num + " | " + std::string(line) + "\n";
    out += gutter + "| " + std::string(start, ' ') + std::string(len, '^');
    if (!d.label.empty()) out += " " + d.label;
    out += "\n";
  }
  for (const Note& n : d.notes) {
    out += gutter + (n.kind == Note::Kind::Help ? "= help: " : "= note: ");
    out += n.message;
    if (n.span) out += " (at " + sm.location(*n.span) + ")";
    out += "\n";
  }
  if (!d.stack.empty()) {
    out += gutter + "= .ss stack (most recent call last):\n";
    // A recursion's repeated frames are one line and a count, as Python
    // prints them (2,000 frames of `f, called at a.ss:4:12` help nobody).
    const std::vector<Frame>& st = d.stack;
    for (size_t i = 0; i < st.size();) {
      const Frame& f = st[i];
      size_t j = i + 1;
      while (j < st.size() && st[j].fn == f.fn && st[j].site == f.site) ++j;
      out += gutter + "    " + f.fn +
             (f.site.file < sm.size() ? ", called at " + sm.location(f.site)
                                      : "") +
             "\n";
      if (j - i > 1)
        out += gutter + "    [the line above repeated " +
               std::to_string(j - i - 1) + " more times]\n";
      i = j;
    }
  }
  return out;
}

std::string render_terminal(const Diagnostics& ds, const SourceMap& sm) {
  std::string out;
  for (const Diagnostic& d : ds.list()) out += render_terminal(d, sm);
  return out;
}

std::string render_file_error(const std::string& path,
                              const std::string& message) {
  return path + ": error: " + message + "\n";
}

}  // namespace ss::diag
