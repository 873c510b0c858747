#pragma once
// The program a run's workers check, as text (Note [The program travels as
// text] in program_sources.cpp): the controller's checked files, sent with
// kInit, so that a worker on another host needs no copy of them.

#include <memory>
#include <string>
#include <vector>

#include "diag/diagnostic.h"
#include "diag/source.h"
#include "interp/check/checker.h"
#include "interp/devices/protocol/wire.h"

namespace ss::devices::protocol {

struct ProgramSources {
  struct File {
    std::string path;  // as the controller's SourceMap names it
    std::string text;
  };
  /// The checked file first, then every file it imports.
  std::vector<File> files;
};

/// The files [sm] holds that came from the disk (not the stdlib).
ProgramSources sources_of(const diag::SourceMap& sm);

/// Checks [s]'s first file with [opts], its imports read from [s].
std::unique_ptr<check::Program> check_program_sources(const ProgramSources& s,
                                                      diag::SourceMap& sm,
                                                      diag::Diagnostics& diags,
                                                      check::Options opts);

void write_program_sources(Writer& w, const ProgramSources& s);
ProgramSources read_program_sources(Reader& r);

}  // namespace ss::devices::protocol
