#pragma once
// The answers to textDocument/hover, /definition and /completion, each
// from one Analysis (hover.cpp, definition.cpp, completion.cpp). Each
// returns the LSP result object, or null when there is nothing to say.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "interp/lsp/analysis.h"

namespace ss::lsp {

/// A Hover ({"contents": markdown, "range"}) for byte [offset]: the type of
/// the value under the cursor and the sizes of the dims it names, on
/// several devices its layout; on a line that sends anything, that line's
/// block of `ss explain`.
nlohmann::json hover(const Analysis& a, uint32_t offset);

/// A Location for the declaration of what is at [offset]: a fn, model,
/// dim, data record, field, param or local. [uri] is the document's own.
nlohmann::json definition(const Analysis& a,
                          uint32_t offset,
                          const std::string& uri);

/// A CompletionList at byte [offset] of [text] (the document as it is
/// now): after `name.` (or `a.b.`) the fields of its model or record, found
/// in [a] (the last analysis with a program: the text being typed rarely
/// parses); otherwise the builtins of the op table, the program's fns,
/// models, records and dims, the locals of the fn around, and keywords.
nlohmann::json completion(const Analysis* a,
                          const std::string& text,
                          uint32_t offset);

/// The outline of [a]'s document: a DocumentSymbol per declaration (dims,
/// records and models with their fields, fns with their signatures, the
/// devices and mesh lines), in source order.
nlohmann::json document_symbols(const Analysis& a);

/// SymbolInformation for the declarations of every open document ((uri,
/// its last analysis)) whose name holds [query]'s characters in order,
/// ignoring case.
nlohmann::json workspace_symbols(
    const std::vector<std::pair<std::string, const Analysis*>>& docs,
    const std::string& query);

/// A SignatureHelp for the call being typed at byte [offset] of [text]:
/// the fn's signature from [a] (the last analysis with a program), or a
/// builtin's from the op table with its summary, and the parameter the
/// cursor is in (by position, or by a `name=` keyword); null outside a
/// call.
nlohmann::json signature_help(const Analysis* a,
                              const std::string& text,
                              uint32_t offset);

/// InlayHints for the `let` and `for` names between bytes [begin] and
/// [end]: `: [b Hd]`, and on several devices `: [b Hd] · split along b`.
nlohmann::json inlay_hints(const Analysis& a, uint32_t begin, uint32_t end);

/// The quick fixes (CodeActions of kind quickfix) of the diagnostics of
/// [a]'s document ([uri]) between bytes [begin] and [end]: each fix a help
/// line names (Note [Help an editor applies] in code_actions.cpp).
nlohmann::json code_actions(const Analysis& a,
                            const std::string& uri,
                            uint32_t begin,
                            uint32_t end);

/// The legend of the semantic tokens: their types and modifiers (Note
/// [Highlighting by meaning] in semantic_tokens.cpp).
nlohmann::json semantic_tokens_legend();
/// [a]'s document's semantic tokens, LSP's relative encoding.
std::vector<uint32_t> semantic_tokens(const Analysis& a);
/// The SemanticTokensEdits that turn [before] into [after] (one edit of
/// the part between what they share at either end; none when equal).
nlohmann::json semantic_tokens_delta(const std::vector<uint32_t>& before,
                                     const std::vector<uint32_t>& after);

/// A request that cannot be answered as asked (a rename that would change
/// the program): a RequestFailed error with this message.
struct RequestFailed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The Locations of the names in [a]'s document ([uri]) that mean what the
/// name at [offset] means (Note [References by meaning] in
/// references.cpp), the declaration among them when asked.
nlohmann::json references(const Analysis& a,
                          uint32_t offset,
                          const std::string& uri,
                          bool include_declaration);
/// The range and text of the name at [offset] that a rename would change;
/// throws RequestFailed for what cannot be renamed.
nlohmann::json prepare_rename(const Analysis& a, uint32_t offset);
/// The WorkspaceEdit renaming what [offset] names to [new_name]; throws
/// RequestFailed when that would change the program (checked again with
/// [opts]) or the name is no name.
nlohmann::json rename(const Analysis& a,
                      uint32_t offset,
                      const std::string& uri,
                      const std::string& new_name,
                      const check::Options& opts);

}  // namespace ss::lsp
