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
#include <vector>

#include "dist/comm/communicator.h"
#include "interp/devices/context.h"
#include "interp/eval/objects.h"
#include "interp/tests/eval_helpers.h"

using ss::eval::DeviceHooks;
using ss::eval::ModelRef;
using ss::eval::ModelStore;
using ss::ops::Tensor;
using ss::types::DType;

namespace {

// Holds a newer copy of every store it is asked for: [7, 8].
struct RecordingHooks : DeviceHooks {
  int fetches = 0;
  std::vector<double> timeouts;
  void fetch(ModelStore& s) override {
    ++fetches;
    s.tensors["w"] = Tensor::from_doubles({2}, {7, 8}, DType::F32);
    s.newer_on = nullptr;
  }
  void set_collective_timeout(double seconds) override {
    timeouts.push_back(seconds);
  }
};

ModelRef model_with_w(std::vector<double> w) {
  auto store = std::make_shared<ModelStore>();
  store->tensors["w"] = Tensor::from_doubles({2}, w, DType::F32);
  store->order = {"w"};
  ModelRef m;
  m.store = store;
  return m;
}

}  // namespace

TEST_CASE("a store newer on the workers is copied back once, when read",
          "[eval][devices]") {
  RecordingHooks h;
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

TEST_CASE("collective_timeout goes to the devices' context, if there is one",
          "[eval][devices]") {
  const std::string text =
      "fn main():\n    collective_timeout(2.5)\n    print(1)\n";
  // One device: no context, nothing to set, the program goes on.
  auto one = ss::testing::run_program(text);
  CHECK(one->error.empty());
  CHECK(one->out.str() == "1\n");
  // With a context: it is told the seconds the program gave.
  auto r = ss::testing::run_program(text, /*run_main=*/false);
  REQUIRE(r->in);
  RecordingHooks h;
  r->in->set_device_hooks(&h);
  r->in->run_main({});
  CHECK(h.timeouts == std::vector<double>{2.5});
  CHECK(r->out.str() == "1\n");
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
  // Its collective timeout is the process's default, as the workers' is.
  const auto before = ss::dist::default_collective_timeout();
  one_device.set_collective_timeout(1.25);
  CHECK(ss::dist::default_collective_timeout() ==
        std::chrono::milliseconds(1250));
  ss::dist::set_default_collective_timeout(before);
}
