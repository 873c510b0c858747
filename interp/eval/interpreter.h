#pragma once
// The tree-walking evaluator. It accepts only a checked program, runs
// statements in order and dispatches each tensor op to its forward
// (ops/defs, written with ops/api.h) and every other builtin to its
// runtime implementation (interp/builtins/).

#include <chrono>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "diag/source.h"
#include "interp/check/checked.h"
#include "interp/eval/device_hooks.h"
#include "interp/eval/objects.h"
#include "interp/eval/op_site.h"
#include "interp/eval/runtime_error.h"
#include "interp/eval/value.h"
#include "ops/registry/mesh_comm.h"

namespace ss::eval {

/// How many blocks [a]'s split over mesh axes cuts it into (1: whole).
/// Inside an spmd fn `A/x` is a block of A: A's size / |x|.
int64_t split_blocks(const types::Axis& a,
                     const std::vector<check::MeshAxis>& mesh);

/// One fn call's state: its locals by block and its size variables' sizes.
struct Frame {
  const check::FnInfo* fn = nullptr;
  std::vector<std::unordered_map<std::string, Value>> scopes;
  std::map<uint32_t, int64_t> sizes;  // size variable id -> size
  /// Size variables bound to an axis with a dim that a device mode splits
  /// (`split H` on a rank: `h` of `q: [b h n d]` given q: [b H n Dh]) ->
  /// that axis, in dims and literals only; set by DeviceHooks::bind_call
  /// (Note [Size variables carry the split] in
  /// interp/devices/lower/heads_sites.cpp). axis_size reads through them.
  std::map<uint32_t, types::Axis> split_vars;
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
  /// [arg_types]: the arguments' checked types at the call site, when
  /// known (DeviceHooks::bind_call reads them).
  Value call(const check::FnInfo& fn,
             std::vector<Value> args,
             diag::Span site,
             const std::vector<types::Type>* arg_types = nullptr);
  /// Calls a function value (a user fn or a builtin) positionally.
  /// [arg_types]: as call's (value_and_grad passes its arguments' types).
  Value call_value(const Value& fn,
                   std::vector<Value> args,
                   diag::Span site,
                   const std::vector<types::Type>* arg_types = nullptr);
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
  int64_t axis_size(const types::Axis& a, const Frame& f, diag::Span at);
  Frame* current_frame() { return frames_.empty() ? nullptr : frames_.back(); }

  /// Runs [stmts] in [f] without a scope of their own, so their `let`s stay
  /// in [f] (the repl's session). Returns the value of a trailing
  /// expression statement (Unit otherwise).
  Value exec_in(const ast::Block& stmts, Frame& f);
  /// Set from a signal handler: the running statement stops with a
  /// KeyboardInterrupt at its next statement boundary. [poll], for a host
  /// that has no thread of its own watching while a call runs (a Python
  /// session on one device: Note [Switching to the deep stack] in
  /// interp/embed/deep_stack.cpp), runs at a statement boundary at most
  /// every 50 ms, before the flag is read, and sets it when the host's
  /// Ctrl-C came.
  void set_interrupt_flag(volatile int* flag, std::function<void()> poll = {}) {
    interrupt_ = flag;
    poll_ = std::move(poll);
  }

 private:
  enum class Flow { Normal, Break, Continue, Return };

  Flow exec_block(const ast::Block& b, Frame& f, Value& ret);
  Flow exec(const ast::Stmt& s, Frame& f, Value& ret);
  void assign(const ast::Expr& target, Value v, Frame& f);
  void bind(const std::vector<ast::NameTarget>& targets,
            Value v,
            Frame& f,
            diag::Span at);
  Value eval_name(const ast::Expr& e, Frame& f);
  Value eval_field(const ast::Expr& e, Frame& f);
  Value eval_index(const ast::Expr& e, Frame& f);
  Value eval_unary(const ast::Expr& e, Frame& f);
  Value eval_binary(const ast::Expr& e, Frame& f);
  Value eval_call(const ast::Expr& e, Frame& f);
  Value call_builtin(const ops::OpDef& op,
                     const ast::Expr& call,
                     const ast::Expr* receiver,
                     Frame& f);
  Value call_extern(const check::FnInfo& fn,
                    std::vector<Value> args,
                    diag::Span site);
  /// An spmd fn called from ordinary code: its arguments split into
  /// blocks, every instance run, the result joined (interp/eval/spmd/).
  Value call_spmd(const check::FnInfo& fn,
                  std::vector<Value> args,
                  diag::Span site);

 public:
  /// What several devices change in the walk (Note [Device hooks]); null
  /// on one device. Not owned.
  void set_device_hooks(DeviceHooks* h) { hooks_ = h; }
  DeviceHooks* device_hooks() const { return hooks_; }
  /// Runs the op [s] (Note [Op sites]): through the device hooks, or as
  /// [s].run on one device.
  Value run_op(OpSite& s);
  /// The program reads the tensor [path] of [m] at [at] (`m.w1`, or a
  /// builtin given the model: linear(m.l1, x)): a ParamRead op site.
  ops::Tensor read_param(const ModelRef& m,
                         const std::string& path,
                         diag::Span at);
  /// Finishes every worker call still running (async dispatch) and hands
  /// on its result. Runs before anything the program could observe after
  /// it: a builtin, an error, the end of a progress bar, the end of main.
  void settle();
  /// In an instance of an spmd fn: its mesh (Note [Mesh collectives]);
  /// null in ordinary code. Not owned.
  ops::MeshComm* mesh() const { return mesh_; }
  void set_mesh(ops::MeshComm* m) { mesh_ = m; }
  /// While an op runs on a share of a dim's values (`split H` on a rank:
  /// its heads, interp/devices/lower/heads.cpp), dim [name] has [size]
  /// values here; an empty [name] ends it.
  void set_local_dim(std::string name, int64_t size) {
    local_dim_ = std::move(name);
    local_dim_size_ = size;
  }
  /// Dim [name]'s size here: the program's, or its local share while set.
  std::optional<int64_t> dim_size(const std::string& name) const;
  /// The `.ss` stack of the running calls (most recent last).
  const std::vector<StackEntry>& stack() const { return stack_; }
  /// Replaces the `.ss` stack, returning the one it replaces (a write the
  /// controller runs after its statement, with that statement's stack:
  /// Note [Async dispatch]).
  std::vector<StackEntry> exchange_stack(std::vector<StackEntry> s) {
    std::swap(s, stack_);
    return s;
  }

 private:
  const check::Program& prog_;
  const diag::SourceMap& sm_;
  std::ostream& out_;
  std::vector<Frame*> frames_;
  std::vector<StackEntry> stack_;
  int depth_ = 0;
  volatile int* interrupt_ = nullptr;
  std::function<void()> poll_;
  std::chrono::steady_clock::time_point next_poll_{};
  DeviceHooks* hooks_ = nullptr;
  ops::MeshComm* mesh_ = nullptr;
  /// The `for` header call being evaluated, when its builtin has a walked
  /// overload (Note [A loop walks a range] in interpreter.cpp).
  const ast::Expr* walked_call_ = nullptr;
  std::string local_dim_;  // set_local_dim
  int64_t local_dim_size_ = 0;
};

/// Whether a call of [fn] from [in]'s running frame enters the workers'
/// part: [fn] is placed on the workers and its caller is not (or there
/// is none). Such a call counts a Train mode's entry (language.md,
/// Randomness); on several devices it is the one that goes to the
/// workers, or splits its batch (Note [Device hooks]).
bool enters_workers(Interpreter& in, const check::FnInfo& fn);

/// A type in value position, with [f]'s size variables.
ops::Shape runtime_shape(Interpreter& in,
                         const types::Type& t,
                         const Frame& f,
                         diag::Span at);
/// A condition's truth (`if`, `while`, a comprehension's `if`): a host
/// value's, or a one-element tensor's; a larger tensor is a ValueError.
bool condition(Interpreter& in, const ast::Expr& e, Frame& f);
/// What `for x in it` takes from [it], in order (a list, a tuple, a
/// model's stacked sub-models, a dataset's batches, ...).
std::vector<Value> iterate(Interpreter& in, const Value& it, diag::Span at);

/// Where [in]'s values live and its batches load (DeviceHooks::placement;
/// one device's defaults without hooks).
inline Placement placement_of(const Interpreter& in) {
  return in.device_hooks() ? in.device_hooks()->placement() : Placement{};
}

}  // namespace ss::eval
