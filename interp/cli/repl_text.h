#pragma once
// The program text the repl checks, built from the session's declarations
// and the input at hand, with the origin of every line, so errors point at
// what the user typed or loaded (Note [Source origins] in diag/source.cpp).

#include <cstdint>
#include <string>
#include <vector>

#include "diag/source.h"
#include "interp/devices/devices.h"

namespace ss::cli {

/// A text the session's code came from: the transcript of what was typed
/// (its lines counted over the whole session, as ghci counts them), or a
/// file `:load` read, as it was then.
struct ReplOrigin {
  std::string path;
  std::string text;
};

/// One top-level declaration of the session (Note [Repl redefinition]).
struct ReplDecl {
  /// The name it declares; "devices", "mesh" or "import PATH" for those;
  /// "" for a text that did not parse (never accepted).
  std::string key;
  std::string text;   // whole lines, ending in '\n'
  size_t origin = 0;  // index into the session's origins
  uint32_t line = 1;  // the origin's line of text's first line
};

/// Splits [text], lines [line].. of [origin], into its declarations, each
/// from its first line to the next one's (comments go with the one above).
std::vector<ReplDecl> split_declarations(const std::string& text,
                                         size_t origin,
                                         uint32_t line);

class ReplText {
 public:
  /// Appends [text] that nobody typed (a synthetic fn's header).
  void generated(const std::string& text);
  /// Appends [text], lines [line].. of [origin], each written after [pad];
  /// its first line starts at [first_column] of its origin line.
  void add(const std::string& text,
           size_t origin,
           uint32_t line,
           const std::string& pad = "",
           uint32_t first_column = 1);
  void add(const ReplDecl& d) { add(d.text, d.origin, d.line); }
  const std::string& text() const { return text_; }
  /// This text with the origins it uses, as the session checks it (and
  /// sends it to its workers: Note [The session's text]).
  devices::protocol::SessionText session(
      const std::vector<ReplOrigin>& origins) const;

 private:
  struct Line {
    size_t origin;  // SIZE_MAX: generated
    uint32_t line;
    int32_t shift;
  };
  std::string text_;
  std::vector<Line> lines_;
};

}  // namespace ss::cli
