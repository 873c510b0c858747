// `ss run FILE [--devices SPEC] [-D NAME=SIZE]... [--threads N]
//         [--entry main] [-- ARGS]`
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>

#include "diag/diagnostic.h"
#include "interp/check/checker.h"
#include "interp/cli/commands.h"
#include "interp/cli/help.h"
#include "interp/cli/host_options.h"
#include "interp/devices/devices.h"
#include "interp/eval/interpreter.h"
#include "ops/cpu/cpu_backend.h"

namespace ss::cli {

namespace {

// Note [Thread count]
// `--threads N`, or SHAPESCRIPT_THREADS=N when the flag is not given, is
// how many threads each process of the run computes with: OpenBLAS's and
// the CPU kernels' intra-op threads (Note [Intra-op threads]), in the `ss`
// process and in each `ss worker` of a run on several devices. N = 1 means
// no intra-op threads at all. Without either, OPENBLAS_NUM_THREADS decides
// (OpenBLAS reads it itself), else every core in one process and one
// thread per worker. The count reaches the workers as OPENBLAS_NUM_THREADS
// in their environment, so their OpenBLAS starts with it (with 1, no
// thread pool at all), and this process's OpenBLAS, already loaded, is
// told by set_cpu_threads.

/// The thread count [text] names (1 to 4096), or nothing.
std::optional<int> thread_count(const std::string& text) {
  if (text.empty() || text.size() > 4 ||
      text.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  int n = std::stoi(text);
  if (n < 1 || n > 4096) return std::nullopt;
  return n;
}

/// Applies --threads's [flag] (empty: not given) or SHAPESCRIPT_THREADS
/// (Note [Thread count]); false, with a usage error printed, when the
/// count is not a whole number >= 1.
bool apply_threads(const std::string& flag, bool given) {
  const char* env = std::getenv("SHAPESCRIPT_THREADS");
  if (!given && !env) return true;
  std::string text = given ? flag : env;
  std::optional<int> n = thread_count(text);
  if (!n) {
    std::cerr << "ss run: " << (given ? "--threads " : "SHAPESCRIPT_THREADS=")
              << "'" << text
              << "' is not a thread count: give a whole number from 1 to "
                 "4096\n";
    return false;
  }
  setenv("OPENBLAS_NUM_THREADS", std::to_string(*n).c_str(), 1);
  ops::set_cpu_threads(*n);
  return true;
}

}  // namespace

int cmd_run(const std::vector<std::string>& args) {
  std::string file, entry = "main", threads;
  bool threads_given = false;
  std::vector<std::string> program_args;
  check::Options opts;
  HostOptions hosts;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      program_args.assign(args.begin() + i + 1, args.end());
      break;
    }
    if (a == "--entry" && i + 1 < args.size()) {
      entry = args[++i];
    } else if (a == "--threads") {
      if (i + 1 == args.size()) {
        std::cerr << "ss run: --threads needs a count, e.g. --threads 2\n";
        return kExitUsage;
      }
      threads = args[++i], threads_given = true;
    } else if (ProgramOption o = program_option("run", args, i, opts);
               o != ProgramOption::NotMine) {
      if (o == ProgramOption::Bad) return kExitUsage;
    } else if (ProgramOption o = host_option("run", args, i, hosts);
               o != ProgramOption::NotMine) {
      if (o == ProgramOption::Bad) return kExitUsage;
    } else if (a == "--help" || a == "-h") {
      std::cout << command_help("run");
      return kExitOk;
    } else if (!a.empty() && a[0] == '-') {
      std::cerr << "ss run: unknown option '" << a << "'\n";
      return kExitUsage;
    } else if (file.empty()) {
      file = a;
    } else {
      program_args.push_back(a);
    }
  }
  if (file.empty()) {
    std::cerr << usage_line("run");
    return kExitUsage;
  }
  if (!apply_threads(threads, threads_given)) return kExitUsage;
  if (!readable(file)) return kExitRuntime;
  diag::SourceMap sm;
  diag::Diagnostics diags;
  auto prog = check::check_file(file, sm, diags, opts);
  if (!prog) {
    std::cerr << diag::render_terminal(diags, sm);
    return kExitStatic;
  }
  if (!prog->fn(entry)) {
    std::cerr << diag::render_file_error(file,
                                         "no `fn " + entry + "()` to run");
    return kExitUsage;
  }
  if (prog->devices().kind == "cuda") {
    // The GPU backend is a separately built module (ops/no_cuda stubs here).
    std::cerr << diag::render_file_error(
        file,
        "the program asks for cuda devices, but this ss was built without "
        "the CUDA backend; run it on the CPU with --devices cpu or "
        "--devices 'cpu[0 1 2]'");
    return kExitRuntime;
  }
  std::optional<dist::RemoteOptions> remote;
  if (!remote_options(
          "run", hosts, static_cast<int>(prog->devices().count()), remote))
    return kExitUsage;
  // Several devices: worker processes run it (a mesh's spmd fns too: an
  // instance on each worker).
  if (prog->devices().count() > 1 && prog->devices().kind == "cpu") {
    devices::controller::DeviceRunOptions run_opts;
    run_opts.remote = remote;
    run_opts.worker_args =
        devices::controller::worker_run_args(opts, entry, program_args);
    run_opts.program_args = program_args;
    run_opts.entry = entry;
    devices::controller::DeviceRun run =
        devices::controller::run_program_on_devices(
            *prog, sm, std::cout, run_opts);
    std::cout.flush();
    std::cerr << run.error << run.stats;
    return run.exit_code;
  }
  try {
    eval::Interpreter in(*prog, sm, std::cout);
    in.run_main(program_args, entry);
  } catch (const eval::RuntimeError& e) {
    std::cout.flush();
    std::cerr << eval::render_runtime_error(e, sm);
    return kExitRuntime;
  }
  return kExitOk;
}

// `ss run`'s other half: the process its controller starts on each device.
int cmd_worker(const std::vector<std::string>& args) {
  return devices::worker::worker_main(args);
}

std::string bad_device_environment() {
  return devices::worker::bad_device_environment();
}

}  // namespace ss::cli
