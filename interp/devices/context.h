#pragma once
// The devices layer's state of one Interpreter (Note [Device hooks] in
// interp/eval/device_hooks.h): what every context shares. The controller's
// (controller/controller_context.h) and a rank's (lower/rank_context.h)
// add the rest; alone it is one device's, in `ss conformance`, which
// compares the final params across device counts.

#include "interp/eval/device_hooks.h"
#include "interp/eval/final_params.h"

namespace ss::devices {

class Context : public eval::DeviceHooks {
 public:
  /// Keep what the entry fn's body holds when it returns (final_params).
  void keep_final_params() { keep_final_ = true; }
  const eval::FinalParams& final_params() const { return final_; }

  void entry_done(const eval::Frame& f) override;
  /// `collective_timeout(seconds)` (a host effect, SetsTimeout): run, and
  /// then collectives started afterwards wait this long (devices.md item
  /// 12); every other op as one device runs it.
  eval::Value run_op(eval::OpSite& s) override;
  /// The process's default, read by each collective as it starts (and by
  /// the controller when it starts the workers).
  void set_collective_timeout(double seconds);

 private:
  bool keep_final_ = false;
  eval::FinalParams final_;
};

}  // namespace ss::devices
