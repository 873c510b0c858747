#pragma once

#include "interp/diag/diagnostic.h"
#include "interp/lex/token.h"

namespace ss::lex {

/// Turns one file's text into tokens with Python-style Indent/Dedent and
/// Newline tokens (none inside brackets). Reports E0102 (tabs, bad dedent)
/// and E0103 (unterminated string or bracket) into [diags] and keeps going,
/// so the parser still sees a token stream ending in Eof.
Tokens lex(const diag::SourceMap& sm, uint32_t file, diag::Diagnostics& diags);

}  // namespace ss::lex
