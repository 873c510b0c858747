#pragma once
// The `ss` subcommands. Each takes its arguments (after the command word)
// and returns the process exit code of cli.md: 0 ok, 1 static error,
// 2 runtime error, 3 WorkerError, 64 usage.

#include <string>
#include <vector>

#include "interp/check/checker.h"

namespace ss::cli {

constexpr int kExitOk = 0;
constexpr int kExitStatic = 1;
constexpr int kExitRuntime = 2;
constexpr int kExitWorker = 3;
constexpr int kExitUsage = 64;

int cmd_check(const std::vector<std::string>& args);
int cmd_run(const std::vector<std::string>& args);
/// `ss run` on a device list of several: worker processes (cmd_run_devices).
/// The controller runs [entry] here and sends each call of a worker fn
/// to the workers; [run_args] go to every `ss worker` (program, options).
int run_on_devices(const std::vector<std::string>& run_args,
                   const check::Program& prog,
                   const diag::SourceMap& sm,
                   const std::vector<std::string>& program_args,
                   const std::string& entry);
/// Makes `ss worker` run programs (call before dist::worker_entry).
void register_program_worker();
int cmd_conformance(const std::vector<std::string>& args);

/// Parses `-D NAME=SIZE` into [name], [size]; false when malformed.
bool parse_dim_override(const std::string& text,
                        std::string& name,
                        int64_t& size);
/// Whether [spec] is a device list: `cpu`, `cpu[0 1 2]`, `cuda[0 1]`.
bool valid_device_spec(const std::string& spec);

/// The options every command that takes a program shares: `--devices
/// SPEC` and `-D NAME=SIZE` (also `-DNAME=SIZE`), read at args[i] (which
/// moves past a value). A bad value prints why, prefixed by [cmd].
enum class ProgramOption { Taken, NotMine, Bad };
ProgramOption program_option(const char* cmd,
                             const std::vector<std::string>& args,
                             size_t& i,
                             check::Options& opts);
/// False (after printing an IOError) when [file] cannot be read.
bool readable(const std::string& file);

}  // namespace ss::cli
