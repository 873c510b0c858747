#pragma once
// What an editor colours by spelling (lexical_classes.cpp): the oracle of
// the editors' grammars' tests and the server's keywords.

#include <string>

#include "interp/lex/token.h"

namespace ss::fmt {

/// Whether [toks][i] is a declaration word used as one: `devices`, `mesh`,
/// `dim`, `data`, `model`, `spmd`, `extern` at column 0 of a top-level
/// line, `buffer` at the start of a model field (language.md); elsewhere
/// they are names.
bool declaration_word(const lex::Tokens& toks, size_t i);

/// Every token and comment of [text], a line each in source order: `LINE
/// COLUMN LENGTH CLASS` (1-based, bytes), CLASS one of keyword,
/// declaration, number, string, comment, name. `ss fmt --tokens FILE`
/// prints it (hidden): the oracle of the grammars' tests (editors/tests/).
std::string lexical_classes(const std::string& text);

}  // namespace ss::fmt
