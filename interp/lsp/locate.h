#pragma once
// What is under the cursor: the innermost expression at a byte offset of
// the document, a name where it is declared (a fn's, a param's, a `let`'s,
// a model's field), or a name inside a written type (a dim, a model, a data
// record). Hover and go to definition both start here.

#include <cstdint>
#include <optional>
#include <string>

#include "interp/lsp/analysis.h"

namespace ss::lsp {

struct Found {
  enum class Kind {
    None,
    Expr,       // [expr]: a checked expression (a Name, a call, ...)
    FieldName,  // [expr]: a Field expression, the cursor on its name
    Local,      // a param's or a local's name where it is declared: [type]
    FnName,     // a fn's name in its header: [fn]
    TypeName,   // a model's, a record's or a dtype's name: [name]
    AxisName,   // a name in an axis position of a type: [name]
    FieldDecl,  // a model's or a record's field where it is declared
  };
  Kind kind = Kind::None;
  const ast::Expr* expr = nullptr;
  /// Expr, FieldName: the call whose callee [expr] is (`forward` in
  /// `forward(m, x)`, `batches` in `train.batches(64)`): the checker
  /// records what a callee resolves to on its call.
  const ast::Expr* call = nullptr;
  /// The user fn whose signature or body holds it (null at top level).
  const check::FnInfo* fn = nullptr;
  std::string name;
  std::string owner;  // FieldDecl: the model or record
  diag::Span span;    // the name or expression found
  types::Type type;
};

/// What is at byte [offset] of [a]'s document; None without a program.
Found locate(const Analysis& a, uint32_t offset);

/// Where what [f] found is declared (go to definition's answer): a fn's,
/// a model's, a record's, a dim's, a field's, a param's or a local's name;
/// a declaration is its own. nullopt for builtins and size variables.
std::optional<diag::Span> declaration(const Analysis& a, const Found& f);
/// Where the model, record or dim [name] is declared.
std::optional<diag::Span> declaration_named(const Analysis& a,
                                            const std::string& name);

/// The user fn (or null) whose declaration starts last at or before
/// [offset]: the fn a line of the body belongs to.
const check::FnInfo* fn_around(const Analysis& a, uint32_t offset);

}  // namespace ss::lsp
