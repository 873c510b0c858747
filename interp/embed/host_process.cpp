// A worker's life in a host language's process (embed.h's worker_main).
// Its own file: what links the embedding API without running workers of
// its own (the test binaries) does not pull in the worker's program
// server.
#include "interp/devices/worker/program_server.h"
#include "interp/embed/embed.h"

namespace ss::embed {

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
