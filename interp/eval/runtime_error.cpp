#include "interp/eval/runtime_error.h"

namespace ss::eval {

std::string render_runtime_error(const RuntimeError& e,
                                 const diag::SourceMap& sm) {
  std::string out;
  auto loc = [&](diag::Span s) {
    if (s.file >= sm.size()) return std::string("<unknown>");
    diag::LineCol lc = sm.line_col(s.file, s.begin);
    return sm.file(s.file).path + ":" + std::to_string(lc.line) + ":" +
           std::to_string(lc.column);
  };
  out += loc(e.span()) + ": " + e.kind() + ": " + e.message() + "\n";
  if (e.span().file < sm.size()) {
    diag::LineCol lc = sm.line_col(e.span().file, e.span().begin);
    std::string num = std::to_string(lc.line);
    std::string gutter(num.size() + 1, ' ');
    std::string_view line = sm.line_text(e.span().file, lc.line);
    size_t start = std::min<size_t>(lc.column - 1, line.size());
    size_t len =
        e.span().end > e.span().begin ? e.span().end - e.span().begin : 1;
    len = std::max<size_t>(1, std::min(len, line.size() - start));
    out += gutter + "|\n" + num + " | " + std::string(line) + "\n" + gutter +
           "| " + std::string(start, ' ') + std::string(len, '^') + "\n";
  }
  for (const std::string& n : e.notes())
    out += n.rfind("help: ", 0) == 0 ? "   = " + n + "\n"
                                     : "   = note: " + n + "\n";
  if (!e.stack().empty()) {
    out += "   = .ss stack (most recent call last):\n";
    // A recursion's repeated frames are one line and a count, as Python
    // prints them (2,000 frames of `f, called at a.ss:4:12` help nobody).
    const std::vector<StackEntry>& st = e.stack();
    for (size_t i = 0; i < st.size();) {
      const StackEntry& s = st[i];
      size_t j = i + 1;
      while (j < st.size() && st[j].fn == s.fn && st[j].site == s.site) ++j;
      out += "       " + s.fn +
             (s.site.file < sm.size() ? ", called at " + loc(s.site) : "") +
             "\n";
      if (j - i > 1)
        out += "       [the line above repeated " + std::to_string(j - i - 1) +
               " more times]\n";
      i = j;
    }
  }
  return out;
}

}  // namespace ss::eval
