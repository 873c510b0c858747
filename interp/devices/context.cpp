#include "interp/devices/context.h"

#include <chrono>

#include "dist/comm/communicator.h"

namespace ss::devices {

void Context::entry_done(const eval::Frame& f) {
  if (keep_final_) final_ = eval::final_params_of(f);
}

void Context::set_collective_timeout(double seconds) {
  // The process's default, read by each collective as it starts (and by
  // the controller when it starts the workers).
  dist::set_default_collective_timeout(
      std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000.0)));
}

}  // namespace ss::devices
