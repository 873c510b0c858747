#include "interp/devices/context.h"

#include <chrono>

#include "dist/comm/communicator.h"
#include "interp/eval/runtime_lib.h"
#include "ops/registry/registry.h"

namespace ss::devices {

void Context::entry_done(const eval::Frame& f) {
  if (keep_final_) final_ = eval::final_params_of(f);
}

eval::Value Context::run_op(eval::OpSite& s) {
  eval::Value v = s.run();
  if (s.kind == eval::OpSite::Kind::Builtin &&
      s.op->device.host == ops::HostEffect::SetsTimeout)
    set_collective_timeout(s.call->arg(0).number());  // checked by the run
  return v;
}

void Context::set_collective_timeout(double seconds) {
  dist::set_default_collective_timeout(
      std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000.0)));
}

}  // namespace ss::devices
