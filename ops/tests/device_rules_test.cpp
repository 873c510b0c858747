// Each op's rule on several devices in its table entry
// (ops/registry/device_rule.h): the table is complete and agrees with
// library.md's table, written out here by hand; and every lowering's
// payload, as its share really builds it, is the count and dtype that the
// entry's PayloadSize gives `ss explain` (interp/tests/explain_test.cpp
// checks explain's figures against the same hand-computed bytes).
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <set>
#include <string>

#include "ops/registry/registry.h"
#include "ops/tests/fake_forward_ctx.h"

using namespace ss::ops;
using ss::types::DType;
using Kind = DeviceRule::Kind;

namespace {

int param_count(const OpDef& op) {
  return static_cast<int>(op.params.size());
}

bool has_over(const OpDef& op) {
  for (const ParamSpec& p : op.params)
    if (std::string(p.name) == "over" && p.kind == ParamKind::Axes) return true;
  return false;
}

// [n] values 0.5, 1.5, ... shaped [shape].
Tensor ramp(Shape shape, DType dt = DType::F32) {
  std::vector<double> v(numel_of(shape));
  for (size_t i = 0; i < v.size(); ++i) v[i] = 0.5 + double(i % 7);
  return Tensor::from_doubles(shape, v, dt);
}

}  // namespace

TEST_CASE("device rules: every builtin's entry is whole and consistent",
          "[device_rules]") {
  // library.md, "Operations across the batch axis": these lower to an
  // all-reduce; every other op across it is E1801.
  const std::set<std::string> lowered = {"sum",
                                         "mean",
                                         "reduce",
                                         "cross_entropy",
                                         "nll_loss",
                                         "binary_cross_entropy",
                                         "binary_cross_entropy_with_logits",
                                         "mse",
                                         "smooth_l1",
                                         "huber",
                                         "kl_div",
                                         "batch_norm"};
  // What each host call does in the controller (devices.md item 2).
  using H = HostEffect;
  const std::map<std::string, HostEffect> effects = {
      {"print", H::Prints},
      {"save", H::SavesCheckpoint},
      {"load", H::LoadsCheckpoint},
      {"load_into", H::LoadsCheckpoint},
      {"write", H::WritesSink},
      {"stdout", H::MakesSink},
      {"tee", H::MakesSink},
      {"csv", H::MakesFileSink},
      {"jsonl", H::MakesFileSink},
      {"dataset", H::MakesDataset},
      {"mnist", H::MakesDataset},
      {"synthetic_digits", H::MakesDataset},
      {"mean_logs", H::LoopsOverDataset},
      {"progress", H::ShowsProgress},
      {"collective_timeout", H::SetsTimeout},
      {"float", H::ReadsHostNumber},
      {"int", H::ReadsHostNumber},
      {"str", H::ReadsHostNumber}};
  const std::set<std::string> device_work = {
      "value_and_grad", "grad", "update"};
  // Mesh collectives: their over= is a mesh axis, not the batch axis.
  const std::set<std::string> mesh_over = {"psum_scatter", "all_gather"};
  size_t n_lowered = 0;
  for (const OpDef* def : all_ops()) {
    const OpDef& op = *def;
    const std::string n = op.name;
    const DeviceRule& r = op.device;
    INFO(n);
    CHECK((r.kind == Kind::Lowered) == lowered.count(n) > 0);
    CHECK((r.kind == Kind::Lowered) == (r.lowering != nullptr));
    auto fx = effects.find(n);
    CHECK(r.host == (fx == effects.end() ? H::None : fx->second));
    if (r.host != H::None) CHECK(r.kind == Kind::Host);
    CHECK(r.device_work == device_work.count(n) > 0);
    // An op along over= says what happens across the batch axis.
    if (has_over(op) && !mesh_over.count(n))
      CHECK((r.kind == Kind::Lowered || r.kind == Kind::Refused));
    if (r.kind == Kind::Host) CHECK(!op.differentiable);
    if (r.fn_arg != FnArg::None) {
      REQUIRE(param_count(op) > 0);
      CHECK(std::string(op.params[0].name) == "f");
    }
    if (r.batch_size_param >= 0) CHECK(r.batch_size_param < param_count(op));
    if (r.elementwise_with) CHECK(r.across == Across::Reduction);
    if (const Lowering* l = r.lowering) {
      ++n_lowered;
      CHECK(l->share != nullptr);
      CHECK(std::string(l->sends).size() > 0);
      CHECK(std::string(l->explain_one).size() > 0);
      CHECK(op.forward != nullptr);
      CHECK(l->only_param < param_count(op));
      CHECK((l->only_param >= 0) == (l->only_with != nullptr));
      CHECK(l->eval_mode_param < param_count(op));
      CHECK(l->per_example_param < param_count(op));
      CHECK((l->per_example_param >= 0) == (l->per_example_with != nullptr));
      if (l->size.of == PayloadSize::Of::ArgAxis)
        CHECK(l->size.arg < param_count(op));
      CHECK(std::string(collective_name(l->collective)) == "all-reduce");
    }
  }
  CHECK(n_lowered == lowered.size());
  CHECK(find_op("reduce")->device.lowering->only_with == std::string("sum"));
  CHECK(find_op("mean_logs")->device.fn_arg == FnArg::PerBatch);
  CHECK(find_op("value_and_grad")->device.fn_arg == FnArg::Differentiates);
  CHECK(find_op("batches")->device.batch_size_param == 1);
  CHECK(find_op("psum")->device.sets_varying);
}

// The payload a share hands to the collective: its values and their dtype,
// against bytes counted by hand for one share of 4 examples of [4 D=3]
// (and C=5 channels). Exact: these are counts, not values.
TEST_CASE("device rules: each lowering's payload is the entry's count",
          "[device_rules]") {
  auto sent = [](test::FakeFwd& f) {
    const Lowering* l = find_op(f.op_name())->device.lowering;
    REQUIRE(l);
    Share s = l->share(f);
    return std::make_pair(s.send.numel(), s.send.dtype());
  };
  {  // sum over b of [b 3]: its 3 partial sums, f32: 12 bytes.
    test::FakeFwd f("sum");
    f.t("x", ramp({4, 3})).over({0});
    CHECK(sent(f) == std::make_pair(int64_t(3), DType::F32));
  }
  {  // reduce(with=sum) over b of [b 3] f64: 3 sums, 24 bytes.
    test::FakeFwd f("reduce");
    f.t("x", ramp({4, 3}, DType::F64)).over({0}).str("with", "sum");
    CHECK(sent(f) == std::make_pair(int64_t(3), DType::F64));
  }
  {  // mean over b of [b 3]: 3 sums and a count, f32: 16 bytes.
    test::FakeFwd f("mean");
    f.t("x", ramp({4, 3})).over({0});
    CHECK(sent(f) == std::make_pair(int64_t(4), DType::F32));
  }
  {  // mean of i64 over every axis: one sum and a count in f32: 8 bytes.
    test::FakeFwd f("mean");
    f.t("x", ramp({4, 3}, DType::I64));
    CHECK(sent(f) == std::make_pair(int64_t(2), DType::F32));
  }
  {  // a bf16 mean is summed in f32: 3 sums and a count, 16 bytes.
    test::FakeFwd f("mean");
    f.t("x", ramp({4, 3}, DType::BF16)).over({0});
    CHECK(sent(f) == std::make_pair(int64_t(4), DType::F32));
  }
  {  // cross_entropy of [b 3] logits, i64 labels: a sum and a count.
    test::FakeFwd f("cross_entropy");
    f.t("logits", ramp({4, 3}))
        .t("label", Tensor::from_doubles({4}, {0, 2, 1, 0}, DType::I64))
        .result(DType::F32);
    CHECK(sent(f) == std::make_pair(int64_t(2), DType::F32));
  }
  {  // nll_loss with weight= and a label ignored: the sum and the kept
     // labels' weight, 2 values.
    test::FakeFwd f("nll_loss");
    f.t("logp", ramp({4, 3}))
        .t("label", Tensor::from_doubles({4}, {0, -100, 1, 0}, DType::I64))
        .t("weight", ramp({3}))
        .result(DType::F32);
    CHECK(sent(f) == std::make_pair(int64_t(2), DType::F32));
  }
  {  // kl_div with reduction="batchmean" in f64: the sum and the rows.
    test::FakeFwd f("kl_div");
    f.t("input", ramp({4, 3}, DType::F64))
        .t("target", ramp({4, 3}, DType::F64))
        .str("reduction", "batchmean")
        .result(DType::F64);
    CHECK(sent(f) == std::make_pair(int64_t(2), DType::F64));
  }
  {  // mse of two [b 3]: a sum and a count, f32: 8 bytes.
    test::FakeFwd f("mse");
    f.t("a", ramp({4, 3})).t("b", ramp({4, 3})).result(DType::F32);
    CHECK(sent(f) == std::make_pair(int64_t(2), DType::F32));
  }
  {  // batch_norm of [b C=5] in Train mode: 2·5 + 1 values in f64, 88 bytes.
    test::Model bn = {{"g", ramp({5})},
                      {"b", ramp({5})},
                      {"running_mean", ramp({5})},
                      {"running_var", ramp({5})}};
    test::FakeFwd f("batch_norm");
    f.t("x", ramp({4, 5})).model("bn", &bn).mode("mode", true);
    CHECK(sent(f) == std::make_pair(int64_t(11), DType::F64));
  }
}

// On one rank the combined payload is the share's own: each finish must
// give one device's forward (an independent computation: the forwards use
// mean and variance, the lowerings sums and counts). f32 within 1e-6
// relative (a handful of roundings of values near 1); f64 within 1e-12.
TEST_CASE("device rules: a lowering's finish on one rank is the forward",
          "[device_rules]") {
  auto one_rank = [](test::FakeFwd& f) {
    Share s = find_op(f.op_name())->device.lowering->share(f);
    return s.finish(s.send).at(0);
  };
  auto close = [](const Tensor& a, const Tensor& b, double tol) {
    REQUIRE(a.shape() == b.shape());
    std::vector<double> x = a.to_doubles(), y = b.to_doubles();
    for (size_t i = 0; i < x.size(); ++i)
      CHECK(std::abs(x[i] - y[i]) <= tol * (1 + std::abs(y[i])));
  };
  {
    test::FakeFwd f("mean");
    f.t("x", ramp({4, 3})).over({0});
    close(one_rank(f), f.run1(), 1e-6);
  }
  {
    test::FakeFwd f("sum");
    f.t("x", ramp({4, 3}, DType::F64)).over({0});
    close(one_rank(f), f.run1(), 1e-12);
  }
  {
    test::FakeFwd f("cross_entropy");
    f.t("logits", ramp({4, 3}))
        .t("label", Tensor::from_doubles({4}, {0, 2, 1, 0}, DType::I64))
        .result(DType::F32);
    close(one_rank(f), f.run1(), 1e-6);
  }
  {
    test::FakeFwd f("mse");
    f.t("a", ramp({4, 3})).t("b", ramp({4, 3}, DType::F32)).result(DType::F32);
    close(one_rank(f), f.run1(), 1e-6);
  }
  {
    auto bn = [] {
      return test::Model{{"g", ramp({5}, DType::F64)},
                         {"b", ramp({5}, DType::F64)},
                         {"running_mean", ramp({5}, DType::F64)},
                         {"running_var", ramp({5}, DType::F64)}};
    };
    test::Model a = bn(), b = bn();
    test::FakeFwd fa("batch_norm"), fb("batch_norm");
    fa.t("x", ramp({4, 5}, DType::F64)).model("bn", &a).mode("mode", true);
    fb.t("x", ramp({4, 5}, DType::F64)).model("bn", &b).mode("mode", true);
    close(one_rank(fa), fb.run1(), 1e-12);
    close(a.at("running_mean"), b.at("running_mean"), 1e-12);
    close(a.at("running_var"), b.at("running_var"), 1e-12);
  }
}
