#pragma once
// The tree-walking evaluator. It accepts only a checked program, runs
// statements in order and dispatches each tensor op to its forward
// (ops/defs, written with ops/api.h) and every other builtin to its
// runtime implementation (interp/builtins/).

#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "diag/source.h"
#include "interp/check/checked.h"
#include "interp/eval/objects.h"
#include "interp/eval/runtime_error.h"
#include "interp/eval/value.h"

namespace ss::eval {

/// One fn call's state: its locals by block and its size variables' sizes.
struct Frame {
  const check::FnInfo* fn = nullptr;
  std::vector<std::unordered_map<std::string, Value>> scopes;
  std::map<uint32_t, int64_t> sizes;  // size variable id -> size
  /// Train modes this call received (their entry was counted here).
  std::vector<ModeState*> modes;

  Value* find(const std::string& name);
  void declare(const std::string& name, Value v);
};

class Interpreter {
 public:
  Interpreter(const check::Program& prog,
              const diag::SourceMap& sm,
              std::ostream& out);
  ~Interpreter();

  /// Calls [entry] (default `main`), passing [args] when it takes
  /// `list[str]`. Throws RuntimeError.
  Value run_main(const std::vector<std::string>& args,
                 const std::string& entry = "main");

  /// Calls a user fn with arguments in parameter order (defaults filled).
  Value call(const check::FnInfo& fn, std::vector<Value> args, diag::Span site);
  /// Calls a function value (a user fn or a builtin) positionally.
  Value call_value(const Value& fn, std::vector<Value> args, diag::Span site);
  /// Calls a builtin by name with positional arguments (a fn value naming
  /// a builtin: `reduce(with=max)`, `value_and_grad(sum, ...)`).
  Value call_builtin_values(const std::string& name,
                            std::vector<Value> args,
                            diag::Span site);
  /// `a op b` on values (operators and `x op= e`).
  Value binary(ast::BinaryOp op, const Value& a, const Value& b, diag::Span at);

  const check::Program& program() const { return prog_; }
  const diag::SourceMap& sources() const { return sm_; }
  std::ostream& out() { return out_; }

  /// A RuntimeError of [kind] at [span] with the current `.ss` stack.
  /// [notes] starting with "help: " render as help lines.
  [[noreturn]] void fail(const std::string& kind,
                         diag::Span span,
                         const std::string& message,
                         std::vector<std::string> notes = {});

  // ---- used by builtins (interp/builtins) and the forward context.
  Value eval(const ast::Expr& e, Frame& f);
  /// A type in value position, with this frame's size variables.
  ops::Shape runtime_shape(const types::Type& t, const Frame& f, diag::Span at);
  int64_t axis_size(const types::Axis& a, const Frame& f, diag::Span at);
  /// Makes a model from its type (Model.init).
  Value init_model(const types::Type& model_type, uint64_t seed, diag::Span at);
  Frame* current_frame() { return frames_.empty() ? nullptr : frames_.back(); }

  /// Runs [stmts] in [f] without a scope of their own, so their `let`s stay
  /// in [f] (the repl's session). Returns the value of a trailing
  /// expression statement (Unit otherwise).
  Value exec_in(const ast::Block& stmts, Frame& f);
  /// Set from a signal handler: the running statement stops with a
  /// KeyboardInterrupt at its next statement boundary.
  void set_interrupt_flag(volatile int* flag) { interrupt_ = flag; }

 private:
  enum class Flow { Normal, Break, Continue, Return };

  Flow exec_block(const ast::Block& b, Frame& f, Value& ret);
  bool condition(const ast::Expr& e, Frame& f);
  Flow exec(const ast::Stmt& s, Frame& f, Value& ret);
  void assign(const ast::Expr& target, Value v, Frame& f);
  void bind(const std::vector<ast::NameTarget>& targets,
            Value v,
            Frame& f,
            diag::Span at);
  std::vector<Value> iterate(const Value& it, diag::Span at);
  /// `f(...)` or `sink.write(f(...))` as a statement, f a worker fn: sends
  /// the call without waiting for it (async_dispatch.cpp). False: not
  /// such a statement, nothing evaluated.
  bool dispatch_later(const ast::Expr& e, Frame& f);
  bool goes_to_workers(const check::FnInfo& fn) const;

  Value eval_name(const ast::Expr& e, Frame& f);
  Value eval_field(const ast::Expr& e, Frame& f);
  Value eval_index(const ast::Expr& e, Frame& f);
  Value eval_unary(const ast::Expr& e, Frame& f);
  Value eval_binary(const ast::Expr& e, Frame& f);
  Value eval_call(const ast::Expr& e, Frame& f);
  Value eval_fstring(const ast::Expr& e, Frame& f);
  Value call_builtin(const ops::OpDef& op,
                     const ast::Expr& call,
                     const ast::Expr* receiver,
                     Frame& f);
  Value call_pattern(const ops::OpDef& op,
                     const ast::Expr& call,
                     const ast::Expr* receiver,
                     Frame& f);
  Value call_extern(const check::FnInfo& fn,
                    std::vector<Value> args,
                    diag::Span site);
  void split_arguments(const check::FnInfo& fn, std::vector<Value>& args);
  Value join_result(const check::FnInfo& fn, Value v, const types::Type& t);

 public:
  /// Runs a builtin whose arguments are gathered (interp/builtins); on
  /// several devices, lowered reductions become all-reduces.
  Value call_builtin_prepared(struct BuiltinCall& c);
  /// The builtin's own forward or runtime implementation, never lowered.
  Value call_builtin_forward(struct BuiltinCall& c);

  /// This process's part in a data-parallel run (null on one device).
  void set_devices(struct DeviceContext* d) { devices_ = d; }
  struct DeviceContext* devices() const {
    return devices_;
  }

  /// Several devices, in the controller (cmd_run_devices): a call of a
  /// worker fn from a controller frame goes to the workers instead, and
  /// its value is the first worker's result (nullopt: run it here).
  /// With `later` (a statement that only drops the result or writes it to
  /// a sink: Note [Async dispatch] in async_dispatch.cpp), the remote side
  /// may return Value::unit() at once and hand the result to `later` when
  /// it arrives, in call order and at the latest in settle(); it must not
  /// return nullopt then.
  using Later = std::function<void(Value)>;
  using RemoteCall = std::function<std::optional<Value>(
      const check::FnInfo&, std::vector<Value>&, diag::Span, Later later)>;
  void set_remote_call(RemoteCall f) { remote_call_ = std::move(f); }
  /// Finishes every worker call still running (async dispatch) and hands
  /// on its result. Runs before anything the program could observe after
  /// it: a builtin, an error, the end of a progress bar, the end of main.
  void settle();
  void set_settle(std::function<void()> f) { settle_ = std::move(f); }
  /// The controller of a run on several devices: batches are loaded by the
  /// workers (lib/batches.h, LazyBatch).
  bool loads_on_workers() const { return static_cast<bool>(remote_call_); }
  /// The `.ss` stack of the running calls (most recent last).
  const std::vector<StackEntry>& stack() const { return stack_; }

  /// What the entry fn's body holds when it returns: every param of each
  /// model bound there ("m.w1"), and its optimizers' largest step count.
  /// `ss conformance` compares them across device counts (devices.md 1).
  struct FinalParams {
    std::map<std::string, ops::Tensor> params;
    int64_t steps = 0;
  };
  void keep_final_params() { keep_final_ = true; }
  const FinalParams& final_params() const { return final_; }

 private:
  const check::Program& prog_;
  const diag::SourceMap& sm_;
  std::ostream& out_;
  std::vector<Frame*> frames_;
  std::vector<StackEntry> stack_;
  int depth_ = 0;
  volatile int* interrupt_ = nullptr;
  struct DeviceContext* devices_ = nullptr;
  bool splitting_ = false;  // inside the entry call that split its args
  RemoteCall remote_call_;
  // The call dispatch_later is sending, and what takes its result.
  struct LaterCall {
    diag::Span site;
    Later then;
  };
  std::optional<LaterCall> later_;
  std::function<void()> settle_;
  bool settling_ = false;
  bool keep_final_ = false;
  FinalParams final_;
  void capture_final(Frame& f);
};

}  // namespace ss::eval
