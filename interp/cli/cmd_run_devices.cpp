// `ss run` on several devices (`cpu[0 1 2]`): the controller starts one
// `ss worker` process per device; each worker checks the same program and
// runs it as its rank with real Gloo collectives on loopback
// (interp/eval/devices.cpp), host effects on rank 0, whose output is the
// program's. A worker that dies stops the run with a WorkerError (exit 3).
//
// This first multi-process form runs every fn on every worker (data
// parallel by construction: batches split, reductions all-reduced,
// gradients summed); moving controller fns into the `ss` process with
// workers serving calls (devices.md's placement at run time) comes next.
#include <iostream>
#include <sstream>
#include <streambuf>

#include "dist/comm/gloo_comm.h"
#include "dist/control/control.h"
#include "interp/check/checker.h"
#include "interp/cli/commands.h"
#include "interp/eval/devices.h"
#include "interp/eval/interpreter.h"
#include "ops/cpu/cpu_backend.h"

namespace ss::cli {

namespace {

constexpr uint32_t kRunProgram = 100;

struct NullBuf : std::streambuf {
  int overflow(int c) override { return c; }
};

// Runs the program as this worker's rank. Other message kinds go to the
// test handler (dist/control's tests drive `ss worker` with them).
class ProgramHandler : public dist::Handler {
 public:
  explicit ProgramHandler(const dist::WorkerArgs& a)
      : args_(a), echo_(dist::make_echo_handler(a)) {}

  dist::Message handle(const dist::Message& m) override {
    if (m.kind != kRunProgram) return echo_->handle(m);
    dist::Message reply{m.kind, m.id, {}};
    // extra: FILE [-D N=S]... [--devices SPEC] [--entry E] [-- ARGS]
    std::string file, entry = "main";
    std::vector<std::string> program_args;
    check::Options opts;
    const auto& x = args_.extra;
    for (size_t i = 0; i < x.size(); ++i) {
      if (x[i] == "--") {
        program_args.assign(x.begin() + i + 1, x.end());
        break;
      }
      if (x[i] == "--entry" && i + 1 < x.size()) {
        entry = x[++i];
      } else if (program_option("worker", x, i, opts) ==
                 ProgramOption::NotMine) {
        file = x[i];
      }
    }
    diag::SourceMap sm;
    diag::Diagnostics diags;
    auto prog = check::check_file(file, sm, diags, opts);
    if (!prog) {
      reply.payload = "static\n" + diag::render_terminal(diags, sm);
      return reply;
    }
    NullBuf nb;
    std::ostream null(&nb);
    // N workers share the machine's cores: one BLAS thread each, unless the
    // user chose (OPENBLAS_NUM_THREADS); spinning BLAS threads of several
    // processes on few cores cost more than they give.
    if (!std::getenv("OPENBLAS_NUM_THREADS")) ops::set_cpu_threads(1);
    try {
      dist::GlooComm comm(args_.rank, args_.world, args_.store);
      eval::DeviceContext d;
      d.rank = args_.rank;
      d.world = args_.world;
      d.comm = &comm;
      d.on_step = [](const std::string& fn, const std::string& where) {
        dist::worker_set_status("running `" + fn + "` at " + where);
      };
      eval::Interpreter in(*prog, sm, args_.rank == 0 ? std::cout : null);
      in.set_devices(&d);
      dist::worker_set_status("running `" + entry + "`");
      in.run_main(program_args, entry);
      std::cout.flush();
    } catch (const eval::RuntimeError& e) {
      std::cout.flush();
      reply.payload = "runtime\n" + eval::render_runtime_error(e, sm);
    } catch (const std::exception& e) {
      reply.payload = "worker\n" + std::string(e.what()) + "\n";
    }
    return reply;
  }

 private:
  dist::WorkerArgs args_;
  std::unique_ptr<dist::Handler> echo_;
};

}  // namespace

void register_program_worker() {
  dist::set_worker_handler_factory([](const dist::WorkerArgs& a) {
    return std::unique_ptr<dist::Handler>(new ProgramHandler(a));
  });
}

int run_on_devices(const std::vector<std::string>& run_args,
                   const check::Program& prog) {
  dist::LaunchOptions lo;
  lo.world = static_cast<int>(prog.devices().count());
  lo.extra_args = run_args;
  lo.inherit_output_rank = 0;
  // The whole run is one call: its length is the program's. A stuck
  // collective is caught inside the workers by its own timeout (Gloo's),
  // which stops that worker's run with an error.
  lo.call_timeout = std::chrono::hours(24 * 365);
  std::vector<dist::Message> replies;
  try {
    auto pool = dist::WorkerPool::start(lo);
    replies = pool->call_all(dist::Message{kRunProgram, 1, {}}, "main");
    pool->stop();
  } catch (const dist::WorkerError& e) {
    std::cout.flush();
    std::cerr << "error: WorkerError: " << e.what() << "\n";
    if (!e.stderr_tail.empty()) std::cerr << e.stderr_tail << "\n";
    return kExitWorker;
  } catch (const std::exception& e) {
    std::cerr << "error: WorkerError: " << e.what() << "\n";
    return kExitWorker;
  }
  // Rank 0's error is the program's; another rank's means a worker failed.
  for (size_t r = 0; r < replies.size(); ++r) {
    const std::string& p = replies[r].payload;
    if (p.empty()) continue;
    size_t nl = p.find('\n');
    std::string kind = p.substr(0, nl);
    std::cerr << p.substr(nl + 1);
    if (kind == "static") return kExitStatic;
    if (kind == "runtime") return kExitRuntime;
    return kExitWorker;
  }
  return kExitOk;
}

}  // namespace ss::cli
