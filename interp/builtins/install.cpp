#include "interp/builtins/install.h"

#include <mutex>

#include "interp/data/data.h"
#include "interp/eval/runtime_table.h"

namespace ss::builtins {

// Each family's entries (families.def).
#define SS_RUNTIME_FAMILY(family) \
  std::vector<eval::RuntimeEntry> lib_##family();
#include "interp/builtins/families.def"
#undef SS_RUNTIME_FAMILY

void install() {
  // Once per process, whoever calls first (a test binary and the
  // evaluator's hosts may both).
  static std::once_flag once;
  std::call_once(once, [] {
#define SS_RUNTIME_FAMILY(family) eval::register_runtime(lib_##family());
#include "interp/builtins/families.def"
#undef SS_RUNTIME_FAMILY
    eval::register_runtime(data::lib_data());
    eval::seal_runtime();
  });
}

}  // namespace ss::builtins
