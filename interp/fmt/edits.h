#pragma once
// The formatted layout as edits of the text an editor holds (Note [Edits by
// declaration] in edits.cpp): what the language server's
// textDocument/formatting and /rangeFormatting answer.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "interp/fmt/format.h"

namespace ss::fmt {

/// Replace lines [first, end) (0-based) of the text with [text] (whole
/// lines, each ending in a newline, or empty).
struct LineEdit {
  uint32_t first = 0, end = 0;
  std::string text;
};

/// The edits that lay out [text] canonically: all of it, or with [lines]
/// (a 0-based first and last line, inclusive) only the top-level
/// declarations that touch them. None when it is already formatted or does
/// not parse (a document being typed).
std::vector<LineEdit> formatting_edits(
    const std::string& text,
    const Options& options,
    std::optional<std::pair<uint32_t, uint32_t>> lines = std::nullopt);

}  // namespace ss::fmt
