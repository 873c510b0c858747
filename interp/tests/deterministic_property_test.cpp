// Deterministic mode's property (issue 28; Note [Deterministic mode] in
// interp/devices/lower/chunks.h): for every op whose table entry lowers it
// across the batch axis (DeviceRule::Kind::Lowered: the sums, means and
// losses, batch_norm), a short training run at a random batch size on a
// random number of ranks prints and ends with one device's bits. The
// oracle is one device in the mode, which runs the same chunks in one
// process; the property is exact equality, so no tolerance is involved.
// The batch sizes and device counts are drawn from a fixed seed, and cover
// a batch smaller than the device count (ranks with no rows), one chunk,
// and batches that end in a part chunk. An op added to the table with a
// lowering and no case here fails the first test: it must say how to use
// it in a loss.
#include <catch2/catch.hpp>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "interp/check/checker.h"
#include "interp/devices/one_device.h"
#include "interp/devices/threads/data_parallel.h"
#include "interp/eval/interpreter.h"
#include "ops/registry/registry.h"

namespace {

// How each lowered op appears in the loss: an expression of type f32 over
// z = x @ m.w + m.b ([b C], with a gradient), y ([b C] targets), t
// (sigmoid(y), in (0, 1)) and label ([b] i64), with m: Net and mode. Keyed
// by the op's name as the table spells it (a test may name ops; the
// interpreter may not).
const std::map<std::string, std::vector<std::string>>& loss_cases() {
  static const std::map<std::string, std::vector<std::string>> cases = {
      {"sum", {"sum(z * z) / 7.0", "sum(sum(z, over=b) * sum(y, over=b))"}},
      {"mean", {"mean(z * y)", "sum(mean(z, over=b) * mean(z, over=b))"}},
      {"reduce", {"sum(reduce(z * y, over=b, with=sum))"}},
      {"cross_entropy",
       {"cross_entropy(z, label)",
        "cross_entropy(z, label, label_smoothing=0.1)"}},
      {"nll_loss", {"nll_loss(log_softmax(z, over=C), label)"}},
      {"binary_cross_entropy", {"binary_cross_entropy(sigmoid(z), t)"}},
      {"binary_cross_entropy_with_logits",
       {"binary_cross_entropy_with_logits(z, t)"}},
      {"mse", {"mse(z, y)"}},
      {"huber", {"huber(z, y, delta=0.5)"}},
      {"smooth_l1", {"smooth_l1(z, y, beta=0.5)"}},
      {"kl_div",
       {"kl_div(log_softmax(z, over=C), softmax(y, over=C), "
        "reduction=\"batchmean\")"}},
      {"batch_norm", {"mse(batch_norm(z, m.bn, mode), y)"}},
  };
  return cases;
}

std::string program(const std::string& loss, int64_t n) {
  return R"(devices cpu
    deterministic

dim D = 12
dim C = 5

model Net:
    w: [D C] = normal(std=0.3)
    b: [C] = normal(std=0.1)
    bn: BatchNorm[C]

fn loss(mut m: Net, x: [b D], y: [b C], mode: Mode) -> f32:
    let z = dropout(x, 0.1, mode) @ m.w + m.b
    let t = sigmoid(y)
    let label = argmax(y, over=C)
    return )" +
         loss + R"(

fn step(mut m: Net, mut opt: AdamW[Net], x: [b D], y: [b C],
        mode: Mode) -> f32:
    let l, g = value_and_grad(loss, m, x, y, mode)
    update(m, opt, g)
    return l

fn main():
    let m = Net.init(seed=4)
    let opt = adamw(m, lr=0.05)
    let x = randn([)" +
         std::to_string(n) + R"( D], seed=1)
    let y = randn([)" +
         std::to_string(n) + R"( C], seed=2)
    for k in range(3):
        print(float(step(m, opt, x, y, Train(seed=k))))
    print(float(loss(m, x, y, Eval)))
)";
}

struct Run {
  std::string out;
  ss::eval::FinalParams params;
};

Run run_on(const std::string& text, int world) {
  ss::diag::SourceMap sm;
  ss::diag::Diagnostics d;
  ss::check::Options o;
  if (world > 1) {
    o.devices_override = "cpu[";
    for (int r = 0; r < world; ++r)
      o.devices_override += (r ? " " : "") + std::to_string(r);
    o.devices_override += "]";
  }
  auto prog = ss::check::check_source("det.ss", text, sm, d, o);
  INFO(ss::diag::render_terminal(d, sm));
  REQUIRE(prog);
  std::ostringstream out;
  Run r;
  if (world == 1) {
    ss::eval::Interpreter in(*prog, sm, out);
    std::unique_ptr<ss::devices::Context> one =
        ss::devices::one_device_context(*prog);
    REQUIRE(one);
    one->keep_final_params();
    in.set_device_hooks(one.get());
    in.run_main({});
    r.params = one->final_params();
  } else {
    std::vector<ss::eval::FinalParams> ranks;
    ss::devices::threads::ParallelOptions po;
    po.world = world;
    po.gloo = false;
    po.final_params = &ranks;
    auto e = ss::devices::threads::run_data_parallel(*prog, sm, out, po);
    if (e) FAIL(ss::eval::render_runtime_error(*e, sm));
    REQUIRE(ranks.size() == static_cast<size_t>(world));
    r.params = ranks[0];
  }
  r.out = out.str();
  return r;
}

bool same_bits(const ss::ops::Tensor& a, const ss::ops::Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

}  // namespace

TEST_CASE("every op lowered across the batch has a deterministic case",
          "[deterministic]") {
  std::set<std::string> lowered;
  for (const ss::ops::OpDef* op : ss::ops::all_ops())
    if (op->device.kind == ss::ops::DeviceRule::Kind::Lowered)
      lowered.insert(op->name);
  REQUIRE(!lowered.empty());
  for (const std::string& name : lowered) {
    INFO("the table lowers `" << name
                              << "` across the batch: give it a case in "
                                 "loss_cases()");
    CHECK(loss_cases().count(name) == 1);
  }
  // And no case names an op the table does not lower (a stale case).
  for (const auto& [name, _] : loss_cases()) {
    INFO(name);
    CHECK(lowered.count(name) == 1);
  }
}

TEST_CASE("lowered ops give one device's bits at random batch sizes and splits",
          "[deterministic]") {
  std::mt19937 rng(28);
  // First a batch below the device count (ranks with no rows), one
  // chunk, part chunks; then random sizes up to 16 chunks of 8 and beyond
  // (chunks of 16) on random device counts.
  const std::vector<std::pair<int64_t, int>> fixed = {
      {2, 5}, {3, 4}, {8, 3}, {61, 2}};
  std::uniform_int_distribution<int64_t> size(2, 150);
  std::uniform_int_distribution<int> devices(2, 5);
  size_t draw = 0;
  for (const auto& [name, losses] : loss_cases())
    for (const std::string& loss : losses) {
      int64_t n = 0;
      int world = 0;
      if (draw < fixed.size()) {
        std::tie(n, world) = fixed[draw];
      } else {
        n = size(rng);
        world = devices(rng);
      }
      ++draw;
      INFO(name << ": " << loss << ", a batch of " << n << " on " << world
                << " devices");
      const std::string text = program(loss, n);
      Run one = run_on(text, 1);
      Run many = run_on(text, world);
      REQUIRE(!one.out.empty());
      CHECK(many.out == one.out);
      REQUIRE(many.params.params.size() == one.params.params.size());
      for (const auto& [param, t] : one.params.params) {
        INFO("param " << param);
        REQUIRE(many.params.params.count(param) == 1);
        CHECK(same_bits(many.params.params.at(param), t));
      }
    }
}
