#pragma once
// What the walk tells a recording of the call it is in (Note [Recorded
// steps] in interp/devices/recorded_calls.cpp): the devices layer probes a
// call, then records one, with this object current on the thread; the
// builtins whose host effects a replay must repeat (update) or that a
// replay cannot repeat (a read of an optimizer's step) say so here.

#include <functional>
#include <string>

namespace ss::eval {

class StepRecording {
 public:
  virtual ~StepRecording() = default;
  /// The probe or recording of the call running on this thread, or null.
  static StepRecording* current();
  /// This call cannot be replayed: [why] says what it does on the host
  /// that a replay would not do again ("reads opt.step").
  virtual void refuse(std::string why) = 0;
  /// [effect] runs again before each replay, on this thread, its backend
  /// calls patching the recorded ones (ops::RecordedStep::replay): the
  /// host half of an op whose device half the step holds.
  virtual void on_replay(std::function<void()> effect) = 0;

  /// Makes [r] current on this thread for a scope.
  class Scope {
   public:
    explicit Scope(StepRecording* r);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    StepRecording* prev_;
  };
};

}  // namespace ss::eval
