#pragma once

#include <string_view>
#include <vector>

#include "diag/diagnostic.h"
#include "interp/lex/token.h"

namespace ss::lex {

/// Turns one file's text into tokens with Python-style Indent/Dedent and
/// Newline tokens (none inside brackets). Reports E0102 (tabs, bad dedent)
/// and E0103 (unterminated string or bracket) into [diags] and keeps going,
/// so the parser still sees a token stream ending in Eof.
Tokens lex(const diag::SourceMap& sm, uint32_t file, diag::Diagnostics& diags);

/// The same, and the span of every `#` comment, to its line's end (without
/// the newline), in source order: what `ss fmt` keeps (interp/fmt/).
Tokens lex(const diag::SourceMap& sm,
           uint32_t file,
           diag::Diagnostics& diags,
           std::vector<diag::Span>& comments);

/// Lexes [text], a piece of file [file] that starts at byte [base] (the
/// inside of an f-string's `{...}`), so spans point into the real file.
/// Returns tokens without Newline/Indent/Dedent, ending in Eof.
Tokens lex_fragment(std::string_view text,
                    uint32_t file,
                    uint32_t base,
                    diag::Diagnostics& diags);

}  // namespace ss::lex
