// Note [Edits by declaration]
// An editor wants the few lines that change, not the whole document, so
// that its cursor, marks and undo stay where they were; and a range
// formatting request wants the lines it selected laid out, not the rest.
// The formatter keeps every token (Note [One layout]), so the top-level
// logical lines of the text and of its layout pair off one to one, and
// each starts a chunk (the declaration and everything up to the next
// one's first token) in both. A chunk whose layout differs is one edit,
// trimmed to the lines that differ; a range takes the chunks that touch
// it, whole, since a declaration's layout is decided all together.
#include "interp/fmt/edits.h"

#include <algorithm>

#include "interp/lex/lexer.h"

namespace ss::fmt {

namespace {

using lex::Tok;

// Each line of [text] with its newline.
std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < text.size()) {
    size_t nl = text.find('\n', at);
    size_t end = nl == std::string::npos ? text.size() : nl + 1;
    out.push_back(text.substr(at, end - at));
    at = end;
  }
  return out;
}

// Where each top-level declaration's chunk starts (0-based lines): the line
// after the previous one's last token, so that the blank lines and comments
// above a declaration go with it; the first at line 0.
std::vector<uint32_t> chunk_starts(const std::string& text) {
  diag::SourceMap sm;
  diag::Diagnostics diags;
  uint32_t f = sm.add("t.ss", text);
  lex::Tokens toks = lex::lex(sm, f, diags);
  std::vector<uint32_t> out;
  int depth = 0;
  bool line_start = true;
  uint32_t last_line = 0;  // of the last token seen (0-based)
  for (const lex::Token& t : toks) {
    if (t.kind == Tok::Indent) ++depth;
    if (t.kind == Tok::Dedent) --depth;
    if (t.kind == Tok::Newline) line_start = true;
    if (t.kind == Tok::Newline || t.kind == Tok::Indent ||
        t.kind == Tok::Dedent || t.kind == Tok::Eof)
      continue;
    if (line_start && depth == 0)
      out.push_back(out.empty() ? 0 : last_line + 1);
    line_start = false;
    last_line = sm.line_col(f, std::max(t.span.begin, t.span.end - 1)).line - 1;
  }
  return out;
}

// Lines [a, b) of [from] replaced by lines [c, d) of [to], less the lines
// they share at either end; nothing when they are the same.
void add_edit(const std::vector<std::string>& from,
              size_t a,
              size_t b,
              const std::vector<std::string>& to,
              size_t c,
              size_t d,
              std::vector<LineEdit>& out) {
  while (a < b && c < d && from[a] == to[c]) ++a, ++c;
  while (a < b && c < d && from[b - 1] == to[d - 1]) --b, --d;
  if (a == b && c == d) return;
  LineEdit e;
  e.first = static_cast<uint32_t>(a);
  e.end = static_cast<uint32_t>(b);
  for (size_t i = c; i < d; ++i) e.text += to[i];
  out.push_back(std::move(e));
}

}  // namespace

std::vector<LineEdit> formatting_edits(
    const std::string& text,
    const Options& options,
    std::optional<std::pair<uint32_t, uint32_t>> lines) {
  diag::SourceMap sm;
  diag::Diagnostics diags;
  std::optional<std::string> laid =
      format_text("t.ss", text, sm, diags, options);
  std::vector<LineEdit> out;
  if (!laid || *laid == text) return out;
  // A byte order mark adds no line: the chunks' lines are the same.
  const std::string body =
      text.rfind("\xEF\xBB\xBF", 0) == 0 ? text.substr(3) : text;
  std::vector<std::string> from = lines_of(text), to = lines_of(*laid);
  std::vector<uint32_t> a = chunk_starts(body), b = chunk_starts(*laid);
  if (a.size() != b.size() || a.empty()) {
    add_edit(from, 0, from.size(), to, 0, to.size(), out);
    return out;
  }
  for (size_t k = 0; k < a.size(); ++k) {
    size_t fa = a[k], fb = k + 1 == a.size() ? from.size() : a[k + 1];
    size_t ta = b[k], tb = k + 1 == b.size() ? to.size() : b[k + 1];
    if (lines && (fb <= lines->first || fa > lines->second)) continue;
    add_edit(from, fa, fb, to, ta, tb, out);
  }
  return out;
}

}  // namespace ss::fmt
