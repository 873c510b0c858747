#pragma once
// The embedding API: ShapeScript from a host language (issue 27). One
// header, and all a host needs: load and check a program, call its fns,
// builtins and methods with the host's values, read what comes back. The
// Python module (python/) is its first user; it reaches nothing of the
// interpreter but this header and ops/core's Tensor.
//
// Note [Host calls are checked as ShapeScript]
// A call from the host is checked by the checker, as if the user had
// written it: `prog.train_step(m, opt, batch)` becomes a fn of the host's
// values, `fn __host_3(mut __a0: Mlp, mut __a1: AdamW[Mlp], __a2: [b_2]
// Digit): train_step(__a0, __a1, __a2)`, checked with the program's
// declarations and run as the repl runs what is typed (Note [Repl inputs]
// in interp/cli/repl.cpp): every error a call can hold is the language's
// own, with its code and message, and nothing runs unchecked. Each value
// the host holds keeps the checked type it came back with, which its next
// call declares. A tensor from the host has no type yet: it is given the
// one its parameter expects, axis by axis, where its sizes fit (a dim of
// that size, a size variable bound alike by every argument), and is a
// ShapeError saying which axis does not (embed/host_types.cpp). The
// checked program of each call's text is kept, keyed by the text, so a
// training loop's steps are checked once. On several devices the calls run
// as the repl's do: the host is the controller, and the workers start at
// the first call that needs them (Note [Repl sessions on devices]).

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ops/core/tensor.h"

namespace ss::embed {

struct Held;
class HostDataset;
class Session;

/// One diagnostic of a program that did not check, as `ss check` prints
/// it.
struct Problem {
  std::string code;  // "E0302"
  std::string message;
  std::string file;  // "" when it has no location
  uint32_t line = 0, column = 0;
  std::string text;  // as `ss check` prints it: location, caret, notes
};

/// The program did not check: every diagnostic, sorted.
struct CheckFailed : std::exception {
  CheckFailed() = default;
  std::vector<Problem> problems;
  std::string text;  // all of them, as `ss check` prints them
  const char* what() const noexcept override { return text.c_str(); }
};

/// A runtime error (errors.md: ShapeError, DomainError, ValueError,
/// IOError, ImportError, WorkerError, KeyboardInterrupt) raised by a call.
struct Error : std::exception {
  Error() = default;
  Error(std::string kind, std::string message)
      : kind(std::move(kind)), message(std::move(message)) {}
  std::string kind;
  std::string message;
  std::string location;  // `file:line:col` of the innermost `.ss` site
  std::string text;      // as `ss run` prints it (location, caret, stack)
  /// Its notes and help lines, then the `.ss` stack (most recent last).
  std::vector<std::string> notes;
  std::vector<std::string> stack;
  /// What `ss run` exits with for it (diag/exit_codes.h): 2 for a runtime
  /// error, 3 for a WorkerError, 64 for a run that was asked wrongly (no
  /// such entry fn, hosts that do not fit the program).
  int exit_code = 2;
  /// WorkerError: which worker stopped, how, what it was running, where.
  int worker = -1;
  std::string how, running, where;
  const char* what() const noexcept override { return message.c_str(); }
};

/// A value a call returned, as the host sees it.
class Value {
 public:
  enum class Kind {
    Unit,
    Int,
    Float,
    Bool,
    Str,
    Tensor,
    Tuple,
    List,
    Record,  // one record, or a batch of records
    Logs,
    Model,
    Optim,
    Grads,
    Mode,
    Dataset,
    Batches,
    Sink,
    Other  // types, axes, fn values
  };
  Value() = default;
  explicit Value(std::shared_ptr<const Held> h) : h_(std::move(h)) {}

  Kind kind() const;
  /// Its checked type as ShapeScript writes it (`[b C] f32`, `AdamW[Mlp]`).
  std::string type_text() const;
  int64_t as_int() const;
  double as_float() const;
  bool as_bool() const;
  const std::string& as_str() const;
  /// Tensor: the tensor (its storage shared, not copied).
  const ops::Tensor& tensor() const;
  /// Tuple, List: the items.
  std::vector<Value> items() const;
  /// Record (its fields, tensors), Logs (its entries), in order.
  std::vector<std::pair<std::string, Value>> entries() const;
  /// Model: its record name, or a record's; Optim: its kind ("AdamW").
  std::string type_name() const;
  /// Can be walked by a `for` loop (Dataset, Batches, List, ...).
  bool iterable() const;
  /// The number of items when known (a dataset's length), else -1.
  int64_t length() const;

  const Held* held() const { return h_.get(); }
  const std::shared_ptr<const Held>& shared() const { return h_; }

 private:
  std::shared_ptr<const Held> h_;
};

/// One argument of a host call: a value the host holds, or one of its
/// own (a tensor, a number, a string), or text written into the call as
/// it is (a type's name: `Digit`, `true`).
struct Arg {
  enum class Kind { Held, Tensor, Int, Float, Bool, Str, Text, Tuple };
  Kind kind = Kind::Held;
  std::string keyword;  // "" for a positional argument
  Value held;
  ops::Tensor tensor;
  int64_t i = 0;
  double f = 0;
  bool b = false;
  std::string s;  // Str, Text
  std::vector<Arg> items;

  static Arg of(Value v, std::string kw = "");
  static Arg of_tensor(ops::Tensor t, std::string kw = "");
  static Arg of_int(int64_t v, std::string kw = "");
  static Arg of_float(double v, std::string kw = "");
  static Arg of_bool(bool v, std::string kw = "");
  static Arg of_str(std::string v, std::string kw = "");
  static Arg of_text(std::string text, std::string kw = "");
};

struct LoadOptions {
  /// Replaces the file's device list (`cpu[0 1 2]`); "": the file's.
  std::string devices;
  /// `-D NAME=SIZE`.
  std::map<std::string, int64_t> dims;
  /// `--deterministic`: N devices compute one device's bits (the device
  /// list's `deterministic` option).
  bool deterministic = false;
  /// The workers' command up to the `worker` word (a host language's
  /// interpreter and module); empty: this executable, as `ss worker`.
  std::vector<std::string> worker_command;
  /// "NAME=VALUE" set in each worker's environment.
  std::vector<std::string> worker_env;
  /// The name the host's calls go by in locations (`<python>`).
  std::string host_name = "<host>";
};

/// What checking a program found, as `ss check` reports it.
struct CheckReport {
  /// It checked: it may run. (Every diagnostic is an error today.)
  bool ok = false;
  std::vector<Problem> problems;
  /// Errors counted past the ones kept (Note [The first errors] in
  /// diag/diagnostic.cpp); the last problem's note says so too.
  size_t more = 0;
  std::string text;   // as `ss check` prints them; "" when none
  std::string json;   // as `ss check --json` prints them, when asked
  std::string types;  // `ss check --types`: each declaration's type, when
                      // asked and it checked
};

/// The renderings a CheckReport holds beside its problems and text.
struct CheckRenderings {
  bool json = false;
  bool types = false;
};

/// `ss check`: reads and checks [path] with [opts]'s devices and dims.
/// Throws Error (IOError) when the file cannot be read.
CheckReport check(const std::string& path,
                  const LoadOptions& opts,
                  const CheckRenderings& want = {});

/// Where a run's workers run (issue 26), as `ss run`'s options write it:
/// `--hosts`, `--hostfile`, `--launch`, `--listen`, `--token-file`,
/// `--heartbeat-timeout`. Nothing given: on this machine.
struct Placement {
  std::string hosts, hostfile, launch, listen, token_file;
  std::optional<double> heartbeat_timeout_s;
  bool any() const {
    return !hosts.empty() || !hostfile.empty() || !launch.empty() ||
           !listen.empty() || !token_file.empty() || heartbeat_timeout_s;
  }
};

struct RunOptions {
  LoadOptions load;
  /// The fn to run, and what its `list[str]` parameter holds, if it has
  /// one (`ss run FILE -- ARGS`).
  std::string entry = "main";
  std::vector<std::string> args;
  Placement placement;
  /// Set (from any thread) to stop the run: it raises KeyboardInterrupt
  /// at its next statement, and the workers end.
  volatile int* interrupt = nullptr;
  /// Called on the caller's thread every 50 ms while the program runs
  /// (where a host sees its Ctrl-C and sets [interrupt]).
  std::function<void()> poll;
};

/// `ss run`: reads and checks [path] and runs its entry fn to the end on
/// the program's devices (several: worker processes, as `ss run` starts
/// them), the program's print going to [out]. Throws CheckFailed, or an
/// Error whose exit_code is `ss run`'s. [err] gets the controller's
/// counters (SHAPESCRIPT_CONTROL_STATS).
void run(const std::string& path,
         const RunOptions& opts,
         std::ostream& out,
         std::ostream& err);

/// A loaded, checked program, and the values its calls made: what the
/// host's `shapescript.load` returns. Not thread-safe: one call at a time.
class Session {
 public:
  /// Reads and checks [path]; throws CheckFailed, or Error (IOError) when
  /// the file cannot be read. [out]: where the program's print goes.
  static std::unique_ptr<Session> load(const std::string& path,
                                       const LoadOptions& opts,
                                       std::ostream& out);
  ~Session();  // ends the workers

  /// The declarations, by kind, in source order.
  std::vector<std::string> fns() const;  // user fns (not the stdlib's)
  std::vector<std::string> models() const;
  std::vector<std::string> records() const;
  std::map<std::string, int64_t> dims() const;
  /// A user fn's parameters (name, type as written) and result type.
  std::vector<std::pair<std::string, std::string>> params(
      const std::string& fn) const;
  std::string result(const std::string& fn) const;
  /// The device list in effect, as written (`cpu[0 1 2]`).
  std::string devices() const;
  /// The extern fns whose target is the host's (not `nn.`): (fn, target).
  std::vector<std::pair<std::string, std::string>> externs() const;

  /// Calls [callee] with [args] (Note [Host calls are checked as
  /// ShapeScript]): a user fn's name, a builtin's (`adamw`), a model's
  /// initializer (`Mlp.init`), or, with [method], a method of the first
  /// argument (`batches`). Throws Error.
  Value call(const std::string& callee,
             std::vector<Arg> args,
             bool method = false);
  /// [v]'s field [name] (a model's param or sub-model, a record's field).
  Value field(const Value& v, const std::string& name);
  /// A model's tensors by path, whole (copied from the first worker).
  std::vector<std::pair<std::string, ops::Tensor>> state_dict(const Value& m);

  /// `TensorDataset(R, field=tensor, ...)`: a Dataset[R] over the host's
  /// tensors (each [n ...], the item axis first), kept without a copy and
  /// checked once, now, as a dataset read from a file is: a field of the
  /// wrong shape or dtype a ShapeError, a value outside its domain a
  /// DomainError, each naming the item and the field. [per_item]: a
  /// size-variable field's tensors (`tokens: [n] i64`), one per item.
  Value tensor_dataset(
      const std::string& record,
      std::vector<std::pair<std::string, ops::Tensor>> fields,
      std::vector<std::pair<std::string, std::vector<ops::Tensor>>> per_item =
          {});

  /// A Dataset[R] of [n] items read from the host's [src] as batches load,
  /// checked then (a batch whole; a ShapeError or DomainError names the
  /// item and the field).
  Value host_dataset(const std::string& record,
                     int64_t n,
                     std::shared_ptr<const HostDataset> src);

  /// Walks [v] as a `for` loop does.
  class Cursor {
   public:
    virtual ~Cursor() = default;
    /// The next item, or nothing at the end. Throws Error.
    virtual std::optional<Value> next() = 0;
  };
  std::unique_ptr<Cursor> iterate(const Value& v);

  /// Asks the running call to stop (Ctrl-C): it raises KeyboardInterrupt
  /// at its next statement, and the workers stop theirs. Any thread.
  void interrupt();
  /// [poll] runs on the caller's thread about every 50 ms while a call
  /// runs (where a host sees its Ctrl-C and calls interrupt()): on one
  /// device from within the call, at its statements, since the caller's
  /// thread runs it on a deep stack (DeepStack); with workers, while it
  /// waits for the session's DeepThread.
  void set_poll(std::function<void()> poll);

  struct Impl;

 private:
  explicit Session(std::unique_ptr<Impl> impl);
  Value call_here(const std::string& callee,
                  const std::vector<Arg>& args,
                  bool method);
  std::unique_ptr<Impl> impl_;
};

/// A thread with the evaluator's deep stack (Note [A deep stack] in
/// interp/cli/main.cpp), kept for a session's life: its workers are
/// started from it, and PR_SET_PDEATHSIG ends a worker when the thread
/// that started it ends, not only its process.
class DeepThread {
 public:
  DeepThread();
  ~DeepThread();
  /// Runs [body] there and waits for it, rethrowing what it threw;
  /// [poll] is called here every 50 ms meanwhile (a host checks its
  /// signals). One body at a time.
  void run(const std::function<void()>& body,
           const std::function<void()>& poll = {});

 private:
  struct State;
  std::unique_ptr<State> s_;
};

/// The evaluator's deep stack (Note [A deep stack] in interp/cli/main.cpp)
/// on the caller's own thread: a body runs there by switching stacks, not
/// threads (Note [Switching to the deep stack] in deep_stack.cpp).
class DeepStack {
 public:
  DeepStack();
  ~DeepStack();
  /// Runs [body] on the deep stack, on this thread, rethrowing what it
  /// threw. Called from within a body, runs it where it is.
  void run(const std::function<void()>& body);

 private:
  struct State;
  std::unique_ptr<State> s_;
};

/// What a host function raised (Note [Extern fns of a host language] in
/// interp/eval/extern_host.h): [payload] is the host's own encoding of
/// it, which an Error of kind "HostError" carries back as a note starting
/// with host_note().
struct HostException : std::runtime_error {
  HostException(const std::string& message, std::string payload)
      : std::runtime_error(message), payload(std::move(payload)) {}
  std::string payload;
};
const char* host_note();

/// A host language's extern fns: [call] runs [target] ("augment.crop")
/// with the arguments (tensors, numbers, strings) and returns its result
/// (a Tensor, Int or Float Arg); it throws HostException for what the
/// function raised, and std::runtime_error when the target cannot be
/// imported. Set once per process, before the first call (the Python
/// module at its import, and each of its workers).
using ExternCall = std::function<Arg(const std::string& target,
                                     const std::vector<Value>& args)>;
void set_extern_call(ExternCall call);

/// A dataset written in the host language (Note [Datasets written in a
/// host language] in interp/data/dataset.h): its items' fields, a batch
/// at a time, read on the loader threads.
class HostDataset {
 public:
  virtual ~HostDataset() = default;
  /// Items [rows]: each field stacked, [rows.size() ...]. Throws
  /// HostException for what the host's object raised.
  virtual std::vector<std::pair<std::string, ops::Tensor>> load(
      const std::vector<int64_t>& rows) const = 0;
  /// What makes it again in a worker (set_host_dataset_maker), or "".
  virtual std::string payload() const = 0;
};
/// Makes a host dataset again from its payload, in a worker of the host's.
using HostDatasetMaker = std::function<std::shared_ptr<const HostDataset>(
    const std::string& payload)>;
void set_host_dataset_maker(HostDatasetMaker make);

/// How `progress(...)` draws: one summary line at the end, a terminal's
/// bar (carriage returns and an escape that clears the line), or a
/// notebook's (carriage returns, the line padded: its output renders no
/// escape sequence).
enum class ProgressDrawing { Summary, Terminal, Notebook };
/// Where `progress(...)` draws in this process, and how. Null: stderr,
/// as a terminal's bar where it is one.
void set_progress_output(std::ostream* err, ProgressDrawing how);

/// What `ss`'s main does before anything runs: the runtime builtins'
/// table (Note [The runtime table]). Idempotent; nothing process-wide.
void prepare();

/// `ss worker ARGS`: a worker's whole life, in a host language's process
/// started by a Session's worker_command (the same code `ss worker`
/// runs). Returns its exit code.
int worker_main(const std::vector<std::string>& args);

}  // namespace ss::embed
