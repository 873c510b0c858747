// Note [Source origins]
// The repl checks a text it generates: what the user typed becomes the
// body of a synthetic fn (indented, after a header line), and the session's
// declarations follow, some typed, some read by `:load FILE`. Errors must
// point at what the user wrote, so each generated line records where it
// came from: a line of another file of this map (the repl's transcript, or
// the loaded file) and how many columns were put in front of it. Spans stay
// in the generated file, where the checker and evaluator made them; the
// printers ask origin() and show the origin's path, line, column and text.
#include "diag/source.h"

#include <algorithm>

namespace ss::diag {

uint32_t SourceMap::add(std::string path, std::string text) {
  SourceFile f{std::move(path), std::move(text), {0}, {}};
  for (uint32_t i = 0; i < f.text.size(); ++i)
    if (f.text[i] == '\n') f.line_starts.push_back(i + 1);
  // Not const: set_origin may change it while this map alone holds it.
  files_.push_back(std::make_shared<SourceFile>(std::move(f)));
  return static_cast<uint32_t>(files_.size() - 1);
}

uint32_t SourceMap::add(std::shared_ptr<const SourceFile> f) {
  files_.push_back(std::move(f));
  return static_cast<uint32_t>(files_.size() - 1);
}

LineCol SourceMap::line_col(uint32_t file, uint32_t offset) const {
  const auto& starts = files_.at(file)->line_starts;
  auto it = std::upper_bound(starts.begin(), starts.end(), offset);
  uint32_t line = static_cast<uint32_t>(it - starts.begin());
  return {line, offset - starts[line - 1] + 1};
}

std::string_view SourceMap::line_text(uint32_t file, uint32_t line) const {
  const auto& f = *files_.at(file);
  if (line == 0 || line > f.line_starts.size()) return {};
  uint32_t b = f.line_starts[line - 1];
  uint32_t e = line < f.line_starts.size()
                   ? f.line_starts[line] - 1
                   : static_cast<uint32_t>(f.text.size());
  std::string_view v(f.text);
  v = v.substr(b, e - b);
  if (!v.empty() && v.back() == '\r') v.remove_suffix(1);
  return v;
}

std::string_view SourceMap::text(Span s) const {
  const auto& t = files_.at(s.file)->text;
  if (s.begin >= t.size()) return {};
  return std::string_view(t).substr(s.begin, s.end - s.begin);
}

std::string SourceMap::one_line(Span s) const {
  // A line break and the indentation around it become one space: `ss fmt`
  // breaks long calls, and a message quotes the call on one line. (No
  // string literal holds a raw line break, so none is changed.)
  std::string_view t = text(s);
  std::string out;
  out.reserve(t.size());
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i] == '\n' || t[i] == '\r' ||
        (t[i] == '\\' && i + 1 < t.size() && t[i + 1] == '\n')) {
      while (!out.empty() && (out.back() == ' ' || out.back() == '\t'))
        out.pop_back();
      size_t j = i + 1;
      while (j < t.size() &&
             (t[j] == ' ' || t[j] == '\t' || t[j] == '\n' || t[j] == '\r'))
        ++j;
      const char before = out.empty() ? '(' : out.back();
      const char after = j < t.size() ? t[j] : ')';
      if (before != '(' && before != '[' && after != ')' && after != ']')
        out += ' ';
      i = j - 1;
      continue;
    }
    out += t[i];
  }
  return out;
}

void SourceMap::set_origin(uint32_t file, uint32_t line, LineOrigin origin) {
  std::shared_ptr<const SourceFile>& f = files_.at(file);
  // Copied on write: only the repl's generated files have origins, and
  // they are its own.
  auto own = f.use_count() == 1 ? std::const_pointer_cast<SourceFile>(f)
                                : std::make_shared<SourceFile>(*f);
  auto& origins = own->origins;
  if (origins.size() < line) origins.resize(line);
  origins[line - 1] = origin;
  f = std::move(own);
}

namespace {

// The offset in [to] of column [col] (0-based) of generated [line], placed
// [o.shift] columns right of [to]'s line [o.line]; clamped to that line.
uint32_t mapped_offset(const SourceFile& to, LineOrigin o, int64_t col) {
  uint32_t b = to.line_starts[o.line - 1];
  uint32_t e = o.line < to.line_starts.size()
                   ? to.line_starts[o.line] - 1
                   : static_cast<uint32_t>(to.text.size());
  int64_t at = int64_t(b) + std::max<int64_t>(0, col - o.shift);
  return static_cast<uint32_t>(std::min<int64_t>(at, e));
}

}  // namespace

Span SourceMap::origin(Span s) const {
  if (s.file >= files_.size()) return s;
  const SourceFile& f = *files_[s.file];
  auto origin_of = [&](uint32_t offset, LineCol& lc) -> const LineOrigin* {
    lc = line_col(s.file, std::min<uint32_t>(offset, f.text.size()));
    if (lc.line > f.origins.size()) return nullptr;
    const LineOrigin& o = f.origins[lc.line - 1];
    if (o.file >= files_.size() || o.line == 0 ||
        o.line > files_[o.file]->line_starts.size())
      return nullptr;
    return &o;
  };
  LineCol lb, le;
  const LineOrigin* ob = origin_of(s.begin, lb);
  if (!ob) return s;
  const SourceFile& to = *files_[ob->file];
  Span out{ob->file, mapped_offset(to, *ob, lb.column - 1), 0};
  const LineOrigin* oe = origin_of(s.end, le);
  if (oe && oe->file == ob->file)
    out.end = mapped_offset(to, *oe, le.column - 1);
  else  // the end is in a generated line: stop at the first line's end
    out.end = mapped_offset(to, *ob, INT32_MAX);
  out.end = std::max(out.end, out.begin);
  return out;
}

std::string SourceMap::position(Span s) const {
  s = origin(s);
  LineCol lc = line_col(s.file, s.begin);
  return std::to_string(lc.line) + ":" + std::to_string(lc.column);
}

std::string SourceMap::location(Span s, const char* unknown) const {
  if (s.file >= files_.size()) return unknown;
  s = origin(s);
  return files_[s.file]->path + ":" + position(s);
}

}  // namespace ss::diag
