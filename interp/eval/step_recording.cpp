#include "interp/eval/step_recording.h"

namespace ss::eval {

namespace {
thread_local StepRecording* current_recording = nullptr;
}

StepRecording* StepRecording::current() {
  return current_recording;
}

StepRecording::Scope::Scope(StepRecording* r) : prev_(current_recording) {
  current_recording = r;
}

StepRecording::Scope::~Scope() {
  current_recording = prev_;
}

}  // namespace ss::eval
