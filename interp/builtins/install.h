#pragma once
// Start-up: the runtime builtins of interp/builtins/ and interp/data/ go
// into the evaluator's table (Note [The runtime table] in
// interp/eval/runtime_table.h). `ss`'s main calls install() first; so do
// the test binaries (tests/install_builtins.cpp) and the benchmarks, and
// any later host of the evaluator (the Python module).

namespace ss::builtins {

/// Registers every runtime builtin and checks that each builtin of the op
/// table can run. Idempotent; throws std::logic_error on a broken table.
void install();

}  // namespace ss::builtins
