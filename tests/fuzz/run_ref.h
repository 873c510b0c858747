#pragma once
// The runtime fuzzer's oracle (Note [A runtime fuzzer's oracle] in
// run_ref.cpp): device hooks that run every op as the one-device context
// does and recompute each builtin's value with ref/'s loops.

#include <cstdint>
#include <string>
#include <vector>

#include "interp/eval/device_hooks.h"

namespace ss::fuzz {

/// What the oracle saw in one run.
struct RefReport {
  uint64_t compared = 0;  // builtin values compared with ref
  uint64_t declined = 0;  // calls whose adapter had no ref form for them
  /// Builtins with a forward that ran without an adapter, once per call.
  std::vector<std::string> unadapted;
  /// The first value that differs from ref's: the builtin, then where and
  /// how; "" when none did.
  std::string mismatch;
};

class RefOracle final : public eval::DeviceHooks {
 public:
  /// Runs as [inner] runs (the one-device context; null: one device's
  /// defaults, DeviceHooks' own), comparing each builtin's value.
  explicit RefOracle(eval::DeviceHooks* inner)
      : inner_(inner ? inner : &plain_) {}

  const RefReport& report() const { return report_; }

  eval::Value run_op(eval::OpSite& site) override;

  // Every other hook is [inner]'s.
  std::optional<eval::Value> call(eval::Interpreter& in,
                                  const check::FnInfo& fn,
                                  std::vector<eval::Value>& args,
                                  diag::Span site) override {
    return inner_->call(in, fn, args, site);
  }
  void bind_call(eval::Interpreter& in,
                 const check::FnInfo& fn,
                 eval::Frame& callee,
                 diag::Span site,
                 const std::vector<types::Type>* arg_types,
                 bool remat,
                 std::vector<eval::ParamShare>& shares) override {
    inner_->bind_call(in, fn, callee, site, arg_types, remat, shares);
  }
  bool dispatch_later(eval::Interpreter& in,
                      const ast::Expr& e,
                      eval::Frame& f) override {
    return inner_->dispatch_later(in, e, f);
  }
  void settle() override { inner_->settle(); }
  eval::Placement placement() const override { return inner_->placement(); }
  std::optional<std::vector<ops::Tensor>> gradients(
      const ops::Tensor& loss,
      const std::vector<ops::Tensor>& leaves,
      const std::vector<bool>& pieces,
      diag::Span at,
      std::optional<double> scale) override {
    return inner_->gradients(loss, leaves, pieces, at, scale);
  }
  void tape_released() override { inner_->tape_released(); }
  ops::Tensor sum_over_pieces(const ops::Tensor& partial) override {
    return inner_->sum_over_pieces(partial);
  }
  std::optional<ops::Tensor> whole_for_sums(const eval::ModelRef& m,
                                            const std::string& path) override {
    return inner_->whole_for_sums(m, path);
  }
  void entry_done(const eval::Frame& f) override { inner_->entry_done(f); }

 private:
  void check(eval::OpSite& site, const eval::Value& v);
  void check_pattern(eval::OpSite& site, const eval::Value& v);

  eval::DeviceHooks plain_;
  eval::DeviceHooks* inner_;
  RefReport report_;
};

/// The builtins with a forward that ref/ has no adapter for, each with
/// why (the coverage test's list).
const std::vector<std::pair<std::string, std::string>>& ref_not_adapted();

}  // namespace ss::fuzz
