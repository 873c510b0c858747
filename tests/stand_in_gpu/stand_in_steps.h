#pragma once
// The stand-in GPU's recorded steps (Note [Recorded steps on the stand-in]
// in stand_in_steps.cpp): what a CUDA graph does, with closures.

#include <functional>
#include <memory>
#include <string>

#include "ops/backend/recorded_step.h"

namespace stand_in {

/// What a primitive does with a recording on its thread.
enum class Mode {
  Eager,      // runs
  Recording,  // records, and runs where it writes only bytes made since
  Patching,   // a replay's refresh: only the patchable calls may come
};
Mode mode();

/// The recording on this thread takes [work] (recording: replays run it
/// in this order).
void record(std::function<void()> work);
/// Whether [p] lies in bytes allocated since this thread's recording
/// began (work into them may run as it is recorded: nothing older sees
/// it change).
bool made_while_recording(const void* p);

/// A patchable call's arguments: recorded with its work, set again by each
/// replay's refresh.
struct Patchable {
  virtual ~Patchable() = default;
};
/// Recording: [args] is the next patchable call's. Patching: the next
/// recorded one, which must be of the same type (std::logic_error if not).
void record_patchable(std::shared_ptr<Patchable> args);
std::shared_ptr<Patchable> next_patchable();

/// Memory hooks: a block allocated, a block given back (false: a
/// recording keeps it, and gives it back as it ends), and a copy to the
/// host (refused while recording or patching).
void note_allocated(void* p, size_t nbytes);
bool may_release(void* p, size_t nbytes);
void note_host_read();

/// The recorder ss_cuda_backend registers.
ss::ops::StepRecorder& recorder();

}  // namespace stand_in
