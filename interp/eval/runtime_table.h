#pragma once
// Note [The runtime table]
// A builtin that models, data, sinks or files make (init, adamw, batches,
// jsonl, save, ...) has no tensor forward in its OpDef: the evaluator runs
// it through a runtime implementation, a function of a BuiltinCall. Those
// are defined above the evaluator, in interp/builtins/ and interp/data/,
// and registered into this table at start-up (builtins::install(), which
// `ss`'s main, the tests and the benchmarks call): the evaluator links
// nothing of theirs and calls them through the table. An entry is placed
// by its OpDef's index when it registers, so a call reaches its
// implementation from the OpDef the checker resolved, never by name; a
// name that is not a builtin, one registered twice, or a builtin left with
// no way to run is a start-up error (install()'s check), not a surprise
// when a program first calls it.

#include <string>
#include <vector>

#include "interp/eval/runtime_lib.h"

namespace ss::eval {

/// The overloads a builtin has on its first argument (library.md): most
/// builtins have the plain one; `norm(g)` and `zeros_like(g)` also take a
/// model's gradients, `zeros_like(m)` a model, `take`, `split` and `len` a
/// dataset or batches. Walked is the call a `for` header walks (`for i in
/// range(n)`): its value is an IterableObject that makes the items as the
/// loop asks, never the list (Note [A loop walks a range]).
enum class Overload : uint8_t { Plain, OnGrads, OnModel, OnDataset, Walked };
constexpr size_t kOverloads = 5;

struct RuntimeEntry {
  const char* name;  // the builtin's OpDef name
  RuntimeFn fn;
  Overload on = Overload::Plain;
};

/// Registers [entries]: each goes to its builtin's slot. Throws
/// std::logic_error for a name that is no builtin or a slot taken twice.
void register_runtime(const std::vector<RuntimeEntry>& entries);

/// Ends registration: throws std::logic_error naming every builtin that has
/// neither a forward, a runtime implementation nor a way the evaluator runs
/// it itself (a pattern, print, a collective). Idempotent.
void seal_runtime();
bool runtime_sealed();

/// [op]'s runtime implementation for overload [on], or nullptr.
RuntimeFn runtime_of(const ops::OpDef& op, Overload on = Overload::Plain);

}  // namespace ss::eval
