#pragma once
// Source files and spans: every AST node and diagnostic points into here.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ss::diag {

/// A half-open byte range [begin, end) of one source file.
struct Span {
  uint32_t file = 0;
  uint32_t begin = 0;
  uint32_t end = 0;

  bool operator==(const Span&) const = default;

  /// The smallest span covering both [a] and [b] (same file assumed).
  static Span cover(Span a, Span b) {
    return {a.file,
            a.begin < b.begin ? a.begin : b.begin,
            a.end > b.end ? a.end : b.end};
  }
};

/// A 1-based line and column (column counts bytes).
struct LineCol {
  uint32_t line = 1;
  uint32_t column = 1;
};

/// Where one line of a generated file came from: line [line] of file
/// [file], with [shift] columns put in front of it (Note [Source origins]).
struct LineOrigin {
  uint32_t file = UINT32_MAX;  // UINT32_MAX: generated, no origin
  uint32_t line = 0;
  int32_t shift = 0;
};

/// One loaded file: its path as the user named it, its text, line starts.
struct SourceFile {
  std::string path;
  std::string text;
  std::vector<uint32_t> line_starts;
  /// By line (0-based); empty for a file written by a person.
  std::vector<LineOrigin> origins;
};

/// Owns every file of a program so spans can be resolved and printed.
class SourceMap {
 public:
  /// Adds a file and returns its id for Span::file.
  uint32_t add(std::string path, std::string text);
  /// Adds a file that other maps hold too (Note [Shared import sets] in
  /// interp/check/import_set.h): its text is not copied.
  uint32_t add(std::shared_ptr<const SourceFile> f);
  /// File [id], to add to another map.
  const std::shared_ptr<const SourceFile>& shared(uint32_t id) const {
    return files_.at(id);
  }
  const SourceFile& file(uint32_t id) const { return *files_.at(id); }
  /// Says that 1-based [line] of [file] is [origin]'s line (a shared
  /// file is copied first: the other maps' stays as it was).
  void set_origin(uint32_t file, uint32_t line, LineOrigin origin);
  /// [s] in the text it was made from (a line the repl wrapped: what the
  /// user typed, or the loaded file), or [s] itself when its line has no
  /// origin. The printers show this span.
  Span origin(Span s) const;
  size_t size() const { return files_.size(); }
  LineCol line_col(uint32_t file, uint32_t offset) const;
  /// The text of 1-based [line] without its newline.
  std::string_view line_text(uint32_t file, uint32_t line) const;
  std::string_view text(Span s) const;
  /// [s]'s text on one line, as a message quotes it: each line break (with
  /// the indentation around it, or a `\` continuation) made one space.
  std::string one_line(Span s) const;
  /// "LINE:COL" of [s]'s start, in the text it was made from.
  std::string position(Span s) const;
  /// "path:LINE:COL" of [s]'s start, or [unknown] when [s] is in no file
  /// of this map. Every printed location is this one.
  std::string location(Span s, const char* unknown = "<unknown>") const;

 private:
  std::vector<std::shared_ptr<const SourceFile>> files_;
};

}  // namespace ss::diag
