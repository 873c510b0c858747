#pragma once
// Note [UTF-16 columns]: the LSP counts a Position's `character` in UTF-16
// code units (its default position encoding), while a Span counts bytes of
// UTF-8. A code point of 1-3 UTF-8 bytes is one unit, one of 4 bytes (past
// U+FFFF) is two (a surrogate pair). A byte that does not start or continue
// a valid sequence counts as one unit: the editor shows it as U+FFFD, one
// unit, which is also what render_json's replacement prints. Both
// directions live here, so the diagnostics' printer (render_lsp.cpp) and
// the server's position lookups (interp/lsp) agree.

#include <cstdint>
#include <string_view>

namespace ss::diag {

/// The UTF-16 length of [bytes] (a prefix of one line).
uint32_t utf16_length(std::string_view bytes);

/// The byte offset in [line] of UTF-16 column [units]; past the end, the
/// line's length; inside a surrogate pair, the code point's start.
uint32_t byte_column(std::string_view line, uint32_t units);

}  // namespace ss::diag
