// The open documents (documents.h).
#include "interp/lsp/documents.h"

#include <algorithm>
#include <filesystem>

#include "diag/utf16.h"
#include "interp/lsp/uri.h"

namespace ss::lsp {

uint32_t offset_of(std::string_view text, uint32_t line, uint32_t character) {
  size_t start = 0;
  for (uint32_t l = 0; l < line; ++l) {
    size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) return static_cast<uint32_t>(text.size());
    start = nl + 1;
  }
  size_t end = text.find('\n', start);
  std::string_view row =
      text.substr(start, end == std::string_view::npos ? end : end - start);
  return static_cast<uint32_t>(start + diag::byte_column(row, character));
}

void apply_edit(std::string& text,
                uint32_t l0,
                uint32_t c0,
                uint32_t l1,
                uint32_t c1,
                const std::string& with) {
  uint32_t b = offset_of(text, l0, c0);
  uint32_t e = std::max(b, offset_of(text, l1, c1));
  text.replace(b, e - b, with);
}

Document& DocumentStore::open(const std::string& uri,
                              std::string text,
                              long long version) {
  Document& d = docs_[uri];
  d.uri = uri;
  d.path = uri_to_path(uri);
  if (d.path.empty()) d.path = uri;  // untitled: a name for messages only
  std::error_code ec;
  std::filesystem::path c = std::filesystem::weakly_canonical(d.path, ec);
  d.canonical = ec ? d.path : c.string();
  uri_by_path_[d.canonical] = uri;
  d.text = std::move(text);
  d.version = version;
  d.now.reset();
  d.last_program.reset();
  return d;
}

Document* DocumentStore::find(const std::string& uri) {
  auto it = docs_.find(uri);
  return it == docs_.end() ? nullptr : &it->second;
}

Document* DocumentStore::find_path(const std::string& path) {
  auto it = uri_by_path_.find(path);
  return it == uri_by_path_.end() ? nullptr : find(it->second);
}

void DocumentStore::close(const std::string& uri) {
  auto it = docs_.find(uri);
  if (it == docs_.end()) return;
  auto p = uri_by_path_.find(it->second.canonical);
  if (p != uri_by_path_.end() && p->second == uri) uri_by_path_.erase(p);
  docs_.erase(it);
}

}  // namespace ss::lsp
