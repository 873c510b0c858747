#pragma once
// The options that put a run's workers on other hosts (issue 26), read from
// `ss run`'s, `ss repl`'s and `ss conformance`'s flags: `--hosts`,
// `--hostfile`, `--launch`, `--listen`, `--token-file`,
// `--heartbeat-timeout`, into embed::Placement (interp/embed/placement.h
// makes them the workers' options).

#include <optional>
#include <string>
#include <vector>

#include "dist/control/control.h"
#include "interp/check/program_options.h"
#include "interp/embed/embed.h"

namespace ss::cli {

using HostOptions = embed::Placement;

/// Reads one of the options at args[i] (moving past its value); a bad
/// value prints why, prefixed by [cmd].
check::ProgramOption host_option(const char* cmd,
                                 const std::vector<std::string>& args,
                                 size_t& i,
                                 HostOptions& h);

/// embed::remote_options for [cmd]: false, with why printed, when [h]
/// does not fit together or with the program.
bool remote_options(const char* cmd,
                    const HostOptions& h,
                    int world,
                    std::optional<dist::RemoteOptions>& out,
                    bool fit_slots = false);

}  // namespace ss::cli
