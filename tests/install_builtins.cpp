// The test binaries run the evaluator as `ss` does: with every runtime
// builtin installed before the first test (Note [The runtime table] in
// interp/eval/runtime_table.h). A static object of the executable itself,
// so the linker keeps it.
#include "dist/control/control.h"
#include "interp/builtins/install.h"
#include "ops/core/tensor.h"

namespace {
// As `ss`'s main: the pools of the tests clean up after a fatal signal.
const bool kInstalled =
    (ss::builtins::install(), ss::dist::clean_up_workers_on_exit(), true);
}  // namespace
