#pragma once
// The options that put a run's workers on other hosts (issue 26), shared by
// `ss run`, `ss repl` and `ss conformance`: `--hosts`, `--hostfile`,
// `--launch`, `--listen`, `--token-file`, `--heartbeat-timeout`. Placement
// is deployment, not source: the program's device count says how many
// ranks, these say where they run.

#include <optional>
#include <string>
#include <vector>

#include "dist/control/control.h"
#include "interp/check/program_options.h"

namespace ss::cli {

struct HostOptions {
  std::string hosts, hostfile, launch, listen, token_file;
  std::optional<double> heartbeat_timeout_s;
  bool any() const {
    return !hosts.empty() || !hostfile.empty() || !launch.empty() ||
           !listen.empty() || !token_file.empty() || heartbeat_timeout_s;
  }
};

/// Reads one of the options at args[i] (moving past its value); a bad
/// value prints why, prefixed by [cmd].
check::ProgramOption host_option(const char* cmd,
                                 const std::vector<std::string>& args,
                                 size_t& i,
                                 HostOptions& h);

/// What [h] asks for on a program of [world] devices: nothing (none
/// given), or the remote workers' options. Prints why and returns false
/// when they do not fit together or with the program. With [fit_slots]
/// (`ss conformance`, whose cases differ in their counts) the hosts'
/// slots need not add up to [world]: the ranks fill the hosts in order,
/// each up to its slots, and start again at the first when there are
/// more.
bool remote_options(const char* cmd,
                    const HostOptions& h,
                    int world,
                    std::optional<dist::RemoteOptions>& out,
                    bool fit_slots = false);

}  // namespace ss::cli
