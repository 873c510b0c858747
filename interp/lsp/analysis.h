#pragma once
// One check of one document's text: the checker's diagnostics and, unless
// it failed to parse, the program (Options::keep_on_error), from which the
// hovers, definitions and completions are looked up. The several-devices
// table (`ss explain`'s) is built from a clean program only, when a hover
// first asks.

#include <memory>
#include <optional>
#include <string>

#include "diag/diagnostic.h"
#include "interp/check/checker.h"
#include "interp/check/plan/explain.h"

namespace ss::lsp {

struct Analysis {
  std::string path;
  diag::SourceMap sm;
  diag::Diagnostics diags;
  /// Null when the text did not parse; holds errors when diags does.
  std::unique_ptr<check::Program> prog;
  /// The document's file in [sm].
  uint32_t file = 0;

  bool clean() const { return prog && diags.empty(); }
  /// The document's module in [prog] (null without a program).
  const ast::Module* module() const;
  /// `ss explain`'s table, for a clean program on several devices; null
  /// otherwise.
  const check::comms::DeviceTable* table() const;
  /// The URI of file [f] of [sm]: [doc_uri] for the document, a file://
  /// URI for an import (its path made canonical), "" for the standard
  /// library, which has no file to open.
  std::string uri_of(uint32_t f, const std::string& doc_uri) const;
  /// The byte offset of an LSP position in the document.
  uint32_t offset(uint32_t line, uint32_t character) const;

 private:
  mutable std::optional<check::comms::DeviceTable> table_;
};

/// Checks [text] as the file at [path] (imports resolve relative to it).
std::shared_ptr<const Analysis> analyze(const std::string& path,
                                        const std::string& text,
                                        const check::Options& opts);

}  // namespace ss::lsp
