// The worker's side of `ss run` on several devices (devices.md items 2, 6,
// 8, 11): the program server behind `ss worker`. It checks the program once
// (kInit), joins the Gloo group and keeps one Interpreter with its
// RankContext; each kCall runs a worker fn (the context splits the
// batch-axis arguments and joins a batch-axis result) and rank 0 answers
// with the result; kFetch sends a model or optimizer state back. For `ss
// repl` the program comes as text instead, again at each input that
// declares something (kDeclare: a new Interpreter on the new program, the
// stores kept), and SIGINT stops a call at its next statement (Note [Repl
// sessions on devices] in controller/repl_devices.cpp). The controller's
// side is interp/devices/controller/.
#include "interp/devices/worker/program_server.h"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "dist/comm/communicator.h"
#include "dist/control/control.h"
#include "interp/check/checker.h"
#include "interp/check/program_options.h"
#include "interp/devices/gpu_ranks.h"
#include "interp/devices/lower/batch_shares.h"
#include "interp/devices/lower/heads.h"
#include "interp/devices/lower/lowering.h"
#include "interp/devices/lower/rank_context.h"
#include "interp/devices/lower/shards.h"
#include "interp/devices/lower/worker_mesh.h"
#include "interp/devices/null_buf.h"
#include "interp/devices/protocol/messages.h"
#include "interp/devices/protocol/program_sources.h"
#include "interp/devices/protocol/session_text.h"
#include "interp/devices/protocol/wire.h"
#include "interp/devices/worker/test_hooks.h"
#include "interp/eval/extern_host.h"
#include "interp/eval/interpreter.h"
#include "interp/eval/spmd/blocks.h"
#include "interp/eval/spmd/instance.h"
#include "ops/core/big_blocks.h"
#include "ops/core/storage_bytes.h"
#include "ops/cpu/cpu_backend.h"

namespace ss::devices::worker {

namespace {

using devices::protocol::Codec;
using devices::protocol::Reader;
using devices::protocol::Writer;

using namespace protocol;

// Note [A worker's idle heap]
// The heap keeps freed step buffers for the next step (ops/core/tensor.cpp:
// blocks up to 256 MiB stay in it, 512 MiB may sit free at its top), and
// pages freed in its middle are never returned: with a model of three
// [3072 3072] f32 params, each step's differently placed buffers grew a
// worker's RSS by 100-250 MiB a step until it held twice what it used.
// So between two calls, when the heap holds more free than the call's own
// buffers needed (the tensors' peak in the call above what stays live)
// and half again, plus 64 MiB, its free pages go back to the system
// (malloc_trim). It used to trim whenever more than 64 MiB and a quarter
// of what was in use lay free: a step whose buffers pass 64 MiB (the
// transformer block of bench/deterministic_bench.py at 32 rows a worker)
// then gave them all back after every call and page-faulted them in
// again, 5x its step time. Steps whose free heap stays within what they
// need keep it, and pay nothing.
void release_idle_heap(int64_t call_peak) {
#if defined(__GLIBC__)
  constexpr size_t kKeepFree = size_t{64} << 20;
  const int64_t live = ops::storage_bytes().live;
  const size_t need =
      call_peak > live ? static_cast<size_t>(call_peak - live) : 0;
  const struct mallinfo2 m = mallinfo2();
  if (m.fordblks > kKeepFree + need + need / 2) malloc_trim(0);
#else
  (void)call_peak;
#endif
}

// SS_MEMORY_REPORT=1: after each call, one line on stderr with what the
// call's tensors held at their peak beside the process's VmHWM and the
// heap (Note [Counting storage bytes] in ops/core/storage_bytes.cpp).
void report_memory(int rank, const std::string& fn) {
  static const bool on = std::getenv("SS_MEMORY_REPORT") != nullptr;
  if (!on) return;
  std::fprintf(stderr,
               "ss worker %d: memory after %s: %s\n",
               rank,
               fn.c_str(),
               ops::memory_report().c_str());
  ops::reset_storage_peak();
}

// Set by SIGINT in a repl's worker (--interruptible): the controller's
// Ctrl-C, passed on. The running call raises KeyboardInterrupt at its next
// statement.
volatile int g_interrupted = 0;
void on_sigint(int) {
  g_interrupted = 1;
}

// Serves the controller's calls. Other message kinds go to the test
// handler (dist/control's tests drive `ss worker` with them).
class ProgramHandler : public dist::Handler {
 public:
  explicit ProgramHandler(const dist::WorkerArgs& a)
      : args_(a), echo_(dist::make_echo_handler(a)), null_(&nb_) {}

  dist::Message handle(dist::Message& m) override {
    dist::Message reply{m.kind, m.id, {}};
    if (m.kind == kInit) {
      reply.payload = init(m.payload);
      return reply;
    }
    if (m.kind == kDeclare && comm_) {
      reply.payload = declare(m.payload);
      return reply;
    }
    if (m.kind == kDigest && in_) {
      reply.payload = digests(m.payload);
      return reply;
    }
    const bool is_call =
        m.kind == kCall || m.kind == kCallAfter || m.kind == kSpmdCall;
    if (m.kind == kStores && in_) {
      reply.payload = stores();
      return reply;
    }
    if (!is_call && m.kind != kFetch) return echo_->handle(m);
    if (!in_) throw std::runtime_error("the worker was not started");
    Writer w;
    if (m.kind == kCallAfter && last_failed_) {
      w.u8(kSkipped);
      reply.payload = std::move(w.buf);
      return reply;
    }
    // Until it returns kOk, a call counts as failed (a handler that throws
    // past the catches below is a failure too).
    // A Ctrl-C that came after the last call ended is not this one's.
    if (is_call) {
      last_failed_ = true;
      g_interrupted = 0;
      failed_kind_.clear();
    }
    try {
      Reader r(m.payload);
      if (m.kind == kFetch) {
        fetch(r, w);
        report_memory(args_.rank, "a fetch");
      } else if (m.kind == kSpmdCall)
        spmd_call(r, w);
      else
        call(r, w, m.payload);
    } catch (const eval::RuntimeError& e) {
      failed_kind_ = e.kind();
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
    if (m.kind == kSpmdCall && !w.buf.empty()) {
      // What the instance printed, before its error too (kSpmdCall).
      Writer p;
      p.u32(static_cast<uint32_t>(spmd_prints_.size()));
      for (const std::string& e : spmd_prints_) p.str(e);
      w.buf.insert(1, p.buf);
      spmd_prints_.clear();
    }
    if (is_call) last_failed_ = w.buf.empty() || w.buf[0] != kOk;
    // Note [A call that failed alone]: a call that failed here alone (an
    // index out of range in this worker's rows) leaves the others waiting
    // in its next collective: leaving the group fails them at once,
    // instead of at the collective timeout, and the controller raises this
    // worker's error (the run ends with it: Controller::finish).
    if (is_call && last_failed_ && comm_ && !w.buf.empty() &&
        leaves_group(uint8_t(w.buf[0]), failed_kind_)) {
      comm_->close();
      if (mesh_) mesh_->close();
    }
    reply.payload = std::move(w.buf);
    return reply;
  }

 private:
  // The devices the program runs on: its `devices` line (which --devices
  // overrides), or, before the repl has sent one, --devices.
  check::DeviceList devices_of(const check::Options& opts) const {
    if (prog_) return prog_->devices();
    check::DeviceList dl;
    if (!opts.devices_override.empty())
      check::parse_device_spec(opts.devices_override, dl);
    return dl;
  }

  // extra: [-D N=S]... [--devices SPEC] [--entry E] [-- ARGS]; [program]:
  // the program's files (Note [The program travels as text]), or none
  // (the repl's kDeclare brings it).
  std::string init(const std::string& program) {
    check::Options opts;
    const auto& x = args_.extra;
    for (size_t i = 0; i < x.size(); ++i) {
      if (x[i] == "--") break;
      if (x[i] == "--entry" && i + 1 < x.size()) {
        entry_ = x[++i];
      } else if (x[i] == "--final-params") {
        keep_final_ = true;
      } else if (x[i] == "--interruptible") {
        struct sigaction sa {};
        sa.sa_handler = on_sigint;
        sa.sa_flags = SA_RESTART;  // Gloo's and the queue's waits go on
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, nullptr);
      } else if (x[i] == "--collective-timeout" && i + 1 < x.size()) {
        dist::set_default_collective_timeout(std::chrono::milliseconds(
            static_cast<int64_t>(std::stod(x[++i]) * 1000.0)));
      } else if (check::program_option("worker", x, i, opts) ==
                 check::ProgramOption::NotMine) {
        return "static\nss worker: unknown option '" + x[i] + "'";
      }
    }
    // A worker of a host language's controller (a Python worker) imports
    // the host's extern modules itself (Note [Extern fns of a host
    // language]).
    opts.host_externs = eval::extern_host() != nullptr;
    opts_ = opts;
    if (!program.empty()) {
      Reader r(program);
      auto sm = std::make_unique<diag::SourceMap>();
      diag::Diagnostics diags;
      std::unique_ptr<check::Program> prog = protocol::check_program_sources(
          protocol::read_program_sources(r), *sm, diags, opts);
      if (!prog) return "static\n" + diag::render_terminal(diags, *sm);
      use(std::move(prog), std::move(sm));
    }
    // N workers share the machine's cores: one BLAS thread each, unless the
    // user chose (OPENBLAS_NUM_THREADS); spinning BLAS threads of several
    // processes on few cores cost more than they give.
    if (!std::getenv("OPENBLAS_NUM_THREADS")) ops::set_cpu_threads(1);
    // Joining the group waits for every worker, as a collective does: the
    // collective timeout covers it (a worker stopped while starting).
    dist::worker_set_status("waiting for the other workers to connect", true);
    const check::DeviceList devices = devices_of(opts);
    d_.transport = rank_transport(devices, args_.rank);
    // A GPU rank opens the CUDA module before its first value (the
    // controller has checked that it loads and has the GPUs).
    if (std::string why = missing_gpus(devices); !why.empty())
      return "static\nss worker: the program asks for cuda devices, but " + why;
    // Tensors the controller sends land on this rank's device (Note
    // [Several GPUs] in interp/devices/gpu_ranks.cpp).
    protocol::Reader::place_on(d_.device());
    comm_ = d_.transport.join(args_.rank, args_.world, args_.store);
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
            "waiting for the other workers at " + where_called(d_.at), true);
      else
        dist::worker_set_status(running_);
    };
    context_ = std::make_unique<lower::RankContext>(d_);
    if (keep_final_) context_->keep_final_params();
    if (prog_) start_interpreter();
    // Tests make one worker fail alone after its Nth call ran, when the
    // others went on (async_dispatch_test): "RANK:N" throws, "RANK:N:stop"
    // stops the process (SIGSTOP) before it answers; "RANK:N:exit" ends
    // it before its Nth call runs, so its peers meet its absence inside
    // that call's collectives (recorded_ranks_test). Only in ss_test_hooks
    // (Note [Test hooks]).
    const char* f = test_hooks_enabled()
                        ? std::getenv("SHAPESCRIPT_TEST_FAIL_CALL")
                        : nullptr;
    if (f) {
      int rank = -1;
      long n = 0;
      char how[8] = "";
      if (std::sscanf(f, "%d:%ld:%7s", &rank, &n, how) >= 2 &&
          rank == args_.rank) {
        fail_at_call_ = n;
        stop_instead_ = std::string(how) == "stop";
        exit_before_ = std::string(how) == "exit";
      }
    }
    return "";
  }

  // The program the calls run from now on; the ones before stay, as the
  // stores that arrived under them point into them.
  void use(std::unique_ptr<check::Program> prog,
           std::unique_ptr<diag::SourceMap> sm) {
    prog_ = prog.get();
    sm_ = sm.get();
    programs_.push_back(std::move(prog));
    sources_.push_back(std::move(sm));
  }

  // What the program's devices block asks of this rank: a mesh program's
  // instance, `split H`'s heads, `shard params`' pieces, and whose rows of
  // a batch it loads.
  void set_up_layout() {
    if (!prog_->mesh().empty()) {
      mesh_ = std::make_unique<devices::lower::WorkerMesh>(
          eval::spmd::MeshShape(prog_->mesh()), d_, args_.store);
      d_.mesh = mesh_.get();
    }
    codec_ = std::make_unique<Codec>(Codec::Side::Worker, *prog_);
    d_.deterministic = prog_->devices().deterministic;
    if (d_.deterministic)
      ops::pin_blas_to_one_thread();  // Note [One BLAS thread]
    else
      ops::warm_up_cpu_backend();  // overlaps the program's loading
    d_.kernels = kernels_of(d_.device());
    // Tests make worker RANK report other kernels: "RANK:NAME" (Note [Test
    // hooks]).
    if (const char* k = test_hooks_enabled()
                            ? std::getenv("SHAPESCRIPT_TEST_KERNELS")
                            : nullptr;
        k && std::atoi(k) == args_.rank && std::strchr(k, ':'))
      d_.kernels = std::strchr(k, ':') + 1;
    const std::string& split = prog_->devices().split_dim;
    if (!split.empty() && args_.world > 1) {
      // `split H`: whole batches; the values typed with H, params
      // included, hold this rank's heads (Note [Split heads]).
      d_.split_dim = split;
      d_.split_size = prog_->dims().at(split);
    }
    const bool shard = prog_->devices().shard_params;
    if (shard || d_.whole_batches()) {
      // Each store keeps this rank's heads, then its pieces of the other
      // params (Note [Sharded params]).
      codec_->model_arrived = [this, shard](eval::ModelStore& s) {
        if (d_.whole_batches())
          devices::lower::cut_store_heads(
              s, d_.split_dim, args_.rank, args_.world);
        if (shard) devices::lower::shard_store(s, args_.rank, args_.world);
      };
      codec_->optim_arrived = [this, shard](eval::OptimState& o) {
        if (d_.whole_batches())
          devices::lower::cut_optim_heads(o, args_.rank, args_.world);
        if (shard) devices::lower::shard_optim(o, args_.rank, args_.world);
      };
    }
    // A mesh program splits no batch: a worker fn gets it whole, and an
    // spmd fn's types cut it (devices.md, Which checks apply); nor does
    // `split H` (Note [Split heads]).
    shares_ = mesh_ || d_.whole_batches()
                  ? std::make_unique<devices::lower::BatchShares>(
                        0, 1, false, d_.device())
                  : std::make_unique<devices::lower::BatchShares>(
                        args_.rank, args_.world, d_.deterministic, d_.device());
  }

  // An Interpreter on the program in use; the codec (and the stores it
  // keeps) reads that program's names.
  void start_interpreter() {
    in_ = std::make_unique<eval::Interpreter>(*prog_, *sm_, null_);
    in_->set_device_hooks(context_.get());
    in_->set_interrupt_flag(&g_interrupted);
    if (codec_) {
      codec_->set_program(*prog_);
      return;
    }
    // The first program sets up the layout; a session's later programs
    // keep it (a new device list starts new workers: Note [Repl sessions
    // on devices]).
    set_up_layout();
  }

  // kDeclare: the session's declarations, checked as the repl checked
  // them (Note [The session's text]).
  std::string declare(const std::string& payload) {
    Reader r(payload);
    protocol::SessionText t = protocol::read_session_text(r);
    auto sm = std::make_unique<diag::SourceMap>();
    diag::Diagnostics diags;
    std::unique_ptr<check::Program> prog =
        check_session_text(t, *sm, diags, opts_);
    if (!prog) return "static\n" + diag::render_terminal(diags, *sm);
    use(std::move(prog), std::move(sm));
    start_interpreter();
    return "";
  }

  // kDigest: this worker's copy of each store, as one number.
  std::string digests(const std::string& payload) {
    Reader r(payload);
    Writer w;
    w.u8(kOk);
    for (uint32_t n = r.u32(), i = 0; i < n; ++i) {
      uint8_t what = r.u8();
      uint64_t id = r.u64();
      Writer bytes;
      if (what == 'm') {
        if (auto s = codec_->model(id))
          Codec::write_tensors(bytes, *devices::lower::whole_store(*s, d_));
      } else if (auto o = codec_->optim(id)) {
        Codec::write_optim_state(bytes, *devices::lower::whole_optim(*o, d_));
      }
      uint64_t h = 0;
      if (!bytes.buf.empty()) {
        h = 1469598103934665603ull;  // FNV-1a
        for (char c : bytes.buf) h = (h ^ uint8_t(c)) * 1099511628211ull;
      }
      w.u64(h);
    }
    return std::move(w.buf);
  }

  // [payload]: [r]'s bytes, let go once the arguments are read (a model
  // sent whole is as large as its params: the step needs its tensors, not
  // both).
  void call(Reader& r, Writer& w, std::string& payload) {
    std::string name = r.str();
    diag::Span site = read_span(r);
    const check::FnInfo* fn = prog_->fn(name);
    if (!fn) throw std::runtime_error("the program has no fn `" + name + "`");
    set_running(name, where_called(site));
    std::vector<eval::Value> args;
    try {
      for (uint32_t n = r.u32(), i = 0; i < n; ++i)
        args.push_back(codec_->read(r));
    } catch (const protocol::DatasetMismatch& e) {
      throw eval::RuntimeError("IOError", e.what(), site);
    }
    std::string().swap(payload);  // r is not read again
    d_.at = site;                 // the ranks agree on the call's batches here
    if (std::optional<devices::lower::ShareFailure> bad =
            shares_->resolve(args, d_)) {
      w.u8(kData);
      w.u8(bad->here);
      w.str(bad->kind);
      w.str(bad->message);
      w.u32(static_cast<uint32_t>(bad->notes.size()));
      for (const std::string& n : bad->notes) w.str(n);
      return;
    }
    // Train/Eval arguments: their draws in this call go back with the
    // result (Note [Modes' draws] in controller.cpp).
    std::vector<std::shared_ptr<eval::Object>> modes;
    for (const eval::Value& a : args)
      if (a.kind == eval::Value::Kind::Mode) modes.push_back(a.obj);
    ops::reset_storage_peak();
    if (exit_before_ && calls_ + 1 == fail_at_call_) std::_Exit(1);
    eval::Value v = in_->call(*fn, std::move(args), site);
    const int64_t call_peak = ops::storage_bytes().peak;
    report_memory(args_.rank, name);
    release_idle_heap(call_peak);
    // A main without host effects runs here whole (a worker fn): its
    // final params are this worker's to report.
    if (keep_final_ && name == entry_) entry_final_ = context_->final_params();
    if (++calls_ == fail_at_call_ && !exit_before_) {
      if (stop_instead_) ::raise(SIGSTOP);
      throw std::runtime_error("failed as SHAPESCRIPT_TEST_FAIL_CALL asked");
    }
    w.u8(kOk);
    // Every worker has the same result: the first one's is the call's.
    if (args_.rank != 0) return;
    codec_->write(w, v);
    w.u32(static_cast<uint32_t>(modes.size()));
    for (const auto& m : modes)
      w.u64(static_cast<const eval::ModeState*>(m.get())->draws);
  }

  // This worker's instance of an spmd fn the controller called, on the
  // blocks it sent (kSpmdCall). The reply carries the instance's prints
  // after its status, whether it returned or failed (handle()).
  void spmd_call(Reader& r, Writer& w) {
    std::string name = r.str();
    diag::Span site = read_span(r);
    const check::FnInfo* fn = prog_->fn(name);
    if (!fn || !mesh_)
      throw std::runtime_error("the program has no spmd fn `" + name + "`");
    set_running(name, where(*sm_, site));
    eval::spmd::InstanceRun run;
    run.prog = prog_;
    run.sm = sm_;
    run.fn = fn;
    run.site = site;
    for (uint32_t n = r.u32(), i = 0; i < n; ++i) {
      // 1: a model's handle, whole, which this worker cuts.
      const bool whole = r.u8() != 0;
      eval::Value v = codec_->read(r);
      if (whole && i < fn->params.size())
        v = eval::spmd::param_block(
            mesh_->shape(), mesh_->me(), v, fn->params[i]);
      run.args.push_back(std::move(v));
    }
    d_.at = site;
    try {
      mesh_->run(run);
    } catch (...) {
      // A collective the others left (a failed instance): the reply is
      // that failure, with what this instance printed before it.
      spmd_prints_ = run.out.entries();
      throw;
    }
    spmd_prints_ = run.out.entries();
    if (run.error) {
      run.error->notes().push_back(
          eval::spmd::instance_note(mesh_->shape(), mesh_->me()));
      throw *run.error;
    }
    w.u8(kOk);
    codec_->write(w, run.result);
  }

  // A store's tensors, whole: with `shard params` every worker is asked
  // and gathers its pieces with the others (devices::lower::whole_store).
  // Only rank 0's answer is read: the others gather with it and answer
  // kOk alone (the controller would hold every worker's copy at once).
  void fetch(Reader& r, Writer& w) {
    // The big blocks kept for the next step's buffers (Note [Big blocks])
    // go back first: a fetch comes between steps (a save, a read in the
    // controller), and its reply is a tensor's size again, beside them.
    ops::big_blocks_release();
    uint8_t what = r.u8();
    uint64_t id = r.u64();
    w.u8(kOk);
    Writer ignored;
    Writer& out = args_.rank == 0 ? w : ignored;
    if (what == 'p' || what == 'q' || what == 'l')
      return fetch_piece(what, id, r, out);
    if (what == 'm') {
      auto s = codec_->model(id);
      if (!s) throw std::runtime_error("no model " + std::to_string(id));
      auto whole = devices::lower::gathered_store(*s, d_);
      if (args_.rank == 0) Codec::write_tensors(w, *whole);
    } else {
      auto o = codec_->optim(id);
      if (!o) throw std::runtime_error("no optimizer " + std::to_string(id));
      auto whole = devices::lower::gathered_optim(*o, d_);
      if (args_.rank == 0) Codec::write_optim_state(w, *whole);
    }
  }

  // One tensor of a store, whole, or an optimizer's layout: a streaming
  // save (Note [A streaming save] in interp/builtins/checkpoint.cpp).
  void fetch_piece(uint8_t what, uint64_t id, Reader& r, Writer& w) {
    if (what == 'p') {
      auto s = codec_->model(id);
      if (!s) throw std::runtime_error("no model " + std::to_string(id));
      w.tensor(devices::lower::gathered_tensor(*s, r.str(), d_));
      return;
    }
    auto o = codec_->optim(id);
    if (!o) throw std::runtime_error("no optimizer " + std::to_string(id));
    if (what == 'l') return Codec::write_optim_state(w, *o, /*tensors=*/false);
    std::string path = r.str(), state = r.str();
    ops::Tensor t = devices::lower::gathered_state(*o, path, state, d_);
    w.u8(t.defined());
    if (t.defined()) w.tensor(t);
  }

  std::string stores() {
    Writer w;
    w.u8(kOk);
    std::vector<uint64_t> ids = codec_->model_ids();
    w.u32(static_cast<uint32_t>(ids.size()));
    for (uint64_t id : ids) {
      w.u64(id);
      Codec::write_tensors(
          w, *devices::lower::gathered_store(*codec_->model(id), d_));
    }
    w.u8(entry_final_.has_value());
    if (entry_final_) {
      w.i64(entry_final_->steps);
      w.u32(static_cast<uint32_t>(entry_final_->params.size()));
      for (const auto& [name, t] : entry_final_->params) {
        w.str(name);
        w.tensor(t);
      }
    }
    return std::move(w.buf);
  }

  dist::WorkerArgs args_;
  std::unique_ptr<dist::Handler> echo_;
  NullBuf nb_;
  std::ostream null_;
  check::Options opts_;
  // Every program checked so far (one for `ss run`; one per declaring
  // input for `ss repl`) and the one in use.
  std::vector<std::unique_ptr<check::Program>> programs_;
  std::vector<std::unique_ptr<diag::SourceMap>> sources_;
  check::Program* prog_ = nullptr;
  diag::SourceMap* sm_ = nullptr;
  std::unique_ptr<dist::Communicator> comm_;
  devices::lower::DeviceContext d_;
  std::unique_ptr<devices::lower::WorkerMesh>
      mesh_;  // a mesh program's instance
  std::unique_ptr<lower::RankContext> context_;
  std::unique_ptr<eval::Interpreter> in_;
  std::unique_ptr<Codec> codec_;
  std::unique_ptr<devices::lower::BatchShares> shares_;
  std::vector<std::string> spmd_prints_;  // the last instance's prints
  std::string running_;                   // the status while a call runs
  bool last_failed_ = false;              // the last call's reply was not kOk
  std::string failed_kind_;               // the last runtime error's kind
  long calls_ = 0, fail_at_call_ = 0;
  bool stop_instead_ = false, exit_before_ = false;
  std::string entry_ = "main";
  // --final-params (ss conformance): the entry fn's, when it ran here.
  bool keep_final_ = false;
  std::optional<eval::FinalParams> entry_final_;

  // A repl's call site lies past the end of the declarations checked here:
  // the controller's text goes on with the input's statements.
  std::string where_called(diag::Span site) const {
    if (site.file < sm_->size() &&
        site.begin >= sm_->file(site.file).text.size())
      return "the repl's input";
    return where(*sm_, site);
  }

  void set_running(const std::string& fn, const std::string& at) {
    running_ = "running `" + fn + "` at " + at;
    dist::worker_set_status(running_);
  }
};

}  // namespace

int worker_main(const std::vector<std::string>& args) {
  dist::set_worker_handler_factory([](const dist::WorkerArgs& a) {
    return std::unique_ptr<dist::Handler>(new ProgramHandler(a));
  });
  return dist::worker_entry(args);
}

std::string bad_device_environment() {
  std::string bad;
  dist::collective_timeout_from_env(&bad);
  return bad;
}

}  // namespace ss::devices::worker
