// Checkpoints: save, load, load_into (safetensors).
#include "interp/eval/lib/runtime_lib.h"

namespace ss::eval {

std::vector<RuntimeEntry> lib_checkpoint() { return {}; }

}  // namespace ss::eval
