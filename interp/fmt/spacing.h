#pragma once
// The space between two tokens of a line in the canonical layout (Note
// [Spaces between tokens] in spacing.cpp).

#include <vector>

#include "interp/fmt/roles.h"
#include "interp/lex/token.h"

namespace ss::fmt {

/// Per token of [line] (indices into [tokens], one logical line in order):
/// whether one space goes before it (false for the first). Inside a
/// region of words the tokens' spans say where the author wrote
/// whitespace.
std::vector<bool> spaces_before(const std::vector<size_t>& line,
                                const lex::Tokens& tokens,
                                const TokenRoles& roles);

}  // namespace ss::fmt
