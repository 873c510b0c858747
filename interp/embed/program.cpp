// `ss check` and `ss run` as the embedding API offers them (embed.h's
// check and run): the CLI's commands are these and their flags, and a host
// language runs a whole program as `ss run` does.
#include <fstream>
#include <sstream>

#include "diag/diagnostic.h"
#include "diag/exit_codes.h"
#include "dist/comm/communicator.h"
#include "interp/check/checker.h"
#include "interp/devices/devices.h"
#include "interp/devices/one_device.h"
#include "interp/embed/check_options.h"
#include "interp/embed/embed.h"
#include "interp/embed/errors.h"
#include "interp/embed/placement.h"
#include "interp/eval/extern_host.h"
#include "interp/eval/interpreter.h"

namespace ss::embed {

check::Options check_options(const LoadOptions& opts) {
  check::Options o;
  o.devices_override = opts.devices;
  o.dim_overrides = opts.dims;
  o.deterministic = opts.deterministic;
  o.host_externs = eval::extern_host() != nullptr;
  return o;
}

namespace {

void must_be_readable(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw Error{"IOError", "cannot read '" + path + "'"};
}

// An error of the run itself, not of its program: no `.ss` location.
Error run_refused(const std::string& path,
                  const std::string& kind,
                  const std::string& message,
                  int exit_code) {
  Error e{kind, message};
  e.text = diag::render_file_error(path, message);
  e.exit_code = exit_code;
  return e;
}

// A program without the fn asked for (issue 32: it was refused with no
// location): E0201 at the start of the file, naming the fns it declares.
Error no_entry(const check::Program& prog,
               const diag::SourceMap& sm,
               const std::string& entry) {
  const ast::Module& main = prog.modules().back();
  std::string fns;
  for (const ast::FnDecl& d : main.fns) {
    if (fns.size() > 60) {
      fns += ", ...";
      break;
    }
    fns += (fns.empty() ? "" : ", ") + d.name;
  }
  const std::string message = "no `fn " + entry + "()` to run";
  diag::Diagnostics ds;
  diag::Diagnostic& d = ds.error(diag::Code::E0201, {main.file, 0, 0}, message);
  d.help(fns.empty() ? "add `fn " + entry + "():`, which the run starts at"
                     : "this file declares " + fns +
                           ": run one with --entry "
                           "NAME, or add `fn " +
                           entry + "():`");
  Error e{"ValueError", message};
  e.text = diag::render_terminal(ds, sm);
  e.exit_code = diag::kExitUsage;
  return e;
}

// A run on several devices ended in [run]'s error, rendered as `ss run`
// prints it: its message is the first line's, after the kind.
Error device_run_error(const devices::controller::DeviceRun& run) {
  std::string first = run.error.substr(0, run.error.find('\n'));
  if (size_t k = first.find(run.kind + ": "); k != std::string::npos)
    first = first.substr(k + run.kind.size() + 2);
  Error e{run.kind, first};
  e.text = run.error;
  e.exit_code = run.exit_code;
  return e;
}

}  // namespace

CheckReport check(const std::string& path,
                  const LoadOptions& opts,
                  const CheckRenderings& want) {
  prepare();
  must_be_readable(path);
  diag::SourceMap sm;
  diag::Diagnostics diags;
  CheckReport r;
  auto prog = check::check_file(path, sm, diags, check_options(opts));
  r.ok = prog != nullptr;
  CheckFailed f = check_failed(diags, sm);
  r.problems = std::move(f.problems);
  r.more = diags.dropped();
  r.text = std::move(f.text);
  if (want.json) r.json = diag::render_json(diags, sm);
  if (want.types && prog) r.types = check::describe_types(*prog);
  return r;
}

void run(const std::string& path,
         const RunOptions& opts,
         std::ostream& out,
         std::ostream& err) {
  prepare();
  must_be_readable(path);
  // A run's collective_timeout is its own (a host language runs one
  // program after another in its process).
  dist::reset_default_collective_timeout();
  // The program's walk wants a deep stack (Note [A deep stack] in
  // interp/cli/main.cpp), and its workers end with the thread that
  // started them: this one, which ends with the run.
  DeepThread deep;
  deep.run(
      [&] {
        diag::SourceMap sm;
        diag::Diagnostics diags;
        const check::Options copts = check_options(opts.load);
        auto prog = check::check_file(path, sm, diags, copts);
        if (!prog) throw check_failed(diags, sm);
        if (!prog->fn(opts.entry)) throw no_entry(*prog, sm, opts.entry);
        if (std::string why = devices::unavailable_devices(*prog); !why.empty())
          throw run_refused(path,
                            "ValueError",
                            "the program asks for " + prog->devices().kind +
                                " devices, but " + why +
                                "; run it on the CPU with --devices cpu or "
                                "--devices 'cpu[0 1 2]'",
                            diag::kExitRuntime);
        const int world = static_cast<int>(prog->devices().count());
        std::optional<dist::RemoteOptions> remote;
        try {
          remote = remote_options(opts.placement, world);
        } catch (const std::invalid_argument& e) {
          Error bad{"ValueError", e.what()};
          bad.exit_code = diag::kExitUsage;
          throw bad;
        }
        // Several devices: worker processes run it (a mesh's spmd fns
        // too: an instance on each worker).
        if (world > 1) {
          devices::controller::DeviceRunOptions ro;
          ro.remote = std::move(remote);
          ro.worker_args = devices::controller::worker_run_args(
              copts, opts.entry, opts.args);
          ro.program_args = opts.args;
          ro.entry = opts.entry;
          ro.worker_command = opts.load.worker_command;
          ro.worker_env = opts.load.worker_env;
          ro.interrupt = opts.interrupt;
          devices::controller::DeviceRun r =
              devices::controller::run_program_on_devices(*prog, sm, out, ro);
          out.flush();
          err << r.stats;
          if (r.runtime_error) throw to_error(*r.runtime_error, sm);
          if (!r.kind.empty()) throw device_run_error(r);
          return;
        }
        try {
          eval::Interpreter in(*prog, sm, out);
          std::unique_ptr<devices::Context> one =
              devices::one_device_context(*prog);
          in.set_device_hooks(one.get());
          in.set_interrupt_flag(opts.interrupt);
          in.run_main(opts.args, opts.entry);
        } catch (const eval::RuntimeError& e) {
          out.flush();
          throw to_error(e, sm);
        }
        out.flush();
      },
      opts.poll);
}

}  // namespace ss::embed
