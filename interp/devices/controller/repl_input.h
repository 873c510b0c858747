#pragma once
// One input of `ss repl` on several devices (issue 14 item 1, in part):
// the controller of `ss run` runs the input's statements, and the
// workers it starts live for that input (Note [Repl inputs on devices]).

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "interp/check/checker.h"
#include "interp/eval/interpreter.h"

namespace ss::devices {

/// Runs [body] (the input's statements, run by [in], which checked [prog]
/// from [sm]) as `ss run`'s controller: a call of a worker fn goes to
/// `ss worker` processes that check the program from [worker_args]
/// (worker_run_args), started at the first such call. At the end every
/// model and optimizer among [held]()'s values is copied back from the
/// workers and the workers stop, so the session's handles outlive them.
/// [interrupted] is polled while a call waits (Ctrl-C). A RuntimeError
/// is rethrown after the workers stop (the workers failing to start or
/// stopped by Ctrl-C: a WorkerError or KeyboardInterrupt at [input]); the
/// stores the workers then held newer are in [lost]: their state is gone.
void run_input_on_devices(eval::Interpreter& in,
                          const check::Program& prog,
                          const diag::SourceMap& sm,
                          const std::vector<std::string>& worker_args,
                          diag::Span input,
                          const std::function<void()>& body,
                          const std::function<std::vector<eval::Value>()>& held,
                          volatile int* interrupted,
                          std::set<const void*>& lost);

/// The stores (ModelStore, OptimState) a value holds, through tuples and
/// lists: what [lost] names.
void stores_of(const eval::Value& v, std::set<const void*>& out);

}  // namespace ss::devices
