// `ss run FILE [--devices SPEC] [-D NAME=SIZE]... [--entry main] [-- ARGS]`
#include <fstream>
#include <iostream>

#include "interp/check/checker.h"
#include "interp/cli/commands.h"
#include "interp/devices/devices.h"
#include "interp/eval/interpreter.h"

namespace ss::cli {

int cmd_run(const std::vector<std::string>& args) {
  std::string file, entry = "main";
  std::vector<std::string> program_args;
  check::Options opts;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      program_args.assign(args.begin() + i + 1, args.end());
      break;
    }
    if (a == "--entry" && i + 1 < args.size()) {
      entry = args[++i];
    } else if (ProgramOption o = program_option("run", args, i, opts);
               o != ProgramOption::NotMine) {
      if (o == ProgramOption::Bad) return kExitUsage;
    } else if (a == "--help" || a == "-h") {
      std::cout << "usage: ss run FILE [--devices SPEC] [-D NAME=SIZE]... "
                   "[--entry main] [-- ARGS]\n";
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
    std::cerr << "usage: ss run FILE [--devices SPEC] [-D NAME=SIZE]... "
                 "[--entry main] [-- ARGS]\n";
    return kExitUsage;
  }
  if (!readable(file)) return kExitRuntime;
  diag::SourceMap sm;
  diag::Diagnostics diags;
  auto prog = check::check_file(file, sm, diags, opts);
  if (!prog) {
    std::cerr << diag::render_terminal(diags, sm);
    return kExitStatic;
  }
  if (!prog->fn(entry)) {
    std::cerr << file << ": error: no `fn " << entry << "()` to run\n";
    return kExitUsage;
  }
  if (prog->devices().kind == "cuda") {
    // The GPU backend is a separately built module (ops/no_cuda stubs here).
    std::cerr << file
              << ": error: the program asks for cuda devices, but this ss "
                 "was built without the CUDA backend; run it on the CPU "
                 "with --devices cpu or --devices 'cpu[0 1 2]'\n";
    return kExitRuntime;
  }
  // Several devices: worker processes run it (a mesh's spmd fns too: an
  // instance on each worker).
  if (prog->devices().count() > 1 && prog->devices().kind == "cpu") {
    devices::DeviceRunOptions run_opts;
    run_opts.worker_args =
        devices::worker_run_args(file, opts, entry, program_args);
    run_opts.program_args = program_args;
    run_opts.entry = entry;
    devices::DeviceRun run =
        devices::run_program_on_devices(*prog, sm, std::cout, run_opts);
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
  return devices::worker_main(args);
}

std::string bad_device_environment() {
  return devices::bad_device_environment();
}

}  // namespace ss::cli
