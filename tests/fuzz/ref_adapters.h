#pragma once
// The runtime fuzzer's oracle, its adapters: for each builtin ref/ has a
// function for, how a call's arguments become that function's (Note [A
// runtime fuzzer's oracle] in run_ref.cpp). Keyed by the builtin's name,
// test-side, as ref/tests' rows are: an op's contract stays in its table
// entry, and this table only says where ref's arguments come from.

#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "ops/registry/forward_ctx.h"
#include "ops/registry/op_def.h"
#include "tests/fuzz/ref_compare.h"

namespace ss::fuzz {

/// An adapter does not compare this call: the arguments take a form ref/
/// has no function for (a training mode's draws, a model's gradients).
struct Declined {
  std::string why;
};

/// The adapter asked for a parameter the op's entry does not have: the
/// table changed under it (a finding of the oracle, not of the op).
struct StaleAdapter : std::logic_error {
  using std::logic_error::logic_error;
};

/// One call's arguments by parameter name, read through the evaluator's
/// ForwardCtx, as the op's forward read them. Records each tensor read.
class RefArgs {
 public:
  RefArgs(ops::ForwardCtx& ctx, const ops::OpDef& op) : ctx_(ctx), op_(op) {}

  bool has(std::string_view name);
  ops::Tensor t(std::string_view name);
  double number(std::string_view name, double dflt);
  int64_t integer(std::string_view name, int64_t dflt);
  bool flag(std::string_view name, bool dflt);
  std::string str(std::string_view name, const std::string& dflt);
  std::vector<ops::Tensor> tensors(std::string_view name);
  /// over= as the checker resolved it; nullopt when not given.
  std::optional<std::vector<int>> over(std::string_view name = "over");
  /// over= naming one axis, or axis 0 of a 1-d [x] when not given (the
  /// table's one-axis ops).
  int one_axis(const ops::Tensor& x);
  int64_t size(std::string_view name);
  int64_t axis_size(std::string_view name);
  ops::Shape shape_arg(std::string_view name);
  types::DType dtype_arg(std::string_view name);
  bool training(std::string_view name);
  ops::RandomStream random(std::string_view name);
  ops::Tensor model_field(std::string_view name, const std::string& path);
  const types::Type& arg_type(std::string_view name);
  const types::Type& result_type() { return ctx_.result_type(); }
  [[noreturn]] void decline(const std::string& why) { throw Declined{why}; }

  /// Every tensor the adapter read, for the integer check of Want.
  const std::vector<ops::Tensor>& read() const { return read_; }

 private:
  size_t index(std::string_view name);
  ops::ForwardCtx& ctx_;
  const ops::OpDef& op_;
  std::vector<ops::Tensor> read_;
};

/// What ref says a call of the builtin gives.
using Adapter = std::function<Want(RefArgs&)>;

/// Every adapter, by builtin name.
const std::map<std::string, Adapter>& ref_adapters();

// The families' parts of the table (ref_adapters_*.cpp).
void elementwise_adapters(std::map<std::string, Adapter>& m);
void reduction_adapters(std::map<std::string, Adapter>& m);
void shape_adapters(std::map<std::string, Adapter>& m);
void nn_adapters(std::map<std::string, Adapter>& m);

/// [t] in f64 and its absolute values in f64: a scale's terms.
ops::Tensor f64(const ops::Tensor& t);
ops::Tensor abs64(const ops::Tensor& t);

}  // namespace ss::fuzz
