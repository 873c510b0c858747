#pragma once
// A ForwardCtx for tests: runs a builtin's forward (OpDef::forward) on
// values given by param name, without the checker or the evaluator. Used by
// ops/tests/forward_test.cpp and ref/tests/ref_ops_test.cpp.

#include <catch2/catch.hpp>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ops/api.h"
#include "ops/registry/registry.h"

namespace ss::ops::test {

/// A model argument: its fields by path (batch_norm's bn, linear's l).
using Model = std::map<std::string, Tensor>;

// A ForwardCtx over values given by param name.
class FakeFwd : public ForwardCtx {
 public:
  explicit FakeFwd(const char* op) : def_(find_op(op)) {
    REQUIRE(def_ != nullptr);
    REQUIRE(def_->forward != nullptr);
    args_.resize(def_->params.size());
  }

  FakeFwd& t(const std::string& p, Tensor v) {
    at(p).tensor = std::move(v);
    return *this;
  }
  FakeFwd& num(const std::string& p, double v, bool is_int = false) {
    Arg& a = at(p);
    a.number = v;
    a.is_int = is_int;
    return *this;
  }
  FakeFwd& integer(const std::string& p, int64_t v) {
    return num(p, static_cast<double>(v), true);
  }
  FakeFwd& str(const std::string& p, std::string v) {
    at(p).str = std::move(v);
    return *this;
  }
  FakeFwd& over(std::vector<int> v, const std::string& p = "over") {
    at(p).axes = std::move(v);
    return *this;
  }
  FakeFwd& type(const std::string& p, Shape s, DType d = DType::F32) {
    Arg& a = at(p);
    a.shape = std::move(s);
    a.dtype = d;
    return *this;
  }
  FakeFwd& list(const std::string& p, std::vector<Tensor> v) {
    at(p).list = std::move(v);
    return *this;
  }
  FakeFwd& mode(const std::string& p, bool train, RandomStream s = {}) {
    Arg& a = at(p);
    a.train = train;
    a.stream = s;
    return *this;
  }
  FakeFwd& model(const std::string& p, Model* m) {
    at(p).model = m;
    return *this;
  }
  FakeFwd& result(DType d) {
    result_ = ss::types::Type::scalar(d);
    return *this;
  }

  std::vector<Tensor> run() { return def_->forward(*this); }
  Tensor run1() {
    auto r = run();
    REQUIRE(r.size() == 1);
    return r[0];
  }

  // --- ForwardCtx
  const char* op_name() const override { return def_->name; }
  bool has(size_t i) const override { return i < args_.size() && args_[i]; }
  Tensor tensor(size_t i) override {
    const Arg& a = need(i);
    if (a.tensor.defined()) return a.tensor;
    if (a.number) {
      // torch's weak scalar against the first tensor argument.
      DType d = a.is_int ? DType::I64 : DType::F32;
      for (const auto& o : args_)
        if (o && o->tensor.defined()) {
          DType pd = o->tensor.dtype();
          d = a.is_int ? (pd == DType::Bool ? DType::I64 : pd)
                       : (ss::types::is_float(pd) ? pd : DType::F32);
          break;
        }
      return Tensor::scalar(*a.number, d);
    }
    FAIL("param " << i << " is not a tensor");
    return {};
  }
  double number(size_t i) override {
    const Arg& a = need(i);
    if (a.number) return *a.number;
    if (a.tensor.defined() && a.tensor.numel() == 1) return a.tensor.item();
    FAIL("param " << i << " is not a number");
    return 0;
  }
  int64_t integer(size_t i) override { return static_cast<int64_t>(number(i)); }
  bool flag(size_t i, bool dflt) override {
    return has(i) ? number(i) != 0 : dflt;
  }
  std::string str(size_t i) override { return need(i).str; }
  std::vector<Tensor> tensors(size_t i) override { return need(i).list; }
  std::optional<std::vector<int>> axes(size_t i) override {
    if (!has(i)) return std::nullopt;
    return args_[i]->axes;
  }
  int64_t size(size_t i) override { return integer(i); }
  int64_t axis_size(size_t i) override { return integer(i); }
  Shape shape_arg(size_t i) override { return need(i).shape; }
  DType dtype_arg(size_t i) override { return need(i).dtype; }
  const ss::types::Type& result_type() const override { return result_; }
  const ss::types::Type& arg_type(size_t) const override { return error_; }
  bool training(size_t i) override { return need(i).train; }
  RandomStream random(size_t i) override {
    Arg& a = need(i);
    RandomStream s = a.stream;
    s.stream += a.draws++;  // the evaluator's draw ordinal
    return s;
  }
  Tensor model_field(size_t i, const std::string& path) override {
    Model* m = need(i).model;
    REQUIRE(m != nullptr);
    REQUIRE(m->count(path) == 1);
    return m->at(path);
  }
  void set_model_field(size_t i,
                       const std::string& path,
                       const Tensor& t) override {
    Model* m = need(i).model;
    REQUIRE(m != nullptr);
    (*m)[path] = stop_grad(t);
  }

 private:
  struct Arg {
    Tensor tensor;
    std::optional<double> number;
    bool is_int = false;
    std::string str;
    std::vector<int> axes;
    Shape shape;
    DType dtype = DType::F32;
    std::vector<Tensor> list;
    bool train = false;
    RandomStream stream;
    uint64_t draws = 0;
    Model* model = nullptr;
  };
  Arg& at(const std::string& p) {
    for (size_t i = 0; i < def_->params.size(); ++i)
      if (p == def_->params[i].name) {
        if (!args_[i]) args_[i] = Arg{};
        return *args_[i];
      }
    FAIL("no param " << p << " in " << def_->name);
    throw 0;
  }
  Arg& need(size_t i) {
    REQUIRE(has(i));
    return *args_[i];
  }

  const OpDef* def_;
  std::vector<std::optional<Arg>> args_;
  ss::types::Type result_ = ss::types::Type::error();
  ss::types::Type error_ = ss::types::Type::error();
};

}  // namespace ss::ops::test
