// What a host language's process needs of `ss`'s main: the runtime table
// and a worker's life (embed.h). The evaluator's deep stack is
// deep_stack.cpp's.
#include "interp/builtins/install.h"
#include "interp/devices/worker/program_server.h"
#include "interp/embed/embed.h"

namespace ss::embed {

void prepare() {
  static const bool done = (builtins::install(), true);
  (void)done;
}

int worker_main(const std::vector<std::string>& args) {
  // A worker's process is ours: `ss worker`'s settings (interp/cli/main.cpp).
  ops::keep_step_buffers_in_heap();
  prepare();
  std::string bad = devices::worker::bad_device_environment();
  if (!bad.empty()) return 64;
  int rc = 0;
  DeepThread deep;
  deep.run([&] { rc = devices::worker::worker_main(args); });
  return rc;
}

}  // namespace ss::embed
