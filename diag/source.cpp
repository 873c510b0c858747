#include "diag/source.h"

#include <algorithm>

namespace ss::diag {

uint32_t SourceMap::add(std::string path, std::string text) {
  SourceFile f{std::move(path), std::move(text), {0}};
  for (uint32_t i = 0; i < f.text.size(); ++i)
    if (f.text[i] == '\n') f.line_starts.push_back(i + 1);
  files_.push_back(std::move(f));
  return static_cast<uint32_t>(files_.size() - 1);
}

LineCol SourceMap::line_col(uint32_t file, uint32_t offset) const {
  const auto& starts = files_.at(file).line_starts;
  auto it = std::upper_bound(starts.begin(), starts.end(), offset);
  uint32_t line = static_cast<uint32_t>(it - starts.begin());
  return {line, offset - starts[line - 1] + 1};
}

std::string_view SourceMap::line_text(uint32_t file, uint32_t line) const {
  const auto& f = files_.at(file);
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
  const auto& t = files_.at(s.file).text;
  if (s.begin >= t.size()) return {};
  return std::string_view(t).substr(s.begin, s.end - s.begin);
}

std::string SourceMap::position(Span s) const {
  LineCol lc = line_col(s.file, s.begin);
  return std::to_string(lc.line) + ":" + std::to_string(lc.column);
}

std::string SourceMap::location(Span s, const char* unknown) const {
  if (s.file >= files_.size()) return unknown;
  return files_[s.file].path + ":" + position(s);
}

}  // namespace ss::diag
