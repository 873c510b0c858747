// `ss run FILE [--devices SPEC] [-D NAME=SIZE]... [--threads N]
//         [--entry main] [-- ARGS]`
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>

#include "interp/cli/commands.h"
#include "interp/cli/help.h"
#include "interp/cli/host_options.h"
#include "interp/devices/devices.h"
#include "interp/embed/embed.h"
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
  std::string file, threads;
  bool threads_given = false;
  embed::RunOptions run;
  check::Options opts;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      run.args.assign(args.begin() + i + 1, args.end());
      break;
    }
    if (a == "--entry" && i + 1 < args.size()) {
      run.entry = args[++i];
    } else if (a == "--threads") {
      if (i + 1 == args.size()) {
        std::cerr << "ss run: --threads needs a count, e.g. --threads 2\n";
        return kExitUsage;
      }
      threads = args[++i], threads_given = true;
    } else if (ProgramOption o = program_option("run", args, i, opts);
               o != ProgramOption::NotMine) {
      if (o == ProgramOption::Bad) return kExitUsage;
    } else if (ProgramOption o = host_option("run", args, i, run.placement);
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
      run.args.push_back(a);
    }
  }
  if (file.empty()) {
    std::cerr << usage_line("run");
    return kExitUsage;
  }
  if (!apply_threads(threads, threads_given)) return kExitUsage;
  if (!readable(file)) return kExitRuntime;
  run.load.devices = opts.devices_override;
  run.load.dims = opts.dim_overrides;
  run.load.deterministic = opts.deterministic;
  try {
    embed::run(file, run, std::cout, std::cerr);
  } catch (const embed::CheckFailed& e) {
    std::cerr << e.text;
    return kExitStatic;
  } catch (const embed::Error& e) {
    std::cout.flush();
    // A run asked wrongly (hosts that do not fit) has no rendering: it is
    // the command's usage error.
    std::cerr << (e.text.empty() ? "ss run: " + e.message + "\n" : e.text);
    return e.exit_code;
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
