#pragma once
// The LSP printer (`ss lsp`): diagnostics as textDocument/publishDiagnostics'
// Diagnostic objects, and the one Span -> LSP Range conversion (0-based
// lines, UTF-16 columns: Note [UTF-16 columns] in utf16.h) that the
// server's other answers (definition) use too. Beside render_json.cpp; a
// separate header so that only the LSP's files compile nlohmann/json.

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "diag/diagnostic.h"

namespace ss::diag {

/// {"line", "character"} of byte [offset] of [file].
nlohmann::json lsp_position(const SourceMap& sm,
                            uint32_t file,
                            uint32_t offset);
/// {"start", "end"} of [s].
nlohmann::json lsp_range(const SourceMap& sm, Span s);

/// The URI of a file of the map, "" for one the editor cannot open (the
/// standard library's text).
using UriOf = std::function<std::string(uint32_t file)>;

/// Every diagnostic of [ds] as LSP Diagnostics, grouped by the file its
/// span is in. One in no file with a URI (unlocated, or in <stdlib>) goes
/// to [fallback], at the start. Each has the code (E0xxx, or a runtime
/// error's kind), severity Error, source "ss", the message, the notes that
/// point somewhere as relatedInformation, and the help lines and the notes
/// without a location appended to the message ("help: ..."), since LSP has
/// no field for them.
std::map<uint32_t, nlohmann::json> render_lsp(const Diagnostics& ds,
                                              const SourceMap& sm,
                                              uint32_t fallback,
                                              const UriOf& uri);

}  // namespace ss::diag
