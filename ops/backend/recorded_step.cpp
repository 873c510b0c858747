#include "ops/backend/recorded_step.h"

#include <atomic>
#include <stdexcept>
#include <string>

namespace ss::ops {

namespace {
std::atomic<StepRecorder*> g_cuda_recorder{nullptr};
}

void RecordedStep::run_refresh(RecordedStep*& patching,
                               size_t& cursor,
                               size_t recorded,
                               const std::function<void()>& refresh,
                               const char* who) {
  if (patching)
    throw std::logic_error(std::string("[") + who +
                           "] a replay inside a replay's refresh");
  patching = this;
  cursor = 0;
  try {
    refresh();
  } catch (...) {
    patching = nullptr;
    throw;
  }
  patching = nullptr;
  // Every patchable call is patched, or none (the first replay).
  if (cursor != 0 && cursor != recorded)
    throw std::logic_error(
        std::string("[") + who + "] a replay's refresh patched " +
        std::to_string(cursor) + " of the " + std::to_string(recorded) +
        " patchable calls recorded");
}

void set_step_recorder(Device::Kind kind, StepRecorder* r) {
  if (kind == Device::Kind::Cuda) g_cuda_recorder.store(r);
}

StepRecorder* step_recorder(Device::Kind kind) {
  return kind == Device::Kind::Cuda ? g_cuda_recorder.load() : nullptr;
}

bool recording_a_step() {
  StepRecorder* r = g_cuda_recorder.load();
  return r && r->recording();
}

}  // namespace ss::ops
