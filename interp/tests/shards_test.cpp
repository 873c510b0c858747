// `shard params`' pieces and their collectives (interp/devices/lower/
// shards.h; Note [Sharded params]) against hand-computed values, on three
// thread ranks. The whole path (controller, `ss worker` processes, torch
// beside it) is tests/torch/programs' *_shard tests and conformance/dist's
// shard_params_* cases.
#include "interp/devices/lower/shards.h"

#include <catch2/catch.hpp>
#include <thread>

#include "dist/comm/inproc_comm.h"
#include "interp/devices/lower/lowering.h"
#include "ops/api.h"
#include "ops/autodiff/tape.h"
#include "ops/core/batch_split.h"

namespace {

using ss::ops::Tensor;
using ss::types::DType;

Tensor f64(const ss::ops::Shape& shape, std::vector<double> v) {
  return Tensor::from_doubles(shape, v, DType::F64);
}

}  // namespace

TEST_CASE("shards: N equal pieces of the flattened param, the last padded",
          "[shard]") {
  Tensor w = f64({2, 3}, {1, 2, 3, 4, 5, 6});
  CHECK(ss::ops::shard_piece_numel(6, 4) == 2);
  CHECK(ss::eval::piece_of(w, 0, 4).to_doubles() == std::vector<double>{1, 2});
  CHECK(ss::eval::piece_of(w, 2, 4).to_doubles() == std::vector<double>{5, 6});
  CHECK(ss::eval::piece_of(w, 3, 4).to_doubles() == std::vector<double>{0, 0});
  Tensor v = f64({7}, {1, 2, 3, 4, 5, 6, 7});
  CHECK(ss::ops::shard_piece_numel(7, 3) == 3);
  CHECK(ss::eval::piece_of(v, 1, 3).to_doubles() ==
        std::vector<double>{4, 5, 6});
  CHECK(ss::eval::piece_of(v, 2, 3).to_doubles() ==
        std::vector<double>{7, 0, 0});
}

TEST_CASE("shards: a store and its optimizer state cut, buffers whole",
          "[shard]") {
  auto s = std::make_shared<ss::eval::ModelStore>();
  s->order = {"w", "stat"};
  s->tensors["w"] = f64({5}, {1, 2, 3, 4, 5});
  s->tensors["stat"] = f64({2}, {8, 9});
  s->is_buffer = {{"w", false}, {"stat", true}};
  ss::eval::shard_store(*s, 1, 2);
  CHECK(s->tensors["w"].to_doubles() == std::vector<double>{4, 5, 0});
  CHECK(s->tensors["stat"].to_doubles() == std::vector<double>{8, 9});
  CHECK(s->whole.at("w") == ss::ops::Shape{5});
  CHECK(s->whole.count("stat") == 0);
  ss::eval::OptimState o;
  o.model = s;
  o.state["w"]["exp_avg"] = f64({5}, {10, 20, 30, 40, 50});
  ss::eval::shard_optim(o, 1, 2);
  CHECK(o.state["w"]["exp_avg"].to_doubles() == std::vector<double>{40, 50, 0});
}

TEST_CASE("shards: the gather is whole on every rank, its VJP a reduce-scatter",
          "[shard]") {
  constexpr int kWorld = 3;
  auto hub = std::make_shared<ss::dist::InprocHub>(kWorld);
  const Tensor whole = f64({7}, {1, 2, 3, 4, 5, 6, 7});
  std::vector<std::vector<double>> gathered(kWorld), grad(kWorld);
  std::vector<std::vector<ss::dist::CollectiveRecord>> logs(kWorld);
  std::vector<std::thread> threads;
  for (int r = 0; r < kWorld; ++r)
    threads.emplace_back([&, r] {
      ss::dist::InprocComm comm(hub, r);
      ss::eval::DeviceContext d;
      d.rank = r;
      d.world = kWorld;
      d.comm = &comm;
      ss::ops::GradMode::Guard on(true);
      Tensor piece =
          ss::ops::requires_grad(ss::eval::piece_of(whole, r, kWorld));
      Tensor w = ss::eval::gather_param(piece, {7}, d);
      gathered[r] = w.to_doubles();
      // Rank r's loss is (r + 1) * sum(w): its cotangent of w is r + 1
      // everywhere, and differs between the ranks (not replicated).
      Tensor loss = ss::ops::sum(ss::ops::mul(w, f64({}, {double(r + 1)})));
      grad[r] = ss::ops::backward(loss, {piece})[0].to_doubles();
      logs[r] = comm.log();
    });
  for (auto& t : threads) t.join();
  for (int r = 0; r < kWorld; ++r) {
    CHECK(gathered[r] == whole.to_doubles());
    REQUIRE(logs[r].size() == 2);
    CHECK(logs[r][0].op == ss::dist::CollectiveOp::AllGather);
    CHECK(logs[r][0].count == 3);  // the piece
    CHECK(logs[r][1].op == ss::dist::CollectiveOp::ReduceScatter);
    CHECK(logs[r][1].count == 9);  // the whole gradient, padded
  }
  // Each element's gradient is 1 + 2 + 3 = 6; the padding's is 0.
  CHECK(grad[0] == std::vector<double>{6, 6, 6});
  CHECK(grad[1] == std::vector<double>{6, 6, 6});
  CHECK(grad[2] == std::vector<double>{6, 0, 0});
}
