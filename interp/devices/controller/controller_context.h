#pragma once
// The controller's context (Note [Device hooks] in
// interp/eval/device_hooks.h): the Interpreter of `ss run` on several
// devices runs main and every controller fn itself; a call of a worker fn
// from a controller frame goes to the workers (Controller), sent ahead of
// its result where the statement only drops it or writes it to a sink
// (Note [Async dispatch] in async_dispatch.cpp). Batches are loaded by the
// workers, and a model or optimizer a call changed is copied back from them
// when read here.

#include <optional>
#include <vector>

#include "interp/devices/context.h"
#include "interp/devices/controller/controller.h"

namespace ss::devices {

class ControllerContext : public Context {
 public:
  /// [c]: the workers' calls; not owned.
  explicit ControllerContext(Controller& c) : c_(c) {}

  std::optional<eval::Value> call(eval::Interpreter& in,
                                  const check::FnInfo& fn,
                                  std::vector<eval::Value>& args,
                                  diag::Span site) override;
  std::optional<eval::Value> call_spmd(eval::Interpreter& in,
                                       const check::FnInfo& fn,
                                       std::vector<eval::Value>& args,
                                       diag::Span site) override {
    return c_.call_spmd(fn, args, site);
  }
  bool dispatch_later(eval::Interpreter& in,
                      const ast::Expr& e,
                      eval::Frame& f) override;
  void settle() override;
  bool loads_on_workers() const override { return true; }
  void fetch(eval::ModelStore& s) override { c_.fetch(s); }
  void fetch(eval::OptimState& o) override { c_.fetch(o); }
  ops::Tensor fetch_tensor(const eval::ModelStore& s,
                           const std::string& path) override {
    return c_.fetch_tensor(s, path);
  }
  ops::Tensor fetch_tensor(const eval::OptimState& o,
                           const std::string& path,
                           const std::string& state) override {
    return c_.fetch_tensor(o, path, state);
  }
  bool fetch_layout(const eval::OptimState& o, eval::OptimState& out) override {
    c_.fetch_layout(o, out);
    return true;
  }

 private:
  /// A worker fn called from a controller frame.
  static bool goes_to_workers(const eval::Interpreter& in,
                              const check::FnInfo& fn);

  Controller& c_;
  // The call dispatch_later is sending, and what takes its result.
  struct LaterCall {
    diag::Span site;
    Later then;
  };
  std::optional<LaterCall> later_;
  bool settling_ = false;
};

}  // namespace ss::devices
