#pragma once
// The program text of an `ss repl` session as the repl and its workers
// both check it (Note [The session's text] in session_text.cpp): the text,
// and for each of its lines where it came from (what was typed, or a file
// `:load` read), so that errors, random draws and imports mean the same
// on both sides as in `ss run` of the file.

#include <memory>
#include <string>
#include <vector>

#include "diag/diagnostic.h"
#include "diag/source.h"
#include "interp/check/checker.h"
#include "interp/devices/protocol/wire.h"

namespace ss::devices::protocol {

/// The name the session's checked text goes by.
inline constexpr const char* kSessionName = "<repl>";

struct SessionText {
  struct File {
    std::string path;  // as the user named it; kSessionName: the transcript
    std::string text;
  };
  std::string text;         // as checked, under kSessionName
  std::vector<File> files;  // the texts its lines came from
  /// By line of [text]: its origin, LineOrigin::file indexing [files]
  /// (UINT32_MAX: generated, a synthetic fn's header).
  std::vector<diag::LineOrigin> lines;
};

/// Checks [t] with [opts] (an import resolves relative to the file its
/// line came from), then adds [t]'s files to [sm] and maps each line of
/// the checked text to its origin, also when there are errors.
std::unique_ptr<check::Program> check_session_text(const SessionText& t,
                                                   diag::SourceMap& sm,
                                                   diag::Diagnostics& diags,
                                                   check::Options opts);

void write_session_text(devices::protocol::Writer& w, const SessionText& t);
SessionText read_session_text(devices::protocol::Reader& r);

}  // namespace ss::devices::protocol
