// `shard params`' pieces and their collectives (interp/devices/lower/
// shards.h; Note [Sharded params]) against hand-computed values, on three
// thread ranks. The whole path (controller, `ss worker` processes, torch
// beside it) is tests/torch/programs' *_shard tests and conformance/dist's
// shard_params_* cases.
#include "interp/devices/lower/shards.h"

#include <catch2/catch.hpp>
#include <functional>
#include <thread>

#include "dist/comm/inproc_comm.h"
#include "interp/devices/lower/gathered_copies.h"
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

// [f](rank, its context) on [world] thread ranks, recording gradients;
// each rank's collectives' log.
std::vector<std::vector<ss::dist::CollectiveRecord>> on_ranks(
    int world,
    const std::function<void(int, ss::devices::lower::DeviceContext&)>& f) {
  auto hub = std::make_shared<ss::dist::InprocHub>(world);
  std::vector<std::vector<ss::dist::CollectiveRecord>> logs(world);
  std::vector<std::thread> threads;
  for (int r = 0; r < world; ++r)
    threads.emplace_back([&, r] {
      ss::dist::InprocComm comm(hub, r);
      ss::devices::lower::DeviceContext d;
      d.rank = r;
      d.world = world;
      d.comm = &comm;
      ss::ops::GradMode::Guard on(true);
      f(r, d);
      logs[r] = comm.log();
    });
  for (auto& t : threads) t.join();
  return logs;
}

}  // namespace

TEST_CASE("shards: N equal pieces of the flattened param, the last padded",
          "[shard]") {
  Tensor w = f64({2, 3}, {1, 2, 3, 4, 5, 6});
  CHECK(ss::ops::shard_piece_numel(6, 4) == 2);
  CHECK(ss::devices::lower::piece_of(w, 0, 4).to_doubles() ==
        std::vector<double>{1, 2});
  CHECK(ss::devices::lower::piece_of(w, 2, 4).to_doubles() ==
        std::vector<double>{5, 6});
  CHECK(ss::devices::lower::piece_of(w, 3, 4).to_doubles() ==
        std::vector<double>{0, 0});
  Tensor v = f64({7}, {1, 2, 3, 4, 5, 6, 7});
  CHECK(ss::ops::shard_piece_numel(7, 3) == 3);
  CHECK(ss::devices::lower::piece_of(v, 1, 3).to_doubles() ==
        std::vector<double>{4, 5, 6});
  CHECK(ss::devices::lower::piece_of(v, 2, 3).to_doubles() ==
        std::vector<double>{7, 0, 0});
}

TEST_CASE("shards: a store and its optimizer state cut, buffers whole",
          "[shard]") {
  auto s = std::make_shared<ss::eval::ModelStore>();
  s->order = {"w", "stat"};
  s->tensors["w"] = f64({5}, {1, 2, 3, 4, 5});
  s->tensors["stat"] = f64({2}, {8, 9});
  s->is_buffer = {{"w", false}, {"stat", true}};
  ss::devices::lower::shard_store(*s, 1, 2);
  CHECK(s->tensors["w"].to_doubles() == std::vector<double>{4, 5, 0});
  CHECK(s->tensors["stat"].to_doubles() == std::vector<double>{8, 9});
  CHECK(s->whole.at("w") == ss::ops::Shape{5});
  CHECK(s->whole.count("stat") == 0);
  ss::eval::OptimState o;
  o.model = s;
  o.state["w"]["exp_avg"] = f64({5}, {10, 20, 30, 40, 50});
  ss::devices::lower::shard_optim(o, 1, 2);
  CHECK(o.state["w"]["exp_avg"].to_doubles() == std::vector<double>{40, 50, 0});
}

TEST_CASE("shards: the gather is whole on every rank, its VJP a reduce-scatter",
          "[shard]") {
  constexpr int kWorld = 3;
  const Tensor whole = f64({7}, {1, 2, 3, 4, 5, 6, 7});
  std::vector<std::vector<double>> gathered(kWorld), grad(kWorld);
  auto logs =
      on_ranks(kWorld, [&](int r, ss::devices::lower::DeviceContext& d) {
        Tensor piece = ss::ops::requires_grad(
            ss::devices::lower::piece_of(whole, r, kWorld));
        Tensor w = ss::devices::lower::gather_param(piece, {7}, d);
        gathered[r] = w.to_doubles();
        // Rank r's loss is (r + 1) * sum(w): its cotangent of w is r + 1
        // everywhere, and differs between the ranks (not replicated).
        Tensor loss = ss::ops::sum(ss::ops::mul(w, f64({}, {double(r + 1)})));
        grad[r] = ss::ops::backward(loss, {piece})[0].to_doubles();
      });
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

TEST_CASE(
    "shards: a gathered copy goes after its use, gathered again for the "
    "backward pass",
    "[shard]") {
  // Note [Gathered copies]: a = 1..7 and b = 11..17, pieces of 3 (the last
  // padded); rank r's loss is sum(a * u * b) with its own leaf u = r + 1.
  constexpr int kWorld = 3;
  const Tensor a = f64({7}, {1, 2, 3, 4, 5, 6, 7});
  const Tensor b = f64({7}, {11, 12, 13, 14, 15, 16, 17});
  std::vector<std::vector<double>> ga(kWorld), gb(kWorld), gu(kWorld),
      again(kWorld);
  std::vector<int> a_gone_at_b(kWorld), gone_after(kWorld);
  std::vector<std::vector<ss::dist::CollectiveRecord>> logs(kWorld);
  on_ranks(kWorld, [&](int r, ss::devices::lower::DeviceContext& d) {
    ss::devices::lower::GatheredCopies copies;
    Tensor pa =
        ss::ops::requires_grad(ss::devices::lower::piece_of(a, r, kWorld));
    Tensor pb =
        ss::ops::requires_grad(ss::devices::lower::piece_of(b, r, kWorld));
    Tensor u = ss::ops::requires_grad(Tensor::full({7}, r + 1, DType::F64));
    Tensor wa = ss::devices::lower::gather_param(pa, {7}, d, &copies);
    Tensor p = ss::ops::mul(wa, u);
    copies.let_go_all();  // the next read begins (RankContext)
    a_gone_at_b[r] = wa.storage()->let_go_of();
    Tensor wb = ss::devices::lower::gather_param(pb, {7}, d, &copies);
    Tensor loss = ss::ops::sum(ss::ops::mul(p, wb));
    auto g = ss::ops::backward(loss, {pa, pb, u});
    gone_after[r] = wa.storage()->let_go_of() + wb.storage()->let_go_of();
    ga[r] = g[0].to_doubles();
    gb[r] = g[1].to_doubles();
    gu[r] = g[2].to_doubles();
    logs[r] = d.comm->log();  // before the gathers of present_live
    copies.present_live();    // every rank: wa and wb are still held
    again[r] = ss::ops::add(wa, wb).to_doubles();
  });
  using Op = ss::dist::CollectiveOp;
  for (int r = 0; r < kWorld; ++r) {
    INFO("rank " << r);
    CHECK(a_gone_at_b[r] == 1);
    CHECK(gone_after[r] == 2);  // each gather's VJP let its copy go
    // Forward: a, b. Backward: b's reduce-scatter (b still there for
    // mul(p, b)'s VJP), a again for mul(a, u)'s (u takes a gradient), a's.
    REQUIRE(logs[r].size() == 5);
    const Op want[] = {Op::AllGather,
                       Op::AllGather,
                       Op::ReduceScatter,
                       Op::AllGather,
                       Op::ReduceScatter};
    for (int i = 0; i < 5; ++i) CHECK(logs[r][i].op == want[i]);
    CHECK(logs[r][3].count == 3);
    // d/du_r = a * b on rank r alone: 11, 24, 39, 56, 75, 96, 119.
    CHECK(gu[r] == std::vector<double>{11, 24, 39, 56, 75, 96, 119});
    CHECK(again[r] ==
          std::vector<double>{12, 14, 16, 18, 20, 22, 24});  // a + b whole
  }
  // d/da = (1 + 2 + 3) * b over the ranks, d/db = 6 * a; padding 0.
  CHECK(ga[0] == std::vector<double>{66, 72, 78});
  CHECK(ga[1] == std::vector<double>{84, 90, 96});
  CHECK(ga[2] == std::vector<double>{102, 0, 0});
  CHECK(gb[0] == std::vector<double>{6, 12, 18});
  CHECK(gb[1] == std::vector<double>{24, 30, 36});
  CHECK(gb[2] == std::vector<double>{42, 0, 0});
}
