#pragma once
// remat(f) (spmd.md; language.md): a call of f through its remat'd value
// keeps none of f's intermediates for the backward pass and recomputes
// them there (Note [Remat] in remat.cpp).

#include <functional>
#include <vector>

#include "interp/eval/interpreter.h"

namespace ss::eval {

/// Calls [fn] on [args] as remat(fn) does. [arg_types]: the arguments'
/// checked types at the call site, when known: the device hooks bind the
/// call with them first, and may refuse it (DeviceHooks::bind_call).
Value call_remat(Interpreter& in,
                 const check::FnInfo& fn,
                 std::vector<Value> args,
                 diag::Span site,
                 const std::vector<types::Type>* arg_types = nullptr);

/// How f runs again in the backward pass, on its fresh arguments.
using RunAgain = std::function<Value(std::vector<Value>)>;

/// remat as Note [Remat] does it, on this thread: f runs again in this
/// thread's backward pass, through [again] (by default [in].call, right
/// where [in] outlives the backward pass). Inside an instance this is
/// right where f's collectives can meet again there: each worker's own
/// backward pass (WorkerMesh, Note [Spmd fns on workers]), or a simulated
/// instance's when value_and_grad runs inside it; not the simulated
/// mode's one backward pass after the call (Note [Remat in instances]).
Value call_remat_here(Interpreter& in,
                      const check::FnInfo& fn,
                      std::vector<Value> args,
                      diag::Span site,
                      RunAgain again = nullptr);

/// How remat(f) recomputes inside an instance of an spmd fn, where f's
/// collectives need the other instances again (Note [Remat in instances]
/// in interp/eval/spmd/remat_instances.cpp): the instance's mesh
/// (Interpreter::mesh()) implements it where the mode can; where it does
/// not, f runs as it is.
class InstanceRemat {
 public:
  virtual ~InstanceRemat() = default;
  virtual Value call_remat(Interpreter& in,
                           const check::FnInfo& fn,
                           std::vector<Value> args,
                           diag::Span site) = 0;
};

}  // namespace ss::eval
