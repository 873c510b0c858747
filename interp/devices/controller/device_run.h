// A checked program run on several devices the way `ss run` runs it: the
// controller (this process) runs the entry fn and sends each call of a
// worker fn to `ss worker` processes (cmd_run_devices.cpp). `ss run` and
// `ss conformance` both call run_program_on_devices, so what the suite
// proves is what users run (cli.md).
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "dist/control/control.h"
#include "interp/check/checker.h"
#include "interp/eval/final_params.h"
#include "interp/eval/runtime_error.h"

namespace ss::devices::controller {

struct DeviceRunOptions {
  /// What every `ss worker` gets: the program's options
  /// (worker_run_args).
  std::vector<std::string> worker_args;
  std::vector<std::string> program_args;
  std::string entry = "main";
  /// Keep the final params: the controller's (rank 0's copies, by main's
  /// names) and every rank's copies of every model it holds.
  bool final_params = false;
  /// Copy the workers' own stdout/stderr to this process's stderr.
  bool forward_worker_output = true;
  /// Workers on other hosts (`--hosts`, `--listen`: issue 26).
  std::optional<dist::RemoteOptions> remote;
  /// The workers' command up to the `worker` word, and what their
  /// environment adds (a host language's workers: embed::LoadOptions).
  std::vector<std::string> worker_command, worker_env;
  /// Set from any thread to stop the run at the controller's next
  /// statement (KeyboardInterrupt), which ends the workers.
  volatile int* interrupt = nullptr;
};

struct DeviceRun {
  /// The run's error: "" when it ran clean, else a runtime error's kind
  /// or "WorkerError" (a worker that died, or the workers failing to
  /// start); [error] is its rendering as `ss run` prints it.
  std::string kind;
  std::string error;
  /// The error itself, where the program raised it (not a failure to
  /// start the workers).
  std::optional<eval::RuntimeError> runtime_error;
  /// diag::kExitOk, kExitRuntime or kExitWorker (diag/exit_codes.h).
  int exit_code = 0;
  /// With SHAPESCRIPT_CONTROL_STATS: the controller's counters, a line.
  std::string stats;
  /// With DeviceRunOptions::final_params and a clean run: what the entry
  /// fn held at its end (devices::Context::final_params, read from rank 0),
  /// and by rank, every model store each worker holds (by "model <id>.
  /// <path>"), to check the copies stayed equal (compare_ranks). Empty
  /// when the workers were never started.
  eval::FinalParams params;
  std::vector<eval::FinalParams> rank_params;
};

/// Runs [prog] (checked from [sm]) on its devices; the program's output
/// goes to [out].
DeviceRun run_program_on_devices(const check::Program& prog,
                                 const diag::SourceMap& sm,
                                 std::ostream& out,
                                 const DeviceRunOptions& opts);

/// The options every worker checks the program with: the -D and --devices
/// of [opts], the entry and the program's arguments. The program itself
/// comes as text: with kInit (Note [The program travels as text]), or as
/// the repl's kDeclare.
std::vector<std::string> worker_run_args(
    const check::Options& opts,
    const std::string& entry,
    const std::vector<std::string>& program_args);

}  // namespace ss::devices::controller
