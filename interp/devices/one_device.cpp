#include "interp/devices/one_device.h"

#include "interp/check/checked.h"
#include "interp/devices/gpu_ranks.h"
#include "interp/devices/lower/rank_context.h"
#include "interp/devices/recorded_calls.h"
#include "ops/backend/backend.h"
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
    // Its values on the list's device: `cuda[0] deterministic` computes on
    // the GPU what each rank of `cuda[0 1 2] deterministic` does.
    d.transport = rank_transport(prog.devices(), 0);
    ops::pin_blas_to_one_thread();  // Note [One BLAS thread]
    if (const std::string& h = prog.devices().split_dim; !h.empty()) {
      // `split H`: its heads one at a time, as every rank runs its own
      // (Note [Heads one at a time] in lower/heads.cpp).
      d.split_dim = h;
      d.split_size = prog.dims().at(h);
    }
    recorded_ = std::make_unique<RecordedCalls>(d.device());
  }
  // On a GPU, as OneGpu's (Note [Recorded steps] in recorded_calls.cpp):
  // what each call runs is the rank's, split as a rank of one splits it.
  std::optional<eval::Value> call(eval::Interpreter& in,
                                  const check::FnInfo& fn,
                                  std::vector<eval::Value>& args,
                                  diag::Span site) override {
    if (std::optional<eval::Value> v = recorded_->call(in, fn, args, site))
      return v;
    return lower::RankContext::call(in, fn, args, site);
  }

 private:
  std::unique_ptr<RecordedCalls> recorded_;
};

// Note [Values on a GPU]
// `devices cuda[0]`: one process, its values on one GPU. What runs there
// is decided where values are made, not op by op: params go to the device
// as they are drawn (on the host, by the same Philox stream as on the CPU,
// so both runs start from the same bits), batches as they load, and the
// tensors ops make from nothing (zeros, arange, a number met by a tensor)
// on their operand's device or this context's (Interpreter::device). Every
// op then runs on the backend of its operands' device (ops::backend_for),
// and the host sees a value only where it reads one (a log, a print, a
// save), through Tensor's copies.
// A call entering device work is recorded after its first calls and then
// replayed (Note [Recorded steps] in recorded_calls.cpp).
class OneGpu : public Context {
 public:
  explicit OneGpu(ops::Device device) : device_(device), recorded_(device) {}
  eval::Placement placement() const override {
    eval::Placement p;
    p.device = device_;
    return p;
  }
  std::optional<eval::Value> call(eval::Interpreter& in,
                                  const check::FnInfo& fn,
                                  std::vector<eval::Value>& args,
                                  diag::Span site) override {
    return recorded_.call(in, fn, args, site);
  }

 private:
  ops::Device device_;
  RecordedCalls recorded_;
};

}  // namespace

std::string unavailable_devices(const check::Program& prog) {
  return missing_gpus(prog.devices());
}

std::unique_ptr<Context> one_device_context(const check::Program& prog) {
  if (prog.devices().deterministic)
    return std::make_unique<DeterministicDevice>(prog);
  if (prog.devices().kind == "cuda") {
    const std::vector<int64_t>& ids = prog.devices().ids;
    return std::make_unique<OneGpu>(ops::Device{
        ops::Device::Kind::Cuda, ids.empty() ? 0 : static_cast<int>(ids[0])});
  }
  ops::warm_up_cpu_backend();  // overlaps main's loading
  return nullptr;
}

}  // namespace ss::devices
