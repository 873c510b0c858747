#pragma once
// Where a run's workers run (issue 26): embed.h's Placement, as the
// options are written, made the worker pool's dist::RemoteOptions. Shared
// by embed::run and the CLI's `ss run`, `ss repl` and `ss conformance`,
// which read the options from their flags (interp/cli/host_options.h).
// Placement is deployment, not source: the program's device count says
// how many ranks, these say where they run.

#include <optional>

#include "dist/control/control.h"
#include "interp/embed/embed.h"

namespace ss::embed {

/// What [p] asks for on a program of [world] devices: nothing (none
/// given), or the remote workers' options. Throws std::invalid_argument
/// saying why when they do not fit together or with the program. With
/// [fit_slots] (`ss conformance`, whose cases differ in their counts) the
/// hosts' slots need not add up to [world]: the ranks fill the hosts in
/// order, each up to its slots, and start again at the first when there
/// are more.
std::optional<dist::RemoteOptions> remote_options(const Placement& p,
                                                  int world,
                                                  bool fit_slots = false);

}  // namespace ss::embed
