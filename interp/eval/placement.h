#pragma once
// Where each fn runs, by the seed's rules (devices.md): a fn that does
// device work (tensor ops, value_and_grad, update, model changes), itself
// or through the fns it calls, and no host work (print, save, sinks,
// progress, a loop over a dataset's batches) runs on the workers; one with
// host work runs in the controller; others run anywhere. On one device
// this decides only how Train modes count their entries (language.md,
// Randomness); the several-devices work moves it into the checker.

#include <map>
#include <set>

#include "interp/check/checked.h"

namespace ss::eval {

class Placement {
 public:
  explicit Placement(const check::Program& prog);
  bool on_workers(const check::FnInfo& fn) const;

 private:
  std::set<const check::FnInfo*> workers_;
};

}  // namespace ss::eval
