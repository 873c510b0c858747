#pragma once
// The controller's context (Note [Device hooks] in
// interp/eval/device_hooks.h): the Interpreter of `ss run` on several
// devices runs main and every controller fn itself; a call of a worker fn
// from a controller frame goes to the workers (Controller), sent ahead of
// its result where the statement only drops it or writes it to a sink
// (Note [Async dispatch] in async_dispatch.cpp). Batches are loaded by the
// workers, and a model or optimizer a call changed is copied back from them
// when read here (the Controller is its stores' eval::NewerCopies).

#include <optional>
#include <vector>

#include "interp/devices/context.h"
#include "interp/devices/controller/controller.h"

namespace ss::devices::controller {

class ControllerContext : public Context {
 public:
  /// [c]: the workers' calls; not owned.
  explicit ControllerContext(Controller& c) : c_(c) {}

  std::optional<eval::Value> call(eval::Interpreter& in,
                                  const check::FnInfo& fn,
                                  std::vector<eval::Value>& args,
                                  diag::Span site) override;
  bool dispatch_later(eval::Interpreter& in,
                      const ast::Expr& e,
                      eval::Frame& f) override;
  void settle() override;
  eval::Placement placement() const override {
    eval::Placement p;
    p.loads_on_workers = true;
    return p;
  }

 private:
  /// A worker fn called from a controller frame.
  static bool goes_to_workers(eval::Interpreter& in, const check::FnInfo& fn);

  Controller& c_;
  // The call dispatch_later is sending, and what takes its result.
  struct LaterCall {
    diag::Span site;
    Later then;
  };
  std::optional<LaterCall> later_;
  bool settling_ = false;
};

}  // namespace ss::devices::controller
