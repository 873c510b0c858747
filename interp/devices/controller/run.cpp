// `ss run` on several devices (`cpu[0 1 2]`, devices.md items 2, 6, 8, 11):
// the controller's run. The workers' side is interp/devices/worker/
// program_server.cpp; the calls' messages are interp/devices/protocol/.
//
// The controller (this process) runs `main` and every controller and
// anywhere fn itself, in an Interpreter with a ControllerContext: prints,
// sinks, files and progress bars happen here, once. When the program first
// needs the devices (its first call into a worker fn) it starts one `ss
// worker` per device (LazyPool). A call of a worker fn from a controller
// frame is one kCall message to every worker: the fn's name, the call site
// and the arguments (protocol/wire.h: models and optimizer states as
// handles, sent whole the first time); rank 0 answers with the result. A
// model or optimizer passed as `mut` is then newer on the workers: reading
// it here (m.w1, opt.step, save, printing) copies it from rank 0 first
// (kFetch, one message). A worker that dies stops the run with a
// WorkerError (exit 3).
#include <chrono>
#include <cstdlib>

#include "diag/exit_codes.h"
#include "dist/control/control.h"
#include "interp/devices/controller/controller.h"
#include "interp/devices/controller/controller_context.h"
#include "interp/devices/controller/device_run.h"
#include "interp/devices/protocol/messages.h"
#include "interp/devices/protocol/program_sources.h"
#include "interp/devices/protocol/wire.h"
#include "interp/eval/interpreter.h"

namespace ss::devices::controller {

namespace {

using devices::protocol::Codec;
using devices::protocol::Reader;
using devices::protocol::Writer;

using namespace protocol;

// What a worker holds at the end (kStores): every model store, by
// "model <id>.<path>", and the entry fn's final params when the entry ran
// on the workers.
struct WorkerFinal {
  eval::FinalParams stores;
  std::optional<eval::FinalParams> entry;
};

std::vector<WorkerFinal> worker_finals(dist::WorkerPool& pool) {
  std::vector<dist::Message> replies =
      pool.call_all(dist::Message{kStores, 0, {}}, "reading the final params");
  std::vector<WorkerFinal> ranks;
  for (const dist::Message& m : replies) {
    if (m.payload.empty() || m.payload[0] != kOk)
      throw std::runtime_error("a worker could not send its final params");
    Reader r(m.payload);
    r.u8();
    WorkerFinal& f = ranks.emplace_back();
    for (uint32_t n = r.u32(), i = 0; i < n; ++i) {
      std::string id = std::to_string(r.u64());
      eval::ModelStore s;
      Codec::read_tensors(r, s);
      for (auto& [path, t] : s.tensors)
        f.stores.params["model " + id + "." + path] = std::move(t);
    }
    if (r.u8()) {
      f.entry.emplace();
      f.entry->steps = r.i64();
      for (uint32_t n = r.u32(), i = 0; i < n; ++i) {
        std::string name = r.str();
        f.entry->params[name] = r.tensor();
      }
    }
  }
  return ranks;
}

}  // namespace

std::vector<std::string> worker_run_args(
    const check::Options& opts,
    const std::string& entry,
    const std::vector<std::string>& program_args) {
  std::vector<std::string> a;
  for (const auto& [n, v] : opts.dim_overrides)
    a.push_back("-D" + n + "=" + std::to_string(v));
  if (!opts.devices_override.empty()) {
    a.push_back("--devices");
    a.push_back(opts.devices_override);
  }
  if (opts.deterministic) a.push_back("--deterministic");
  a.push_back("--entry");
  a.push_back(entry);
  a.push_back("--");
  a.insert(a.end(), program_args.begin(), program_args.end());
  return a;
}

dist::LaunchOptions worker_launch_options(
    const check::Program& prog, const std::vector<std::string>& worker_args) {
  dist::LaunchOptions lo;
  lo.world = static_cast<int>(prog.devices().count());
  lo.extra_args = worker_args;
  // A call's length is its fn's: a stuck collective is caught inside the
  // workers by its own timeout (Gloo's), which fails that worker's call.
  lo.call_timeout = std::chrono::hours(24 * 365);
  // N workers share the machine's cores: one BLAS thread each, unless the
  // user chose. Set before OpenBLAS loads, it starts no thread pool at
  // all: its idle threads spin in sched_yield, which on two cores cost a
  // small step a fifth of its time (measured: 8,000 yields in 200 steps).
  if (!std::getenv("OPENBLAS_NUM_THREADS"))
    lo.env.push_back("OPENBLAS_NUM_THREADS=1");
  return lo;
}

DeviceRun run_program_on_devices(const check::Program& prog,
                                 const diag::SourceMap& sm,
                                 std::ostream& out,
                                 const DeviceRunOptions& opts) {
  dist::LaunchOptions lo = worker_launch_options(prog, opts.worker_args);
  if (opts.final_params)
    lo.extra_args.insert(lo.extra_args.begin(), "--final-params");
  lo.forward_output = opts.forward_worker_output;
  lo.remote = opts.remote;
  lo.command = opts.worker_command;
  // Ctrl-C ends the run and stops the workers (the repl's go on:
  // Note [Interrupting the workers] in dist/control/pool.cpp).
  if (volatile int* f = opts.interrupt)
    lo.interrupted = [f] { return *f != 0; };
  lo.env.insert(lo.env.end(), opts.worker_env.begin(), opts.worker_env.end());
  // Started by hand or by a scheduler, remote workers may take a while.
  if (lo.remote && lo.remote->hosts.empty())
    lo.start_timeout = std::chrono::minutes(10);
  const bool stats = std::getenv("SHAPESCRIPT_CONTROL_STATS") != nullptr;
  DeviceRun run;
  try {
    LazyPool pool(lo);
    pool.set_program(protocol::sources_of(sm));
    eval::Interpreter in(prog, sm, out);
    Controller c(pool, prog, sm, in);
    ControllerContext context(c);
    if (opts.final_params) context.keep_final_params();
    in.set_device_hooks(&context);
    in.set_interrupt_flag(opts.interrupt);
    try {
      in.run_main(opts.program_args, opts.entry);
      in.settle();
      // A worker that died after the last call (Note [A worker that dies
      // between calls] in controller.cpp) is the run's error.
      if (dist::WorkerPool* p = pool.started()) p->check_alive();
    } catch (const eval::RuntimeError& e) {
      // A call still running came first: its error is the program's.
      std::optional<eval::RuntimeError> first;
      try {
        in.settle();
      } catch (const eval::RuntimeError& earlier) {
        first = earlier;
      }
      run.runtime_error = first ? *first : e;
      run.kind = run.runtime_error->kind();
      run.error = eval::render_runtime_error(*run.runtime_error, sm);
      run.exit_code =
          run.kind == "WorkerError" ? diag::kExitWorker : diag::kExitRuntime;
    }
    out.flush();
    if (dist::WorkerPool* started = pool.started()) {
      if (opts.final_params && run.kind.empty()) {
        run.params = context.final_params();
        for (WorkerFinal& f : worker_finals(*started)) {
          eval::FinalParams& p = run.rank_params.emplace_back();
          p = std::move(f.stores);
          if (!f.entry) continue;
          // The entry ran on the workers, not here.
          if (run.rank_params.size() == 1) run.params = *f.entry;
          p.params.insert(f.entry->params.begin(), f.entry->params.end());
        }
      }
      if (stats) run.stats = c.stats(*started);
      started->stop();
    } else if (opts.final_params && run.kind.empty()) {
      run.params = context.final_params();
    }
  } catch (const dist::Interrupted& e) {
    out.flush();
    run.runtime_error = eval::RuntimeError("KeyboardInterrupt", e.what(), {});
    run.kind = "KeyboardInterrupt";
    run.error = eval::render_runtime_error(*run.runtime_error, sm);
    run.exit_code = diag::kExitRuntime;
  } catch (const dist::WorkerError& e) {
    // The workers failed to start, or failed outside any call: no `.ss`
    // location to show.
    out.flush();
    run.kind = "WorkerError";
    run.error =
        diag::render_terminal(diag::unlocated("WorkerError", e.what()), sm);
    if (!e.stderr_tail.empty()) run.error += e.stderr_tail + "\n";
    run.exit_code = diag::kExitWorker;
  } catch (const std::exception& e) {
    out.flush();
    run.kind = "WorkerError";
    run.error =
        diag::render_terminal(diag::unlocated("WorkerError", e.what()), sm);
    run.exit_code = diag::kExitWorker;
  }
  return run;
}

}  // namespace ss::devices::controller
