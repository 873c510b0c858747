#include "ops/registry/run_on_tensors.h"

#include <stdexcept>
#include <string>

namespace ss::ops {

namespace {

// The ForwardCtx of a call whose arguments are all tensors, given.
class TensorsCtx final : public ForwardCtx {
 public:
  TensorsCtx(const OpDef& op, std::vector<Tensor> operands)
      : op_(op), operands_(std::move(operands)) {}

  const char* op_name() const override { return op_.name; }
  bool has(size_t i) const override { return i < operands_.size(); }
  Tensor tensor(size_t i) override {
    if (i >= operands_.size()) refuse("a missing operand");
    return operands_[i];
  }
  double number(size_t) override { refuse("a host number"); }
  int64_t integer(size_t) override { refuse("a host integer"); }
  bool flag(size_t, bool dflt) override { return dflt; }
  std::string str(size_t) override { refuse("a string"); }
  std::vector<Tensor> tensors(size_t) override { refuse("a list"); }
  std::optional<std::vector<int>> axes(size_t) override { return std::nullopt; }
  int64_t size(size_t) override { refuse("a size"); }
  int64_t axis_size(size_t) override { refuse("an axis"); }
  Shape shape_arg(size_t) override { refuse("a type"); }
  DType dtype_arg(size_t) override { refuse("a type"); }
  const types::Type& result_type() const override { return unknown_; }
  const types::Type& arg_type(size_t) const override { return unknown_; }
  bool training(size_t) override { refuse("a mode"); }
  RandomStream random(size_t) override { refuse("a random stream"); }
  Tensor model_field(size_t, const std::string&) override { refuse("a model"); }
  void set_model_field(size_t, const std::string&, const Tensor&) override {
    refuse("a model");
  }

 private:
  [[noreturn]] void refuse(const char* what) const {
    throw std::logic_error(std::string(op_.name) + " run on tensors asks for " +
                           what);
  }

  const OpDef& op_;
  std::vector<Tensor> operands_;
  const types::Type unknown_;
};

}  // namespace

Tensor run_on_tensors(const OpDef& op, std::vector<Tensor> operands) {
  if (!op.forward)
    throw std::logic_error(std::string(op.name) + " has no forward");
  TensorsCtx ctx(op, std::move(operands));
  return op.forward(ctx).at(0);
}

}  // namespace ss::ops
