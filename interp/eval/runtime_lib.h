#pragma once
// One call of a builtin as the evaluator runs it (BuiltinCall): its
// arguments by the op's params. Builtins without a tensor forward (models,
// optimizers, data, sinks, files, host values) have their signatures and
// shape rules in the one builtin table (ops/defs) and their run-time
// behaviour in interp/builtins/ and interp/data/, registered into the
// runtime table (Note [The runtime table] in runtime_table.h).

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "interp/check/checked.h"
#include "interp/eval/interpreter.h"

namespace ss::eval {

/// One call of a runtime builtin: its arguments by the op's params.
struct BuiltinCall {
  Interpreter& in;
  Frame& frame;
  const ops::OpDef& op;
  diag::Span span;
  const ast::Expr* call = nullptr;        // null when called as a value
  const check::ExprInfo* info = nullptr;  // the call's checked info
  std::vector<Value> args;                // by param; Unit when absent
  std::vector<bool> given;
  std::vector<const ast::Expr*> exprs;        // by param; null when absent
  std::vector<Value> extras;                  // extra positional arguments
  std::vector<const ast::Expr*> extra_exprs;  // theirs (null as values)
  std::vector<std::pair<std::string, Value>> keywords;  // extra keywords
  /// The call is a `for` header's (Overload::Walked).
  bool walked = false;

  bool has(size_t i) const { return i < given.size() && given[i]; }
  const Value& arg(size_t i) const { return args.at(i); }
  /// The checker's type of param [i]'s argument (Error when unknown).
  const types::Type& arg_type(size_t i) const;
  const types::Type& result_type() const;
  double number(size_t i, double dflt) const;
  int64_t integer(size_t i, int64_t dflt) const;
  bool flag(size_t i, bool dflt) const;
  [[noreturn]] void fail(const std::string& kind,
                         const std::string& message,
                         std::vector<std::string> notes = {}) const {
    in.fail(kind, span, message, std::move(notes));
  }
};

using RuntimeFn = Value (*)(BuiltinCall& c);

/// The evaluator's ForwardCtx over [c]'s arguments (eval_call.cpp): the
/// devices layer runs an entry's lowering with it (ops/registry/
/// device_rule.h).
std::unique_ptr<ops::ForwardCtx> forward_ctx(BuiltinCall& c);

/// Runs a builtin whose arguments are gathered (by param) as an op site
/// (Note [Op sites]): on several devices a reduction across the batch
/// axis is lowered, a host effect happens once, ...
Value call_builtin_prepared(BuiltinCall& c);
/// The builtin's own forward or runtime implementation, as one device
/// runs it (an op site's plain way).
Value call_builtin_forward(BuiltinCall& c);

}  // namespace ss::eval
