#include "interp/devices/one_device.h"

#include "interp/check/checked.h"
#include "interp/devices/lower/rank_context.h"
#include "ops/cpu/cpu_backend.h"

namespace ss::devices {

namespace {

// The rank's DeviceContext, made before the RankContext that holds it.
struct RankOfOne {
  lower::DeviceContext d;
};

class DeterministicDevice : private RankOfOne, public lower::RankContext {
 public:
  explicit DeterministicDevice(const check::Program& prog)
      : RankOfOne(), lower::RankContext(d) {
    d.deterministic = true;
    ops::pin_blas_to_one_thread();  // Note [One BLAS thread]
    if (const std::string& h = prog.devices().split_dim; !h.empty()) {
      // `split H`: its heads one at a time, as every rank runs its own
      // (Note [Heads one at a time] in lower/heads.cpp).
      d.split_dim = h;
      d.split_size = prog.dims().at(h);
    }
  }
};

}  // namespace

std::unique_ptr<Context> one_device_context(const check::Program& prog) {
  if (!prog.devices().deterministic) {
    ops::warm_up_cpu_backend();  // overlaps main's loading
    return nullptr;
  }
  return std::make_unique<DeterministicDevice>(prog);
}

}  // namespace ss::devices
