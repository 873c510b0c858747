#pragma once
// `ss lsp`: a language server over stdio (cli.md). JSON-RPC 2.0 in LSP's
// framing (framing.h); the lifecycle (initialize, initialized, shutdown,
// exit); the documents the editor opens, checked on open, change and save,
// their diagnostics published; hover, go to definition and completion.

#include <iosfwd>

#include "interp/check/checker.h"

namespace ss::lsp {

/// Serves requests read from [in_fd], answering on [out_fd], until `exit`
/// or the end of the input, logging what it cannot read to [log]. [opts]
/// (`ss lsp --devices SPEC -D NAME=SIZE`) apply to every document;
/// `initializationOptions.devices` replaces the device list. Returns the
/// exit code of the LSP spec: 0 after a shutdown request, 1 otherwise.
int serve(int in_fd, int out_fd, std::ostream& log, check::Options opts);

}  // namespace ss::lsp
