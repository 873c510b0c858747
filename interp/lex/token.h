#pragma once
// Tokens: the lexer's output, the parser's input.

#include <cstdint>
#include <string>
#include <vector>

#include "diag/source.h"

namespace ss::lex {

enum class Tok : uint8_t {
#define TOK(name, spelling) name,
#include "interp/lex/tokens.def"
#undef TOK
};

/// "fn", "(", "name", ... for messages.
const char* tok_spelling(Tok t);

struct Token {
  Tok kind = Tok::Eof;
  diag::Span span;
  /// Names: the name. String: the decoded value. FString: the raw text
  /// between the quotes. Numbers: their text.
  std::string text;
  /// 0-based column of the token's first byte (declarations start at 0).
  uint32_t column = 0;
  /// True for the first token of a logical line.
  bool line_start = false;
};

using Tokens = std::vector<Token>;

}  // namespace ss::lex
