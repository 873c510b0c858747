// The controller's side of `ss run` on several devices: the workers,
// started on first need (LazyPool), and the program's calls into them
// (Controller), sent ahead of their results where the program only
// writes or drops them (Note [Async dispatch] in
// interp/devices/controller/async_dispatch.cpp).
#pragma once

#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dist/control/control.h"
#include "interp/devices/protocol/program_sources.h"
#include "interp/devices/protocol/wire.h"
#include "interp/eval/interpreter.h"
#include "interp/eval/runtime_error.h"

namespace ss::devices::controller {

/// How `ss run` starts a worker per device of [prog]: [worker_args]
/// (worker_run_args), one BLAS thread each, calls as long as their fns.
dist::LaunchOptions worker_launch_options(
    const check::Program& prog, const std::vector<std::string>& worker_args);

/// The workers, started when the program first needs the devices (its
/// first call into a worker fn: devices.md), each told to check the
/// program once.
class LazyPool {
 public:
  /// [ready]: what the workers are sent once they are up, before the first
  /// call (`ss repl`: the session's declarations).
  explicit LazyPool(dist::LaunchOptions lo,
                    std::function<void(dist::WorkerPool&)> ready = {})
      : lo_(std::move(lo)), ready_(std::move(ready)) {}
  /// The program the workers check when they start, as text (Note [The
  /// program travels as text]); none: the repl declares it later.
  void set_program(const protocol::ProgramSources& s);
  dist::WorkerPool& get();
  dist::WorkerPool* started() { return pool_.get(); }

 private:
  dist::LaunchOptions lo_;
  std::string program_;  // kInit's payload
  std::function<void(dist::WorkerPool&)> ready_;
  std::unique_ptr<dist::WorkerPool> pool_;
};

/// What takes the result of a call sent ahead of it (Note [Async
/// dispatch]), when the call settles.
using Later = std::function<void(eval::Value)>;

class Controller : public eval::NewerCopies {
 public:
  /// At most this many calls run ahead of the controller: the one the
  /// workers are running and the next, already in their queues.
  static constexpr size_t kInFlight = 2;

  Controller(LazyPool& pool,
             const check::Program& prog,
             const diag::SourceMap& sm,
             eval::Interpreter& in);

  /// `ss repl`: the calls come from [in] (running [prog], checked from
  /// [sm]) from now on; the handles sent so far stay on the workers.
  void bind(const check::Program& prog,
            const diag::SourceMap& sm,
            eval::Interpreter& in);
  /// Between two inputs: no Interpreter to settle (a model read after its
  /// input, to print it, is fetched at once).
  void unbind() { in_ = nullptr; }
  /// Whether the workers can run more calls: no call failed in a way that
  /// left their group (protocol::leaves_group).
  bool workers_usable() const { return usable_; }
  /// Every model and optimizer sent to the workers and still held here.
  void each_store_sent(
      const std::function<void(eval::ModelStore&)>& model,
      const std::function<void(eval::OptimState&)>& optim) const {
    codec_.each_sent(model, optim);
  }

  /// A call of the worker fn [fn]: the first worker's result. With
  /// [later], the call is sent and Value::unit() returned at once; its
  /// result goes to [later] when it settles.
  std::optional<eval::Value> call(const check::FnInfo& fn,
                                  std::vector<eval::Value>& args,
                                  diag::Span site,
                                  Later later);
  /// A call of the spmd fn [fn] from a controller frame: each worker runs
  /// its instance on its blocks of [args], and the joined result comes
  /// back; the instances' prints are printed here (spmd_call.cpp).
  eval::Value call_spmd(const check::FnInfo& fn,
                        const std::vector<eval::Value>& args,
                        diag::Span site);
  /// Waits for every call sent ahead, in order, handing each result on.
  /// A call that failed raises its error here; the calls sent after it
  /// are dropped (the workers skipped them).
  void settle();

  /// The stores a call changed are newer on the workers (eval::sync):
  /// copies a model's tensors or an optimizer's state from rank 0.
  void fetch(eval::ModelStore& s) override;
  void fetch(eval::OptimState& o) override;
  /// One tensor, whole, and an optimizer's layout: a streaming save.
  ops::Tensor fetch_tensor(const eval::ModelStore& s,
                           const std::string& path) override;
  ops::Tensor fetch_tensor(const eval::OptimState& o,
                           const std::string& path,
                           const std::string& state) override;
  void fetch_layout(const eval::OptimState& o, eval::OptimState& out) override;

  uint64_t calls() const { return calls_; }
  uint64_t fetches() const { return fetches_; }
  /// Calls sent while the one before was still running.
  uint64_t calls_ahead() const { return ahead_; }
  /// SHAPESCRIPT_CONTROL_STATS' line: these counters and [pool]'s
  /// messages ("control: 9 calls, 24 messages to 2 workers, ...").
  std::string stats(const dist::WorkerPool& pool) const;

 private:
  /// A call of a worker fn, where the program made it.
  struct CallSite {
    std::string fn;                       // the worker fn called
    diag::Span site;                      // where it was called
    std::vector<eval::StackEntry> stack;  // the `.ss` stack it left from
  };
  struct InFlight {
    uint64_t id = 0;
    std::string what;  // "running `f` (a.ss:3:5)"
    diag::Span loop;   // where a bad batch is raised
    CallSite call;
    Later later;
    /// The call's Train/Eval arguments, in order: their draws come back.
    std::vector<std::shared_ptr<eval::Object>> modes;
  };

  void settle_first();
  /// The program's error among [replies] of call [c] (none kOk): a
  /// worker's own error before the collective failures it caused.
  [[noreturn]] void raise_failed(const std::vector<dist::Message>& replies,
                                 const InFlight& c);
  eval::Value finish(InFlight& c);
  void drop_in_flight(bool workers_went_on);
  dist::Message reply(char what_store,
                      uint64_t id,
                      const std::string& extra,
                      const std::string& what);
  /// A worker stopped (killed, exited) during call [c], or [after] it:
  /// the WorkerError in the usual form, at the call's site with its `.ss`
  /// stack.
  [[noreturn]] void worker_stopped(const dist::WorkerError& e,
                                   const CallSite& c,
                                   bool after = false);
  [[noreturn]] void raise(devices::protocol::Reader& r,
                          int rank,
                          const std::vector<eval::StackEntry>& stack);

  LazyPool& pool_;
  const diag::SourceMap* sm_;
  eval::Interpreter* in_;
  devices::protocol::Codec codec_;
  bool shard_params_;  // the workers hold pieces (or heads) of params
  bool usable_ = true;
  std::deque<InFlight> in_flight_;
  uint64_t calls_ = 0, fetches_ = 0, ahead_ = 0;
  std::chrono::steady_clock::time_point last_alive_check_{};
  CallSite last_call_;  // where a worker that dies between calls is reported
};

}  // namespace ss::devices::controller
