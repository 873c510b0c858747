#pragma once

#include "diag/diagnostic.h"
#include "interp/lex/token.h"
#include "interp/parse/ast.h"

namespace ss::parse {

/// Parses one file's tokens. Syntax errors (E0101, E0102, E0103) go into
/// [diags]; the parser recovers at the next line or declaration and keeps
/// going, so one run reports every error. Never throws on bad input.
ast::Module parse(const lex::Tokens& tokens,
                  uint32_t file,
                  diag::Diagnostics& diags);

/// Parses a single statement or declaration sequence typed at the repl.
/// (Same grammar; top-level statements are allowed.)
struct ReplInput {
  ast::Module decls;
  ast::Block stmts;
};
ReplInput parse_repl(const lex::Tokens& tokens,
                     uint32_t file,
                     diag::Diagnostics& diags);

}  // namespace ss::parse
