// The test binaries run the evaluator as `ss` does: with every runtime
// builtin installed before the first test (Note [The runtime table] in
// interp/eval/runtime_table.h). A static object of the executable itself,
// so the linker keeps it.
#include "interp/builtins/install.h"

namespace {
const bool kInstalled = (ss::builtins::install(), true);
}  // namespace
