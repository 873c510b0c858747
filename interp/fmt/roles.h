#pragma once
// What the parser knows about a token that its spacing depends on (Note
// [Words side by side] in roles.cpp).

#include <cstdint>
#include <vector>

#include "interp/lex/token.h"
#include "interp/parse/ast.h"

namespace ss::fmt {

struct TokenRoles {
  /// Per token: 0, or the id of the region of words written side by side
  /// (a type, a pattern, an axis argument, a devices or mesh line, a
  /// model's dim parameters) that it lies in.
  std::vector<uint32_t> region;
  /// Per token: an `=` written tight as a keyword's (`pad=0`), which the
  /// tokens alone do not tell from an assignment's.
  std::vector<bool> tight_assign;
};

TokenRoles token_roles(const ast::Module& module, const lex::Tokens& tokens);

}  // namespace ss::fmt
