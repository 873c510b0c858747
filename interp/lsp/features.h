#pragma once
// The answers to textDocument/hover, /definition and /completion, each
// from one Analysis (hover.cpp, definition.cpp, completion.cpp). Each
// returns the LSP result object, or null when there is nothing to say.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

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

}  // namespace ss::lsp
