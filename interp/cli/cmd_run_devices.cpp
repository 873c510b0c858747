// `ss run` on several devices (`cpu[0 1 2]`, devices.md items 2, 6, 8, 11).
//
// The controller (this process) runs `main` and every controller and
// anywhere fn itself, in an Interpreter without a DeviceContext: prints,
// sinks, files and progress bars happen here, once. When the program first
// needs the devices (its first call into a worker fn) it starts one `ss
// worker` per device; each checks the same program once (kInit), joins
// the Gloo group and keeps one Interpreter with its DeviceContext. A call
// of a worker fn from a controller frame is one kCall message to every
// worker: the fn's name, the call site and the arguments (interp/eval/
// wire.h: models and optimizer states as handles, sent whole the first
// time). Each worker runs Interpreter::call (which splits the batch-axis
// arguments and joins a batch-axis result) and rank 0 answers with the
// result. A model or optimizer passed as `mut` is then newer on the
// workers: reading it here (m.w1, opt.step, save, printing) copies it from
// rank 0 first (kFetch, one message). A worker that dies stops the run
// with a WorkerError (exit 3).
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <streambuf>

#include "dist/comm/gloo_comm.h"
#include "dist/control/control.h"
#include "interp/check/checker.h"
#include "interp/cli/commands.h"
#include "interp/eval/devices.h"
#include "interp/eval/interpreter.h"
#include "interp/eval/lib/batch_shares.h"
#include "interp/eval/lib/batches.h"
#include "interp/eval/wire.h"
#include "ops/cpu/cpu_backend.h"

namespace ss::cli {

namespace {

using eval::wire::Codec;
using eval::wire::Reader;
using eval::wire::Writer;

constexpr uint32_t kInit = 101;   // check the program, join the group
constexpr uint32_t kCall = 102;   // call a worker fn
constexpr uint32_t kFetch = 103;  // rank 0: a store's tensors / state

// A reply's first byte.
// kData: a batch's rows could not be loaded, no step started.
constexpr uint8_t kOk = 0, kRuntime = 1, kFailed = 2, kData = 3;

struct NullBuf : std::streambuf {
  int overflow(int c) override { return c; }
};

std::string where(const diag::SourceMap& sm, diag::Span site) {
  if (site.file >= sm.size()) return "?";
  diag::LineCol lc = sm.line_col(site.file, site.begin);
  return sm.file(site.file).path + ":" + std::to_string(lc.line) + ":" +
         std::to_string(lc.column);
}

void write_span(Writer& w, diag::Span s) {
  w.u32(s.file);
  w.u32(s.begin);
  w.u32(s.end);
}

diag::Span read_span(Reader& r) {
  diag::Span s;
  s.file = r.u32();
  s.begin = r.u32();
  s.end = r.u32();
  return s;
}

// Serves the controller's calls. Other message kinds go to the test
// handler (dist/control's tests drive `ss worker` with them).
class ProgramHandler : public dist::Handler {
 public:
  explicit ProgramHandler(const dist::WorkerArgs& a)
      : args_(a), echo_(dist::make_echo_handler(a)), null_(&nb_) {}

  dist::Message handle(const dist::Message& m) override {
    dist::Message reply{m.kind, m.id, {}};
    if (m.kind == kInit) {
      reply.payload = init();
      return reply;
    }
    if (m.kind != kCall && m.kind != kFetch) return echo_->handle(m);
    if (!in_) throw std::runtime_error("the worker was not started");
    Writer w;
    try {
      Reader r(m.payload);
      if (m.kind == kFetch)
        fetch(r, w);
      else
        call(r, w);
    } catch (const eval::RuntimeError& e) {
      w.buf.clear();
      w.u8(kRuntime);
      w.str(e.kind());
      w.str(e.message());
      write_span(w, e.span());
      w.u32(static_cast<uint32_t>(e.stack().size()));
      for (const eval::StackEntry& s : e.stack()) {
        w.str(s.fn);
        write_span(w, s.site);
      }
      w.u32(static_cast<uint32_t>(e.notes().size()));
      for (const std::string& n : e.notes()) w.str(n);
    } catch (const std::exception& e) {
      w.buf.clear();
      w.u8(kFailed);
      w.str(e.what());
    }
    reply.payload = std::move(w.buf);
    return reply;
  }

 private:
  // extra: FILE [-D N=S]... [--devices SPEC] [--entry E] [-- ARGS]
  std::string init() {
    std::string file;
    check::Options opts;
    const auto& x = args_.extra;
    for (size_t i = 0; i < x.size(); ++i) {
      if (x[i] == "--") break;
      if (x[i] == "--entry" && i + 1 < x.size()) {
        ++i;
      } else if (x[i] == "--collective-timeout" && i + 1 < x.size()) {
        dist::set_default_collective_timeout(std::chrono::milliseconds(
            static_cast<int64_t>(std::stod(x[++i]) * 1000.0)));
      } else if (program_option("worker", x, i, opts) ==
                 ProgramOption::NotMine) {
        file = x[i];
      }
    }
    diag::Diagnostics diags;
    prog_ = check::check_file(file, sm_, diags, opts);
    if (!prog_) return "static\n" + diag::render_terminal(diags, sm_);
    // N workers share the machine's cores: one BLAS thread each, unless the
    // user chose (OPENBLAS_NUM_THREADS); spinning BLAS threads of several
    // processes on few cores cost more than they give.
    if (!std::getenv("OPENBLAS_NUM_THREADS")) ops::set_cpu_threads(1);
    // Joining the group waits for every worker, as a collective does: the
    // collective timeout covers it (a worker stopped while starting).
    dist::worker_set_status("waiting for the other workers to connect", true);
    comm_ =
        std::make_unique<dist::GlooComm>(args_.rank, args_.world, args_.store);
    dist::worker_set_status("idle");
    d_.rank = args_.rank;
    d_.world = args_.world;
    d_.comm = comm_.get();
    d_.on_step = [this](const std::string& fn, const std::string& at) {
      set_running(fn, at);
    };
    d_.on_wait = [this](bool waiting) {
      if (waiting)
        dist::worker_set_status(
            "waiting for the other workers at " + where(sm_, d_.at), true);
      else
        dist::worker_set_status(running_);
    };
    in_ = std::make_unique<eval::Interpreter>(*prog_, sm_, null_);
    in_->set_devices(&d_);
    codec_ = std::make_unique<Codec>(Codec::Side::Worker, *prog_);
    shares_ = std::make_unique<eval::BatchShares>(args_.rank, args_.world);
    return "";
  }

  void call(Reader& r, Writer& w) {
    std::string name = r.str();
    diag::Span site = read_span(r);
    const check::FnInfo* fn = prog_->fn(name);
    if (!fn) throw std::runtime_error("the program has no fn `" + name + "`");
    set_running(name, where(sm_, site));
    std::vector<eval::Value> args;
    for (uint32_t n = r.u32(), i = 0; i < n; ++i)
      args.push_back(codec_->read(r));
    d_.at = site;  // the ranks agree on the call's batches here
    if (std::optional<eval::ShareFailure> bad = shares_->resolve(args, d_)) {
      w.u8(kData);
      w.u8(bad->here);
      w.str(bad->kind);
      w.str(bad->message);
      return;
    }
    eval::Value v = in_->call(*fn, std::move(args), site);
    w.u8(kOk);
    // Every worker has the same result: the first one's is the call's.
    if (args_.rank == 0) codec_->write(w, v);
  }

  void fetch(Reader& r, Writer& w) {
    uint8_t what = r.u8();
    uint64_t id = r.u64();
    w.u8(kOk);
    if (what == 'm') {
      auto s = codec_->model(id);
      if (!s) throw std::runtime_error("no model " + std::to_string(id));
      Codec::write_tensors(w, *s);
    } else {
      auto o = codec_->optim(id);
      if (!o) throw std::runtime_error("no optimizer " + std::to_string(id));
      Codec::write_optim_state(w, *o);
    }
  }

  dist::WorkerArgs args_;
  std::unique_ptr<dist::Handler> echo_;
  NullBuf nb_;
  std::ostream null_;
  diag::SourceMap sm_;
  std::unique_ptr<check::Program> prog_;
  std::unique_ptr<dist::GlooComm> comm_;
  eval::DeviceContext d_;
  std::unique_ptr<eval::Interpreter> in_;
  std::unique_ptr<Codec> codec_;
  std::unique_ptr<eval::BatchShares> shares_;
  std::string running_;  // the status while a call runs

  void set_running(const std::string& fn, const std::string& at) {
    running_ = "running `" + fn + "` at " + at;
    dist::worker_set_status(running_);
  }
};

// The controller's side of the calls.
// The workers, started when the program first needs the devices (its first
// call into a worker fn: devices.md), each told to check the program once.
class LazyPool {
 public:
  explicit LazyPool(dist::LaunchOptions lo) : lo_(std::move(lo)) {}
  dist::WorkerPool& get() {
    if (!pool_) {
      // The collective timeout in effect now (SHAPESCRIPT_COLLECTIVE_TIMEOUT
      // or collective_timeout(seconds) before this first call): the pool
      // reports a worker waiting longer than that, with where each worker
      // was. The workers' own (Gloo's) timeout is set later than it, so
      // that report comes first.
      double t =
          std::chrono::duration<double>(dist::default_collective_timeout())
              .count();
      lo_.collective_timeout = std::chrono::duration<double>(t);
      lo_.extra_args.insert(
          lo_.extra_args.begin(),
          {"--collective-timeout", std::to_string(t + std::max(5.0, t / 10))});
      pool_ = dist::WorkerPool::start(lo_);
      std::vector<dist::Message> ready =
          pool_->call_all(dist::Message{kInit, 0, {}}, "starting the workers");
      for (const dist::Message& m : ready)
        if (!m.payload.empty())
          throw std::runtime_error(m.payload.substr(m.payload.find('\n') + 1));
    }
    return *pool_;
  }
  dist::WorkerPool* started() { return pool_.get(); }

 private:
  dist::LaunchOptions lo_;
  std::unique_ptr<dist::WorkerPool> pool_;
};

class Controller {
 public:
  Controller(LazyPool& pool,
             const check::Program& prog,
             const diag::SourceMap& sm,
             eval::Interpreter& in)
      : pool_(pool), sm_(sm), in_(in), codec_(Codec::Side::Controller, prog) {}

  std::optional<eval::Value> call(const check::FnInfo& fn,
                                  std::vector<eval::Value>& args,
                                  diag::Span site) {
    Writer w;
    w.str(fn.name);
    write_span(w, site);
    w.u32(static_cast<uint32_t>(args.size()));
    codec_.sent_models.clear();
    codec_.sent_optims.clear();
    // The stores of `mut` params: newer on the workers after the call.
    std::vector<std::shared_ptr<eval::ModelStore>> models;
    std::vector<std::shared_ptr<eval::OptimState>> optims;
    for (size_t i = 0; i < args.size(); ++i) {
      size_t m0 = codec_.sent_models.size(), o0 = codec_.sent_optims.size();
      try {
        codec_.write(w, args[i]);
      } catch (const eval::wire::WireError& e) {
        in_.fail("ValueError", site, e.what());
      }
      if (i < fn.params.size() && fn.params[i].mut) {
        models.insert(models.end(),
                      codec_.sent_models.begin() + m0,
                      codec_.sent_models.end());
        optims.insert(optims.end(),
                      codec_.sent_optims.begin() + o0,
                      codec_.sent_optims.end());
      }
    }
    // Train modes entering device work: the controller counts the entry
    // (language.md, Randomness); the workers received the count before it
    // and count the same entry in their own call.
    for (size_t i = 0; i < args.size() && i < fn.params.size(); ++i)
      if (args[i].kind == eval::Value::Kind::Mode) {
        auto* m = args[i].as<eval::ModeState>();
        ++m->calls;
        m->draws = 0;
      }
    ++calls_;
    std::string what = "`" + fn.name + "` (" + where(sm_, site) + ")";
    std::vector<dist::Message> replies = pool_.get().call_all(
        dist::Message{kCall, 0, std::move(w.buf)}, "running " + what);
    for (auto& s : models) s->remote_newer = true;
    for (auto& o : optims) o->remote_newer = true;
    for (size_t rank = 0; rank < replies.size(); ++rank) {
      Reader r(replies[rank].payload);
      uint8_t status = r.u8();
      if (status == kOk) continue;
      if (status == kData) {
        if (r.u8() == 0) continue;  // another worker found it
        std::string kind = r.str();
        in_.fail(kind, loop_of(args, site), r.str());
      }
      if (status == kRuntime) raise(r, static_cast<int>(rank));
      throw std::runtime_error("worker " + std::to_string(rank) + " failed " +
                               "while running " + what + ": " + r.str());
    }
    Reader r(replies[0].payload);
    r.u8();
    return codec_.read(r);
  }

  void fetch(eval::ModelStore& s) {
    Writer w;
    w.u8('m');
    w.u64(s.remote_id);
    std::string bytes = reply(w, "copying a model from the workers");
    Reader r(bytes);
    Codec::read_tensors(r, s);
    s.remote_newer = false;
  }

  void fetch(eval::OptimState& o) {
    Writer w;
    w.u8('o');
    w.u64(o.remote_id);
    std::string bytes =
        reply(w, "copying an optimizer's state from the workers");
    Reader r(bytes);
    Codec::read_optim_state(r, o);
    o.remote_newer = false;
  }

  uint64_t calls() const { return calls_; }
  uint64_t fetches() const { return fetches_; }

 private:
  std::string reply(Writer& w, const std::string& what) {
    ++fetches_;
    dist::Message m =
        pool_.get().call(0, dist::Message{kFetch, 0, std::move(w.buf)}, what);
    if (m.payload.empty() || m.payload[0] != kOk)
      throw std::runtime_error(what + " failed");
    return m.payload.substr(1);
  }

  // The worker's runtime error, raised here with the controller's stack
  // before the worker's.
  [[noreturn]] void raise(Reader& r, int rank) {
    std::string kind = r.str();
    std::string message = r.str();
    diag::Span span = read_span(r);
    eval::RuntimeError e(kind, message, span);
    e.stack() = in_.stack();
    for (uint32_t n = r.u32(), i = 0; i < n; ++i) {
      eval::StackEntry s;
      s.fn = r.str();
      s.site = read_span(r);
      e.stack().push_back(s);
    }
    for (uint32_t n = r.u32(), i = 0; i < n; ++i) e.notes().push_back(r.str());
    e.notes().push_back("raised on worker " + std::to_string(rank) + " of " +
                        std::to_string(pool_.get().world()));
    throw e;
  }

  // Where a bad item of a call's batch is raised: its loop, as on one
  // device.
  static diag::Span loop_of(const std::vector<eval::Value>& args,
                            diag::Span site) {
    for (const eval::Value& v : args)
      if (v.kind == eval::Value::Kind::Record)
        if (const auto& lazy = v.as<eval::RecordValue>()->lazy)
          return lazy->loop;
    return site;
  }

  LazyPool& pool_;
  const diag::SourceMap& sm_;
  eval::Interpreter& in_;
  Codec codec_;
  uint64_t calls_ = 0, fetches_ = 0;
};

struct ResetHooks {
  ~ResetHooks() {
    eval::fetch_model_hook = nullptr;
    eval::fetch_optim_hook = nullptr;
  }
};

}  // namespace

void register_program_worker() {
  dist::set_worker_handler_factory([](const dist::WorkerArgs& a) {
    return std::unique_ptr<dist::Handler>(new ProgramHandler(a));
  });
}

int run_on_devices(const std::vector<std::string>& run_args,
                   const check::Program& prog,
                   const diag::SourceMap& sm,
                   const std::vector<std::string>& program_args,
                   const std::string& entry) {
  dist::LaunchOptions lo;
  lo.world = static_cast<int>(prog.devices().count());
  lo.extra_args = run_args;
  // A call's length is its fn's: a stuck collective is caught inside the
  // workers by its own timeout (Gloo's), which fails that worker's call.
  lo.call_timeout = std::chrono::hours(24 * 365);
  const bool stats = std::getenv("SHAPESCRIPT_CONTROL_STATS") != nullptr;
  int rc = kExitOk;
  try {
    LazyPool pool(lo);
    eval::Interpreter in(prog, sm, std::cout);
    Controller c(pool, prog, sm, in);
    ResetHooks reset;
    eval::fetch_model_hook = [&c](eval::ModelStore& s) { c.fetch(s); };
    eval::fetch_optim_hook = [&c](eval::OptimState& o) { c.fetch(o); };
    in.set_remote_call(
        [&c](const check::FnInfo& fn,
             std::vector<eval::Value>& args,
             diag::Span site) { return c.call(fn, args, site); });
    try {
      in.run_main(program_args, entry);
    } catch (const eval::RuntimeError& e) {
      std::cout.flush();
      std::cerr << eval::render_runtime_error(e, sm);
      rc = kExitRuntime;
    }
    std::cout.flush();
    if (dist::WorkerPool* started = pool.started()) {
      if (stats)
        std::cerr << "control: " << c.calls() << " calls, "
                  << started->messages_sent() << " messages to "
                  << started->world() << " workers, " << c.fetches()
                  << " fetches\n";
      started->stop();
    }
  } catch (const dist::WorkerError& e) {
    std::cout.flush();
    std::cerr << "error: WorkerError: " << e.what() << "\n";
    if (!e.stderr_tail.empty()) std::cerr << e.stderr_tail << "\n";
    return kExitWorker;
  } catch (const std::exception& e) {
    std::cout.flush();
    std::cerr << "error: WorkerError: " << e.what() << "\n";
    return kExitWorker;
  }
  return rc;
}

}  // namespace ss::cli
