#pragma once
// The `ss` subcommands. Each takes its arguments (after the command word)
// and returns the process exit code of cli.md: 0 ok, 1 static error,
// 2 runtime error, 3 WorkerError, 64 usage.

#include <string>
#include <vector>

#include "diag/exit_codes.h"
#include "interp/check/checker.h"
#include "interp/check/program_options.h"

namespace ss::cli {

using diag::kExitOk;
using diag::kExitRuntime;
using diag::kExitStatic;
using diag::kExitUsage;
using diag::kExitWorker;

int cmd_check(const std::vector<std::string>& args);
int cmd_run(const std::vector<std::string>& args);
int cmd_conformance(const std::vector<std::string>& args);
/// `ss check --builtins-reference` (hidden): docs/reference/builtins.md from
/// the op table (Note [The builtins' reference]).
int print_builtin_reference();
/// `ss worker ARGS` (hidden: started by `ss run`'s controller, cmd_run.cpp).
int cmd_worker(const std::vector<std::string>& args);
/// The environment's problem with the devices' settings
/// (SHAPESCRIPT_COLLECTIVE_TIMEOUT), or "" when there is none.
std::string bad_device_environment();

using check::parse_dim_override;
using check::program_option;
using check::ProgramOption;
using check::valid_device_spec;

/// False (after printing an IOError) when [file] cannot be read.
bool readable(const std::string& file);

}  // namespace ss::cli
