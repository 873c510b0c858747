#pragma once
// The open documents: each one's text as the editor has it (didOpen, then
// didChange, full or incremental), its version, and the analysis of that
// text (analysis.h). The server answers from here, never from the disk.

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "interp/lsp/analysis.h"

namespace ss::lsp {

/// The byte offset of LSP position ([line], [character]: 0-based, UTF-16
/// units) in [text]. A position past a line's end is the line's end, and
/// past the last line the text's end (the LSP spec's rule for positions
/// beyond the text).
uint32_t offset_of(std::string_view text, uint32_t line, uint32_t character);

/// Replaces the bytes of [text] from ([l0], [c0]) to ([l1], [c1]) with
/// [with] (an incremental didChange). An end before the start is taken as
/// the start.
void apply_edit(std::string& text,
                uint32_t l0,
                uint32_t c0,
                uint32_t l1,
                uint32_t c1,
                const std::string& with);

struct Document {
  std::string uri;
  std::string path;  // uri_to_path(uri); imports resolve relative to it
  /// [path] made canonical once, at open: the key an import of this file
  /// is asked for by (Options::import_text).
  std::string canonical;
  std::string text;
  long long version = 0;
  /// The analysis of [text].
  std::shared_ptr<const Analysis> now;
  /// The last analysis that produced a program, kept for completion after
  /// `.` while the text does not parse.
  std::shared_ptr<const Analysis> last_program;
  /// The semantic tokens last sent, and their resultId, for
  /// semanticTokens/full/delta.
  std::vector<uint32_t> tokens_sent;
  std::string tokens_id;
};

class DocumentStore {
 public:
  Document& open(const std::string& uri, std::string text, long long version);
  /// Null when [uri] is not open.
  Document* find(const std::string& uri);
  /// The open document of canonical path [path], or null: a map, not a
  /// scan of every document's path (each import of each check asks).
  Document* find_path(const std::string& path);
  void close(const std::string& uri);
  const std::map<std::string, Document>& all() const { return docs_; }

 private:
  std::map<std::string, Document> docs_;
  std::map<std::string, std::string> uri_by_path_;
};

}  // namespace ss::lsp
