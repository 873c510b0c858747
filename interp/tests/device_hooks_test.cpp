// The seam between the evaluator and the devices layer (Note [Device hooks]
// in interp/eval/device_hooks.h): the Interpreter asks its hooks where the
// Note says, and runs as one device without them. The behaviour on several
// devices is tested through `ss run`'s controller and workers
// (controller_test, async_dispatch_test, data_parallel_test); these check
// the seam itself, with a context that records what it is asked.
#include "interp/eval/device_hooks.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "dist/comm/communicator.h"
#include "interp/devices/context.h"
#include "interp/eval/objects.h"
#include "interp/eval/runtime_lib.h"
#include "interp/tests/eval_helpers.h"
#include "ops/api.h"
#include "ops/registry/registry.h"

using ss::eval::DeviceHooks;
using ss::eval::ModelRef;
using ss::eval::ModelStore;
using ss::eval::OpSite;
using ss::eval::OptimState;
using ss::ops::Tensor;
using ss::types::DType;

namespace {

// Holds a newer copy of every store it is asked for: [7, 8].
struct RecordingCopies : ss::eval::NewerCopies {
  int fetches = 0;
  void fetch(ModelStore& s) override {
    ++fetches;
    s.tensors["w"] = Tensor::from_doubles({2}, {7, 8}, DType::F32);
    s.newer_on = nullptr;
  }
  void fetch(OptimState& o) override { o.newer_on = nullptr; }
  Tensor fetch_tensor(const ModelStore&, const std::string&) override {
    return {};
  }
  Tensor fetch_tensor(const OptimState&,
                      const std::string&,
                      const std::string&) override {
    return {};
  }
  void fetch_layout(const OptimState&, OptimState&) override {}
};

ModelRef model_with_w(std::vector<double> w) {
  auto store = std::make_shared<ModelStore>();
  store->tensors["w"] = Tensor::from_doubles({2}, w, DType::F32);
  store->order = {"w"};
  ModelRef m;
  m.store = store;
  return m;
}

// Records each op site it is given (kind and what it names), and runs it
// as one device does; a ParamRead of [doubled] gives the param twice.
struct RecordingSites : DeviceHooks {
  std::vector<std::string> seen;
  std::string doubled;
  ss::eval::Value run_op(OpSite& s) override {
    switch (s.kind) {
      case OpSite::Kind::Builtin:
        seen.push_back(std::string("builtin ") + s.op->name);
        break;
      case OpSite::Kind::Operator:
        seen.push_back("operator " + std::to_string(s.operands.size()));
        break;
      case OpSite::Kind::Pattern:
        seen.push_back(std::string("pattern ") + s.op->name);
        break;
      case OpSite::Kind::Part:
        seen.push_back(std::string("part ") + s.op->name);
        break;
      case OpSite::Kind::ParamRead:
        seen.push_back("param " + s.path);
        if (s.path == doubled)
          return ss::eval::Value::tensor(
              ss::ops::mul(s.run().t, Tensor::scalar(2, DType::F32)));
        break;
    }
    return s.run();
  }
};

}  // namespace

TEST_CASE("a store newer on the workers is copied back once, when read",
          "[eval][devices]") {
  RecordingCopies h;
  ModelRef newer = model_with_w({1, 2});
  newer.store->newer_on = &h;
  CHECK(newer.get("w").to_doubles() == std::vector<double>{7, 8});
  CHECK(newer.get("w").to_doubles() == std::vector<double>{7, 8});
  CHECK(h.fetches == 1);  // the fetch cleared the mark
  // A store no context marked is the newest: never fetched.
  ModelRef here = model_with_w({1, 2});
  CHECK(here.get("w").to_doubles() == std::vector<double>{1, 2});
  CHECK(h.fetches == 1);
}

TEST_CASE("every op reaches the devices' context through run_op",
          "[eval][devices]") {
  // One of each kind of op site: a param read, an operator with a tensor
  // side (and one of host numbers, which is none), a builtin, a pattern.
  const std::string text =
      "dim H = 2\n\n"
      "model M:\n    w: [4] = zeros()\n\n"
      "fn main():\n    let m = M.init(seed=0)\n"
      "    m.w = tensor([1.0, 2.0, 3.0, 4.0])\n"
      "    let y = m.w * 2.0\n"
      "    let z = rearrange(y, (H k) -> H k)\n"
      "    print(sum(z) + 1 * 3)\n";
  auto one = ss::testing::run_program(text);
  REQUIRE(one->error.empty());
  CHECK(one->out.str() == "f32 23\n");  // (1+2+3+4)*2 + 3, by hand
  auto r = ss::testing::run_program(text, /*run_main=*/false);
  REQUIRE(r->in);
  RecordingSites h;
  r->in->set_device_hooks(&h);
  r->in->run_main({});
  CHECK(r->out.str() == one->out.str());
  const std::vector<std::string> expected = {"builtin tensor",
                                             "param w",
                                             "operator 1",
                                             "pattern rearrange",
                                             "builtin sum",
                                             "operator 1",
                                             "builtin print"};
  // M.init and zeros() run when the model is made: sites before these.
  REQUIRE(h.seen.size() >= expected.size());
  CHECK(std::vector<std::string>(h.seen.end() - expected.size(),
                                 h.seen.end()) == expected);
  // What run_op returns is what the program gets: a param read doubled.
  auto twice = ss::testing::run_program(text, /*run_main=*/false);
  RecordingSites d;
  d.doubled = "w";
  twice->in->set_device_hooks(&d);
  twice->in->run_main({});
  CHECK(twice->out.str() == "f32 43\n");  // (1+2+3+4)*4 + 3
}

TEST_CASE("collective_timeout goes to the devices' context, if there is one",
          "[eval][devices]") {
  const std::string text =
      "fn main():\n    collective_timeout(2.5)\n    print(1)\n";
  const auto before = ss::dist::default_collective_timeout();
  // One device: no context, nothing to set, the program goes on.
  auto one = ss::testing::run_program(text);
  CHECK(one->error.empty());
  CHECK(one->out.str() == "1\n");
  CHECK(ss::dist::default_collective_timeout() == before);
  // With a context: collectives started afterwards wait the seconds the
  // program gave (the process's default, as the workers' is).
  auto r = ss::testing::run_program(text, /*run_main=*/false);
  REQUIRE(r->in);
  ss::devices::Context ctx;
  r->in->set_device_hooks(&ctx);
  r->in->run_main({});
  CHECK(ss::dist::default_collective_timeout() ==
        std::chrono::milliseconds(2500));
  CHECK(r->out.str() == "1\n");
  // A bad value is refused before anything is set.
  auto bad = ss::testing::run_program(
      "fn main():\n    let s = 0.5 - 1.0\n    collective_timeout(s)\n",
      /*run_main=*/false);
  REQUIRE(bad->in);
  ss::devices::Context ctx2;
  bad->in->set_device_hooks(&ctx2);
  CHECK_THROWS(bad->in->run_main({}));
  CHECK(ss::dist::default_collective_timeout() ==
        std::chrono::milliseconds(2500));
  ss::dist::set_default_collective_timeout(before);
}

TEST_CASE("one device's context keeps what main's models hold at its end",
          "[eval][devices]") {
  // Params set by hand in main, read back by name: "m.w".
  const std::string text =
      "model M:\n    w: [2] = zeros()\n\n"
      "fn main():\n    let m = M.init(seed=0)\n    m.w = tensor([3.0, 4.0])\n";
  auto r = ss::testing::run_program(text, /*run_main=*/false);
  REQUIRE(r->in);
  ss::devices::Context one_device;
  one_device.keep_final_params();
  r->in->set_device_hooks(&one_device);
  r->in->run_main({});
  REQUIRE(one_device.final_params().params.count("m.w") == 1);
  CHECK(one_device.final_params().params.at("m.w").to_doubles() ==
        std::vector<double>{3, 4});
  CHECK(one_device.final_params().steps == 0);  // no optimizer
}
