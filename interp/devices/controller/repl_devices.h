#pragma once
// The devices of an `ss repl` session (issue 14 item 1): its `ss worker`
// processes, started at the session's first call of a worker fn and kept
// for the session, which run each input's calls of worker fns as `ss
// run`'s controller sends them (Note [Repl sessions on devices]).

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "dist/control/control.h"
#include "interp/check/checker.h"
#include "interp/devices/protocol/session_text.h"
#include "interp/eval/interpreter.h"

namespace ss::devices::controller {

class ReplDevices {
 public:
  /// [opts]: the session's -D and --devices, which every worker checks
  /// with; [interrupted]: the repl's SIGINT flag, polled while a call
  /// waits.
  ReplDevices(check::Options opts, volatile int* interrupted);
  ~ReplDevices();  // ends the workers

  /// Where the workers of a device list of N go (`ss repl --hosts`):
  /// nothing for this host's children.
  using RemoteFor = std::function<std::optional<dist::RemoteOptions>(int)>;
  void set_remote(RemoteFor f) { remote_ = std::move(f); }
  /// Changes how the workers start (a host language's worker command and
  /// environment: embed::LoadOptions), applied when they start.
  using Launch = std::function<void(dist::LaunchOptions&)>;
  void set_launch(Launch f) { launch_ = std::move(f); }

  /// The session's declarations are now [decls] (checked: [prog]): the
  /// workers check them again at once if they run, else when they start.
  /// A new device list ends the workers, their newer state copied back.
  /// Returns "" or why the workers ended (their state is then lost()).
  std::string declare(protocol::SessionText decls, const check::Program& prog);
  /// Runs [body], the statements of an input run by [in] (its `fn` at
  /// [input]), as the controller: a call of a worker fn goes to the
  /// session's workers. Rethrows the input's RuntimeError after deciding
  /// what of the devices' state survives it (lost()).
  void run(eval::Interpreter& in,
           diag::Span input,
           const std::function<void()>& body);
  /// Why [v]'s state is gone, when it holds a model or optimizer whose
  /// state went with the workers (or whose copies came apart) as the last
  /// input failed; else "".
  std::string lost(const eval::Value& v) const;
  /// `:reset`: ends the workers and forgets the declarations.
  void reset();

 private:
  struct Workers;
  void forget(bool bring_back);
  void after_failure(const eval::RuntimeError& e);
  void keep_agreeing(dist::WorkerPool& p);
  void declare_on(dist::WorkerPool& p);

  check::Options opts_;
  volatile int* interrupted_;
  RemoteFor remote_;
  Launch launch_;
  protocol::SessionText decls_;
  std::unique_ptr<Workers> w_;
  std::map<const void*, std::string> lost_;  // a store, and why
};

/// The stores (ModelStore, OptimState) a value holds, through tuples and
/// lists.
void stores_of(const eval::Value& v, std::set<const void*>& out);

}  // namespace ss::devices::controller
