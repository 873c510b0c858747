#pragma once
// A device's recorded steps: the work one call queued on a GPU, recorded
// once and replayed on the same bytes (a CUDA graph in the CUDA module,
// ops/cuda/cuda_recording.cu; closures in the stand-in GPU). The devices
// layer decides what is recorded and when it may be replayed (Note
// [Recorded steps] in interp/devices/recorded_calls.cpp); a backend only
// records and replays. A copy of device bytes to the host breaks a
// recording: ops/core/tensor.h counts them for the probe that comes first.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ops/core/tensor.h"

namespace ss::ops {

/// One recorded step: its kernels, copies and products, with the
/// addresses and arguments they had when they were recorded.
class RecordedStep {
 public:
  virtual ~RecordedStep() = default;
  /// Queues the step's work again (the first call runs it: recording
  /// runs nothing). [refresh] runs first on this thread, in patch mode:
  /// the backend calls it makes that were recorded as patchable (the
  /// fused optimizers, whose step count and learning rate change each
  /// step) set their recorded arguments instead of running, in the order
  /// they were recorded: all of them, or none (the first replay, whose
  /// arguments are the recorded ones); any other call there is an error.
  virtual void replay(const std::function<void()>& refresh) = 0;
  /// The launches, copies and products one replay runs.
  virtual size_t nodes() const = 0;
  /// The patchable calls it holds.
  virtual size_t patchable() const = 0;
  /// Waits for the last replay's host calls (StepRecorder::host_call) to
  /// end, and rethrows the first error one raised. A step without host
  /// calls has nothing to wait for.
  virtual void settle() {}

 protected:
  /// replay's first half, for every backend alike: [refresh] runs with
  /// [patching] (the backend's thread-local) set to this step and
  /// [cursor] counting the patches it makes; throws std::logic_error
  /// ("[<who>] ...") unless it made all [recorded] of them or none.
  void run_refresh(RecordedStep*& patching,
                   size_t& cursor,
                   size_t recorded,
                   const std::function<void()>& refresh,
                   const char* who);
};

/// What a GPU kind's backend offers for recording (registered by its
/// module as it loads; none on the CPU).
class StepRecorder {
 public:
  virtual ~StepRecorder() = default;
  /// Starts recording what this thread queues on GPU [index]: nothing runs
  /// until the step is replayed, and what this thread allocates until
  /// end() belongs to the step (its private pool, kept while it lives).
  /// Other threads' work on that GPU waits until end().
  virtual void begin(int index) = 0;
  /// While recording: [t]'s bytes, made before, stay the step's once the
  /// host lets them go, until the step ends, so that nothing else is
  /// given their address while a replay may read or write it.
  virtual void adopt(const Tensor& t) = 0;
  /// Ends the recording: the step, or null with [why] set when the work
  /// could not be recorded (then nothing of it ran, and nothing will).
  virtual std::unique_ptr<RecordedStep> end(std::string& why) = 0;
  /// Whether this thread is recording (then a check is made on the device:
  /// Note [Checks a recording defers] in ops/api.cpp).
  virtual bool recording() const = 0;

  /// What a host call computes: [reads] are host copies of the recorded
  /// call's reads, [writes] host tensors shaped as its writes, to fill.
  using HostFn = std::function<void(std::vector<Tensor>& reads,
                                    std::vector<Tensor>& writes)>;
  /// While recording: host work in its place among the step's (a CUDA
  /// graph's host node). At each replay, once the work recorded before it
  /// has run, [reads]' bytes are copied to host tensors (the same ones at
  /// every replay), [fn] runs on them and fills host tensors shaped as
  /// [writes], and these are copied into [writes]; the work recorded
  /// after it waits for that. [fn] touches host memory only (on a GPU it
  /// runs on the driver's thread, where no CUDA call may be made). What it
  /// throws, RecordedStep::settle raises; the host calls after it in that
  /// replay are skipped. Nothing runs while recording.
  virtual void host_call(std::vector<Tensor> reads,
                         std::vector<Tensor> writes,
                         HostFn fn) = 0;
};

/// Whether this thread is recording a step, on any device.
bool recording_a_step();

/// Registers [r] for [kind] (not Cpu); nullptr unregisters.
void set_step_recorder(Device::Kind kind, StepRecorder* r);
/// The registered recorder of [kind], or nullptr.
StepRecorder* step_recorder(Device::Kind kind);

}  // namespace ss::ops
