#pragma once
// `ss fmt`: one canonical layout for a `.ss` file (Note [One layout] in
// format.cpp). The CLI (interp/cli/cmd_fmt.cpp) calls it, and the language
// server's formatting requests through edits.h.

#include <optional>
#include <string>

#include "diag/diagnostic.h"

namespace ss::fmt {

struct Options {
  /// Lines are broken at commas inside brackets to stay within this many
  /// columns where they can (black's default).
  int width = 88;
};

/// [text] (one file's source, named [path] in messages) in its canonical
/// layout. nullopt when it does not lex and parse: its syntax errors are in
/// [diags] (resolved through [sm], where the text is added), and nothing
/// is formatted. A layout that would change the file's tokens or comments
/// (a bug here) is refused too: nullopt with no diagnostic, and [refused]
/// (when given) says so.
std::optional<std::string> format_text(const std::string& path,
                                       std::string text,
                                       diag::SourceMap& sm,
                                       diag::Diagnostics& diags,
                                       const Options& options = {},
                                       std::string* refused = nullptr);

}  // namespace ss::fmt
