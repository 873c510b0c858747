// `ss explain` with `shard params` (devices.md item 9 and "The `ss explain`
// report"): the README model's layout in the seed's words and figures
// (271,024 bytes of its params a device on three), the all-gather of each
// param where it is read and the reduce-scatter of its gradient, counted
// by hand below, and the payloads a real step hands its collectives, which
// must be the table's figures.
#include <catch2/catch.hpp>

#include "interp/builtins/models.h"
#include "interp/tests/explain_test_util.h"

namespace {

namespace comms = ss::check::comms;
using namespace explain_test;

// The README's params: w1 is [784 256] (200,704 values), w2 [256 10]
// (2,560). On three devices each piece of w1 is ceil(200,704 / 3) =
// 66,902 values and the padded whole 200,706; w2's pieces are 854, 2,562
// padded. All f32.
constexpr int64_t kW1Piece = 66902, kW2Piece = 854;

// A model of one 5-value param under shard params on three devices (pieces
// of 2, the last padded by one) and its loss; a test adds its step fn.
constexpr const char* kOneParam =
    "devices cpu[0 1 2]\n"
    "    shard params\n"
    "\n"
    "dim D = 5\n"
    "\n"
    "model M:\n"
    "    w: [D] = zeros()\n"
    "\n"
    "fn l(m: M, x: [b D]) -> f32:\n"
    "    return sum(x * m.w)\n"
    "\n";

}  // namespace

TEST_CASE("explain shard params: each device holds a third of every param",
          "[explain]") {
  auto c = check_readme("cpu[0 1 2]", true);
  comms::DeviceTable t = comms::build_table(*c->prog, c->sm);
  CHECK(t.notes.empty());  // laid out, not "not in this build"
  const comms::ValueLayout& m = value(t, "train_step", "m");
  CHECK(m.kind == comms::ValueLayout::Kind::ModelShards);
  // The seed's sentence and number, word for word.
  CHECK(m.text ==
        "each device holds a third of every param of Mlp, 271,024 bytes "
        "(265 KiB) of its params");
  CHECK(m.model_bytes == 4 * (kW1Piece + kW2Piece));
  // Two devices: 100,352 + 1,280 values of 4 bytes.
  auto c2 = check_readme("cpu[0 1]", true);
  comms::DeviceTable t2 = comms::build_table(*c2->prog, c2->sm);
  CHECK(value(t2, "forward", "m").text ==
        "each device holds a half of every param of Mlp, 406,528 bytes "
        "(397 KiB) of its params");
}

// w1 and w2 are one bucket (813,056 whole bytes, within the 1 MiB of
// ops::kShardBucketBytes): the line's first read gathers both in one
// all-gather, and the backward pass reduce-scatters both in one.
TEST_CASE("explain shard params: an all-gather where a param is read",
          "[explain]") {
  auto c = check_readme("cpu[0 1 2]", true);
  comms::DeviceTable t = comms::build_table(*c->prog, c->sm);
  const comms::LineSends& f = line_with(t, "relu(x @ m.w1) @ m.w2");
  REQUIRE(f.collectives.size() == 2);
  const comms::Collective& g1 = f.collectives[0];
  CHECK(g1.op == "all-gather");
  CHECK(g1.count.value() == kW1Piece + kW2Piece);
  CHECK(g1.dtype == "f32");
  CHECK(g1.bytes.value() == 4 * (kW1Piece + kW2Piece));
  // 67,756 values of 4 bytes; 271,024 / 1,024 = 264.7 KiB.
  CHECK(g1.text ==
        "all-gather of `Mlp`'s params `w1` and `w2`, from every device's "
        "piece: 67,756 × f32 = 271,024 bytes (265 KiB)");
  const comms::Collective& r1 = f.collectives[1];
  CHECK(r1.op == "reduce-scatter");
  CHECK(r1.backward);
  CHECK(r1.count.value() == 3 * (kW1Piece + kW2Piece));
  CHECK(r1.text.rfind("in the backward pass: reduce-scatter of the gradients "
                      "of `Mlp`'s params `w1` and `w2`",
                      0) == 0);
  // A forward call's total: the gathers only.
  CHECK(f.total.value() == 4 * (kW1Piece + kW2Piece));
  // value_and_grad all-reduces no gradient; inside `loss`, differentiated:
  // cross_entropy's 8 bytes twice, the gathers, the reduce-scatters.
  const comms::LineSends& vg = line_with(t, "value_and_grad(");
  CHECK(vg.collectives.empty());
  REQUIRE(vg.calls.size() == 1);
  CHECK(vg.calls[0].bytes.value() ==
        2 * 8 + 4 * (kW1Piece + kW2Piece) + 4 * 3 * (kW1Piece + kW2Piece));
}

TEST_CASE("explain shard params: norm and clip_norm all-reduce one number",
          "[explain]") {
  auto c = check_text(std::string(kOneParam) +
                          "fn step(mut m: M, mut opt: SGD[M], x: [b D]) -> "
                          "f32:\n"
                          "    let v, g = value_and_grad(l, m, x)\n"
                          "    update(m, opt, clip_norm(g, 1.0))\n"
                          "    return norm(g)\n",
                      "");
  comms::DeviceTable t = comms::build_table(*c->prog, c->sm);
  for (const char* needle : {"clip_norm(g", "return norm(g)"}) {
    INFO(needle);
    const comms::LineSends& l = line_with(t, needle);
    REQUIRE(l.collectives.size() == 1);
    CHECK(l.collectives[0].op == "all-reduce");
    CHECK(l.collectives[0].count.value() == 1);
    CHECK(l.collectives[0].dtype == "f64");
    CHECK(l.total.value() == 8);
  }
  // w's 5 values: pieces of 2, the last padded by one.
  const comms::LineSends& r = line_with(t, "sum(x * m.w)");
  CHECK(r.collectives.at(0).count.value() == 2);
  CHECK(r.collectives.at(1).count.value() == 6);
}

// value_and_grad(..., scaler=opt) (Note [Loss scaling] in
// interp/builtins/grad_scaler.cpp): whether any device's pieces of the
// gradients hold an inf, one f64 summed over the devices; without scaler=
// nothing.
TEST_CASE("explain shard params: a grad scaler all-reduces one number",
          "[explain]") {
  const std::string head = std::string(kOneParam) +
                           "fn step(mut m: M, mut opt: SGD[M], x: [b D]):\n";
  auto c = check_text(head +
                          "    let v, g = value_and_grad(l, m, x, "
                          "scaler=opt)\n"
                          "    update(m, opt, g)\n",
                      "");
  comms::DeviceTable t = comms::build_table(*c->prog, c->sm);
  const comms::LineSends& l = line_with(t, "scaler=opt");
  REQUIRE(l.collectives.size() == 1);
  CHECK(l.collectives[0].op == "all-reduce");
  CHECK(l.collectives[0].count.value() == 1);
  CHECK(l.collectives[0].dtype == "f64");
  CHECK(l.collectives[0].text ==
        "all-reduce of whether any device's pieces of the gradients are inf "
        "or nan, one number: 1 × f64 = 8 bytes");
  auto plain = check_text(
      head + "    let v, g = value_and_grad(l, m, x)\n    update(m, opt, g)\n",
      "");
  comms::DeviceTable tp = comms::build_table(*plain->prog, plain->sm);
  CHECK(line_with(tp, "value_and_grad(").collectives.empty());
}

// Each rank's payload log of one train_step with its pieces, in order: the
// all-gather of w1 and w2's bucket (the forward pass's first read), cross_
// entropy's sum and count, then the backward pass's one reduce-scatter of
// the bucket's gradients, and no gradient all-reduce. Each is the table's
// figure, and together the value_and_grad line's.
TEST_CASE("explain shard params: a run's payloads are the table's figures",
          "[explain]") {
  auto c = check_readme("cpu[0 1 2]", true);
  comms::DeviceTable t = comms::build_table(*c->prog, c->sm);
  const comms::LineSends& f = line_with(t, "relu(x @ m.w1) @ m.w2");
  const comms::LineSends& vg = line_with(t, "value_and_grad(");
  StepPayloads p = readme_step_payloads(*c, true);
  using Op = ss::dist::CollectiveOp;
  for (int r = 0; r < StepPayloads::kWorld; ++r) {
    INFO("rank " << r << ": " << p.errors[r]);
    REQUIRE(p.errors[r].empty());
    const auto& log = p.logs[r];
    REQUIRE(log.size() == 3);
    CHECK(log[0].op == Op::AllGather);
    CHECK(log[0].bytes == uint64_t(f.collectives[0].bytes.value()));
    CHECK(log[1].op == Op::AllReduce);
    CHECK(log[1].bytes == 8);
    CHECK(log[2].op == Op::ReduceScatter);
    CHECK(log[2].bytes == uint64_t(f.collectives[1].bytes.value()));
    uint64_t sum = 0;
    for (const auto& rec : log) {
      CHECK(rec.dtype == ss::types::DType::F32);
      sum += rec.bytes;
    }
    // cross_entropy's backward sends nothing (replicated cotangent) but
    // counts by devices.md's convention: 8 more bytes than the log.
    CHECK(sum + 8 == uint64_t(vg.total.value()));
  }
}

TEST_CASE("explain shard params: a builtin given a model gathers its params",
          "[explain]") {
  auto c = check_text(
      "devices cpu[0 1]\n"
      "    shard params\n"
      "\n"
      "dim D = 3\n"
      "dim H = 5\n"
      "\n"
      "model M:\n"
      "    l: Linear[D H]\n"
      "\n"
      "fn f(m: M, x: [b D]) -> f32:\n"
      "    return sum(linear(m.l, x))\n",
      "");
  comms::DeviceTable t = comms::build_table(*c->prog, c->sm);
  const comms::LineSends& l = line_with(t, "linear(m.l, x)");
  REQUIRE(l.collectives.size() >= 2);
  // w's 15 values in pieces of 8 (the last padded by one), b's 5 in 3.
  CHECK(l.collectives[0].text ==
        "all-gather of `m.l`'s params `w` and `b`, from every device's "
        "piece: 11 × f32 = 44 bytes");
  CHECK(l.collectives[1].count.value() == 22);
  CHECK(l.collectives[1].backward);
}

// The bucket rule by hand (Note [Param buckets]): a, b and c are [600 600]
// f32, 1,440,000 bytes each, over the 1 MiB bucket: three buckets of one,
// gathered and reduce-scattered one by one (120,000-value pieces on
// three). s and t (5 values each) are one bucket: read on two lines,
// gathered on each, its gradients reduce-scattered once (on the first).
TEST_CASE("explain shard params: one collective for each bucket of params",
          "[explain]") {
  auto c = check_text(
      "devices cpu[0 1 2]\n"
      "    shard params\n"
      "\n"
      "dim N = 600\n"
      "dim D = 5\n"
      "\n"
      "model Big:\n"
      "    a: [N N] = zeros()\n"
      "    b: [N N] = zeros()\n"
      "    c: [N N] = zeros()\n"
      "    s: [D] = zeros()\n"
      "    t: [D] = zeros()\n"
      "\n"
      "fn l(m: Big, x: [b N], y: [b D]) -> f32:\n"
      "    let h = tanh(tanh(x @ m.a) @ m.b) @ m.c\n"
      "    let u = sum(y * m.s)\n"
      "    return mean(h) + u + sum(y * m.t)\n"
      "\n"
      "fn step(mut m: Big, mut opt: SGD[Big], x: [b N], y: [b D]) -> f32:\n"
      "    let v, g = value_and_grad(l, m, x, y)\n"
      "    update(m, opt, g)\n"
      "    return v\n",
      "");
  comms::DeviceTable t = comms::build_table(*c->prog, c->sm);
  const comms::LineSends& big = line_with(t, "tanh(tanh(x @ m.a)");
  REQUIRE(big.collectives.size() == 6);
  const char* names[] = {"`a`", "`b`", "`c`"};
  for (int i = 0; i < 3; ++i) {
    const comms::Collective& g = big.collectives[2 * i];
    const comms::Collective& r = big.collectives[2 * i + 1];
    CHECK(g.op == "all-gather");
    CHECK(g.count.value() == 120000);
    CHECK(g.text.find(std::string("param ") + names[i] + ",") !=
          std::string::npos);
    CHECK(r.op == "reduce-scatter");
    CHECK(r.count.value() == 360000);
  }
  // s and t: pieces of 2 values each, 4 in the bucket, 12 padded.
  const comms::LineSends& first = line_with(t, "sum(y * m.s)");
  REQUIRE(first.collectives.size() == 2);
  CHECK(first.collectives[0].count.value() == 4);
  CHECK(first.collectives[0].text.find("params `s` and `t`") !=
        std::string::npos);
  CHECK(first.collectives[1].count.value() == 12);
  const comms::LineSends& second = line_with(t, "sum(y * m.t)");
  REQUIRE(second.collectives.size() == 1);
  CHECK(second.collectives[0].op == "all-gather");
  CHECK(second.collectives[0].count.value() == 4);
}

namespace {

// Two params of a bucket each (600 · 600 f32 is over 1 MiB), read as the
// runtime's edge cases do: a, b, then a again on one line; `m.a @ m.b`,
// whose a a later gather let go before the product uses it; and a read in
// a callee too, which names the model `q`.
constexpr const char* kRereads = R"(devices cpu[0 1 2]
    shard params

dim N = 600

model Big:
    a: [N N] = normal(std=0.01)
    b: [N N] = normal(std=0.01)

fn inner(q: Big, x: [b N]) -> f32:
    return mean(x @ q.a)

fn l(m: Big, x: [b N]) -> f32:
    let h = tanh(x @ m.a) @ m.b + x @ m.a
    let p = m.a @ m.b
    return mean(h) + mean(p) + inner(m, x)

fn step(mut m: Big, mut opt: SGD[Big], x: [b N]) -> f32:
    let v, g = value_and_grad(l, m, x)
    update(m, opt, g)
    return v
)";

// Each piece: 600 · 600 / 3 = 120,000 f32; a reduce-scatter hands the
// whole 360,000.
constexpr uint64_t kPiece = 120000 * 4, kWhole = 360000 * 4;

}  // namespace

TEST_CASE("explain shard params: reads again, operands let go, callees",
          "[explain]") {
  auto c = check_text(kRereads, "");
  comms::DeviceTable t = comms::build_table(*c->prog, c->sm);
  auto gathers = [](const comms::LineSends& l) {
    int n = 0;
    for (const comms::Collective& k : l.collectives)
      n += k.op == "all-gather" && k.bytes.value() == int64_t(kPiece);
    return n;
  };
  // a, b, a: the third read's bucket is not the one held.
  CHECK(gathers(line_with(t, "let h = tanh(")) == 3);
  // a, b, then, under value_and_grad, a again for the product.
  const comms::LineSends& ab = line_with(t, "let p = m.a @ m.b");
  CHECK(gathers(ab) == 3);
  CHECK(ab.collectives.back().backward);
  CHECK(ab.collectives.back().text.rfind("under value_and_grad: all-gather",
                                         0) == 0);
  CHECK(ab.total.value() == int64_t(2 * kPiece));
  CHECK(fn_entry(t, "l").bytes_per_call->value() == int64_t(6 * kPiece));
  CHECK(gathers(line_with(t, "mean(x @ q.a)")) == 1);
  // The value_and_grad line: a's and b's gradients reduce-scattered once
  // each, though l reads a on two lines and inner once more (its `q.a`'s
  // bucket is l's `m.a`'s).
  const comms::LineSends& vg = line_with(t, "value_and_grad(");
  REQUIRE(vg.calls.size() == 1);
  CHECK(vg.calls[0].bytes.value() == int64_t(7 * kPiece + 2 * kWhole));

  // A run on three thread ranks: l's forward pass alone, then a step.
  constexpr int kWorld = 3, kB = 4;
  std::vector<double> xs(kB * 600);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = double(i % 11) / 11 - 0.5;
  for (const char* fn : {"l", "step"}) {
    INFO(fn);
    auto p = on_ranks<kWorld>(
        *c,
        [](ss::devices::lower::DeviceContext&) {},
        [&](int r, ss::eval::Interpreter& in, const auto& clear) {
          ss::types::Type mt =
              ss::types::Type::of(ss::types::Type::Kind::Model);
          mt.model = c->prog->model("Big");
          ss::eval::Value m = ss::builtins::init_model(in, mt, 0, {});
          ss::devices::lower::shard_store(
              *m.as<ss::eval::ModelRef>()->store, r, kWorld);
          auto x = ss::eval::Value::tensor(ss::ops::Tensor::from_doubles(
              {kB, 600}, xs, ss::types::DType::F32));
          std::vector<ss::eval::Value> args = {m, x};
          if (std::string(fn) == "step") {
            auto opt = std::make_shared<ss::eval::OptimState>();
            opt->kind = ss::types::OptimKind::SGD;
            opt->model = m.as<ss::eval::ModelRef>()->store;
            args.insert(
                args.begin() + 1,
                ss::eval::Value::object(ss::eval::Value::Kind::Optim, opt));
          }
          clear();
          in.call(*c->prog->fn(fn), args, {});
        });
    using Op = ss::dist::CollectiveOp;
    for (int r = 0; r < kWorld; ++r) {
      INFO("rank " << r << ": " << p.errors[r]);
      REQUIRE(p.errors[r].empty());
      int gathered = 0, scattered = 0;
      for (const auto& k : p.logs[r]) {
        gathered += k.op == Op::AllGather && k.bytes == kPiece;
        scattered += k.op == Op::ReduceScatter && k.bytes == kWhole;
      }
      if (std::string(fn) == "l") {
        // Not differentiated: the table's 3 + 2 + 1 all-gathers, nothing
        // else.
        CHECK(gathered == 6);
        CHECK(p.logs[r].size() == 6);
      } else {
        // The forward pass's 7 all-gathers come first; then the backward
        // pass gathers copies again (not in the table) and reduce-scatters
        // a's and b's gradients once each.
        REQUIRE(p.logs[r].size() >= 9);
        for (int k = 0; k < 7; ++k) {
          CHECK(p.logs[r][k].op == Op::AllGather);
          CHECK(p.logs[r][k].bytes == kPiece);
        }
        CHECK(scattered == 2);
      }
    }
  }
}
