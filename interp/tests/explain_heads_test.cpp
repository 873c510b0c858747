// `ss explain` with `split H` (devices.md items 9 and 10, spec/README.md's
// attention example): the layouts in the seed's words, the figures of the
// `@ m.w_o` line and of the cut's backward all-reduce, counted by hand
// below, and the payloads a real step hands its collectives (three thread
// ranks, each holding its heads), which must be the table's figures.
#include <catch2/catch.hpp>

#include "interp/builtins/models.h"
#include "interp/devices/lower/heads.h"
#include "interp/tests/explain_test_util.h"

namespace {

namespace comms = ss::check::comms;
using namespace explain_test;

// The attention example (examples/attention.ss) with a loss and a step,
// for the differentiated counts and a run.
std::string attention_program() {
  std::ifstream f(std::string(SS_SOURCE_DIR) + "/examples/attention.ss");
  std::stringstream text;
  text << f.rdbuf();
  return text.str() + R"(
fn loss(m: Attention, x: [b n D], y: [b n D]) -> f32:
    return mse(attention(m, x), y)

fn step(mut m: Attention, mut opt: SGD[Attention], x: [b n D],
        y: [b n D]) -> f32:
    let l, g = value_and_grad(loss, m, x, y)
    update(m, opt, g)
    return l
)";
}

// D = 768, H = 12, Dh = 64, all f32. The `@ m.w_o` line's partial products
// are [b n D]: 4·768 = 3,072 bytes per b·n. The cut's cotangents are q, k
// and v, [b H n Dh] each: 3 · 4 · 12 · 64 = 9,216 bytes per b·n.
constexpr int64_t kWoBytes = 4 * 768, kCutBytes = 3 * 4 * 12 * 64;

int64_t per_bn(const comms::Size& s) {
  REQUIRE(s.terms.size() == 1);
  REQUIRE(s.terms.begin()->first == std::vector<std::string>{"b", "n"});
  return s.terms.begin()->second;
}

// `split H` over dim H of [size] heads, for on_ranks' setup.
auto split_h(int64_t size) {
  return [size](ss::devices::lower::DeviceContext& d) {
    d.split_dim = "H";
    d.split_size = size;
  };
}

// Model [name] made on rank [r] of [world] and cut to its heads, as a
// worker cuts a model that arrives.
ss::eval::Value heads_model(const Checked& c,
                            const char* name,
                            ss::eval::Interpreter& in,
                            int r,
                            int world) {
  ss::types::Type mt = ss::types::Type::of(ss::types::Type::Kind::Model);
  mt.model = c.prog->model(name);
  ss::eval::Value m = ss::builtins::init_model(in, mt, 0, {});
  ss::devices::lower::cut_store_heads(
      *m.as<ss::eval::ModelRef>()->store, "H", r, world);
  return m;
}

// Each rank's collectives in one `step` of the attention program on a
// [b n D] batch, three thread ranks holding their heads of w_o (with
// [shard], pieces of w_qkv too), as a worker cuts a model that arrives.
RankPayloads<3> attention_step(const Checked& c, int b, int n, bool shard) {
  constexpr int kWorld = 3;
  std::vector<double> xs(b * n * 768), ys(b * n * 768, 0.25);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = double(i % 7) / 7;
  return on_ranks<kWorld>(
      c, split_h(12), [&](int r, ss::eval::Interpreter& in, const auto& clear) {
        ss::eval::Value m = heads_model(c, "Attention", in, r, kWorld);
        auto& store = *m.as<ss::eval::ModelRef>()->store;
        if (shard) ss::devices::lower::shard_store(store, r, kWorld);
        auto opt = std::make_shared<ss::eval::OptimState>();
        opt->kind = ss::types::OptimKind::SGD;
        opt->model = m.as<ss::eval::ModelRef>()->store;
        ss::eval::Value ov =
            ss::eval::Value::object(ss::eval::Value::Kind::Optim, opt);
        auto x = ss::eval::Value::tensor(ss::ops::Tensor::from_doubles(
            {b, n, 768}, xs, ss::types::DType::F32));
        auto y = ss::eval::Value::tensor(ss::ops::Tensor::from_doubles(
            {b, n, 768}, ys, ss::types::DType::F32));
        clear();
        in.call(*c.prog->fn("step"), {m, ov, x, y}, {});
      });
}

}  // namespace

TEST_CASE("explain split H: q, k, v, s, p and o hold 4 of H = 12",
          "[explain]") {
  auto c = check_text(attention_program(), "cpu[0 1 2]");
  comms::DeviceTable t = comms::build_table(*c->prog, c->sm);
  CHECK(t.notes.empty());          // laid out, not "not in this build"
  CHECK(t.example_split.empty());  // batches are whole
  for (const char* v : {"q", "k", "v", "s", "p", "o"}) {
    INFO(v);
    CHECK(value(t, "attention", v).text ==
          "split along H: each device holds 4 of H = 12");
  }
  // The spec's attention runs as one kernel (Note [The attention written
  // out] in interp/check/fusion.cpp): s and p say so on a line of their
  // own, the others do not.
  for (const char* v : {"s", "p"})
    CHECK(value(t, "attention", v)
              .fused.find("run as one scaled_dot_product_attention(q, k, v, "
                          "causal=true)") != std::string::npos);
  for (const char* v : {"q", "k", "v", "o"})
    CHECK(value(t, "attention", v).fused.empty());
  CHECK(value(t, "attention", "x").text == "whole on every device");
  // w_qkv whole (768 · 2,304 · 4 bytes), a third of w_o's rows (768 · 768
  // · 4 / 3).
  const comms::ValueLayout& m = value(t, "attention", "m");
  CHECK(m.model_bytes == 768 * 2304 * 4 + 768 * 768 * 4 / 3);
  CHECK(m.text ==
        "split along H: each device holds 4 of H = 12 heads of `w_o`, and a "
        "copy of the others: 7,864,320 bytes (7,680 KiB) each");
  auto c2 = check_text(attention_program(), "cpu[0 1]");
  CHECK(value(comms::build_table(*c2->prog, c2->sm), "attention", "q").text ==
        "split along H: each device holds 6 of H = 12");
  CHECK(comms::render_report(t).find(
            "cpu[0 1 2] (3 devices), tensor parallel over H") !=
        std::string::npos);
}

TEST_CASE("explain split H: the w_o line all-reduces 4·D·b·n bytes",
          "[explain]") {
  auto c = check_text(attention_program(), "cpu[0 1 2]");
  comms::DeviceTable t = comms::build_table(*c->prog, c->sm);
  const comms::LineSends& wo = line_with(t, "@ m.w_o");
  REQUIRE(wo.collectives.size() == 1);
  CHECK(wo.collectives[0].op == "all-reduce");
  CHECK_FALSE(wo.collectives[0].backward);
  CHECK(per_bn(wo.collectives[0].bytes) == kWoBytes);
  CHECK(wo.collectives[0].text.find("4·D·b·n = 3,072·b·n bytes") !=
        std::string::npos);
  // The split line sends nothing forward; backward, the cut's all-reduce.
  const comms::LineSends& cut = line_with(t, "split(x @ m.w_qkv");
  REQUIRE(cut.collectives.size() == 1);
  CHECK(cut.collectives[0].backward);
  CHECK(cut.collectives[0].text.rfind("in the backward pass: all-reduce", 0) ==
        0);
  CHECK(per_bn(cut.collectives[0].bytes) == kCutBytes);
  CHECK(cut.total.zero());
  // Its block ends with where its bytes go, not "In all: 0 bytes.": the
  // whole [b n (3 H Dh)] f32 cotangent, 4·3·12·64 = 9,216 bytes per b·n.
  CHECK(cut.text.find("\nIn all: nothing in the forward pass, 9,216·b·n "
                      "bytes in the backward pass.\n") != std::string::npos);
  // No other line of attention sends: the scores, mask, softmax and the
  // second einsum are per head; rearrange keeps H leading.
  for (const comms::LineSends& l : t.lines)
    if (l.fn == "attention") CHECK((l.line == wo.line || l.line == cut.line));
  CHECK(per_bn(*fn_entry(t, "attention").bytes_per_call) == kWoBytes);
  // Differentiated: the float all-reduce counts twice (the convention of
  // devices.md item 10, though its backward passes the cotangent on), the
  // cut's backward once; no gradient all-reduce (whole params' are one
  // device's, w_o's rows each device's own).
  const comms::LineSends& vg = line_with(t, "value_and_grad(");
  CHECK(vg.collectives.empty());
  REQUIRE(vg.calls.size() == 1);
  CHECK(per_bn(vg.calls[0].bytes) == 2 * kWoBytes + kCutBytes);
}

TEST_CASE("explain split H: a run's payloads are the table's figures",
          "[explain]") {
  auto c = check_text(attention_program(), "cpu[0 1 2]");
  constexpr int kWorld = 3, kB = 2, kN = 5;
  auto p = attention_step(*c, kB, kN, false);
  using Op = ss::dist::CollectiveOp;
  for (int r = 0; r < kWorld; ++r) {
    INFO("rank " << r << ": " << p.errors[r]);
    REQUIRE(p.errors[r].empty());
    // Forward: the w_o line's all-reduce. Backward: the cut's three
    // all-reduces (q, k, v), a third of the table's figure each. Nothing
    // else: no gradient all-reduce, no lowered mse.
    const auto& log = p.logs[r];
    REQUIRE(log.size() == 4);
    CHECK(log[0].op == Op::AllReduce);
    CHECK(log[0].bytes == uint64_t(kWoBytes * kB * kN));
    for (int k = 1; k < 4; ++k) {
      CHECK(log[k].op == Op::AllReduce);
      CHECK(log[k].bytes == uint64_t(kCutBytes / 3 * kB * kN));
    }
  }
}

TEST_CASE("explain split H with shard params: the other params are pieces",
          "[explain]") {
  std::string src = attention_program();
  src.insert(src.find("    split H\n"), "    shard params\n");
  auto c = check_text(src, "cpu[0 1 2]");
  comms::DeviceTable t = comms::build_table(*c->prog, c->sm);
  // w_qkv's 768 · 2,304 = 1,769,472 values cut in three pieces of 589,824
  // (no padding); w_o's rows a third each: 768 · 768 / 3 = 196,608.
  constexpr int64_t kQkvPiece = 589824, kWoRows = 196608;
  const comms::ValueLayout& m = value(t, "attention", "m");
  CHECK(m.model_bytes == 4 * (kQkvPiece + kWoRows));
  CHECK(m.text ==
        "split along H: each device holds 4 of H = 12 heads of `w_o`, and a "
        "piece of every other param: 3,145,728 bytes (3,072 KiB) each");
  // The split line gathers w_qkv; every device has the whole batch, so its
  // gradient is whole on each and nothing is reduce-scattered.
  const comms::LineSends& cut = line_with(t, "split(x @ m.w_qkv");
  REQUIRE(cut.collectives.size() == 2);
  CHECK(cut.collectives[0].op == "all-gather");
  CHECK(cut.collectives[0].bytes.value() == 4 * kQkvPiece);
  CHECK(cut.collectives[1].backward);
  CHECK(cut.collectives[1].op == "all-reduce");
  // w_o is read as its rows: no gather on its line.
  REQUIRE(line_with(t, "@ m.w_o").collectives.size() == 1);

  constexpr int kWorld = 3, kB = 1, kN = 4;
  auto p = attention_step(*c, kB, kN, true);
  using Op = ss::dist::CollectiveOp;
  for (int r = 0; r < kWorld; ++r) {
    INFO("rank " << r << ": " << p.errors[r]);
    REQUIRE(p.errors[r].empty());
    // Forward: w_qkv's gather, the w_o line's all-reduce; backward: the
    // cut's three all-reduces, and no reduce-scatter.
    const auto& log = p.logs[r];
    REQUIRE(log.size() == 5);
    CHECK(log[0].op == Op::AllGather);
    CHECK(log[0].bytes == uint64_t(4 * kQkvPiece));
    CHECK(log[1].op == Op::AllReduce);
    CHECK(log[1].bytes == uint64_t(kWoBytes * kB * kN));
    for (int k = 2; k < 5; ++k) {
      CHECK(log[k].op == Op::AllReduce);
      CHECK(log[k].bytes == uint64_t(kCutBytes / 3 * kB * kN));
    }
  }
}

namespace {

// Column- and row-parallel layers under `split H` (D = 16, H = 6, Dh = 4,
// all f32): `h @ m.w_q` with w_q: [D (H Dh)] split by columns, and
// linear(m.up, h) with up: Linear[D (H Dh)], then linear(m.down, ...)
// with down: Linear[(H Dh) D], split by rows (Note [An op in parts under
// split H]).
constexpr const char* kParallelLayers = R"(devices cpu
    split H

dim D = 16
dim H = 6
dim Dh = 4

model Layers:
    w_in: [D D] = normal(std=0.2)
    w_q: [D (H Dh)] = normal(std=0.2)
    up: Linear[D (H Dh)]
    down: Linear[(H Dh) D]

fn loss(m: Layers, x: [b D]) -> f32:
    let h = tanh(x @ m.w_in)
    let q = tanh(h @ m.w_q)
    let o = linear(m.down, tanh(linear(m.up, h)) * q)
    return mean(o * o)

fn step(mut m: Layers, mut opt: SGD[Layers], x: [b D]) -> f32:
    let l, g = value_and_grad(loss, m, x)
    update(m, opt, g)
    return l
)";

}  // namespace

TEST_CASE("explain split H: column- and row-parallel layers, as run",
          "[explain]") {
  auto c = check_text(kParallelLayers, "cpu[0 1 2]");
  comms::DeviceTable t = comms::build_table(*c->prog, c->sm);
  // h's cotangent from each device's columns (4·D = 64 bytes per b), in
  // the backward pass only; no gather of w_q.
  const comms::LineSends& q = line_with(t, "h @ m.w_q");
  REQUIRE(q.collectives.size() == 1);
  CHECK(q.collectives[0].backward);
  CHECK(q.collectives[0].op == "all-reduce");
  CHECK(q.collectives[0].text.find("4·D·b = 64·b bytes") != std::string::npos);
  // The linear line: up's input h tied (backward, 64 per b); down's
  // partial products all-reduced ([b D]: 64 per b); nothing gathered.
  const comms::LineSends& l = line_with(t, "linear(m.down");
  REQUIRE(l.collectives.size() == 2);
  int backward = 0;
  for (const comms::Collective& k : l.collectives) {
    CHECK(k.op == "all-reduce");
    CHECK(k.text.find("4·D·b = 64·b bytes") != std::string::npos);
    backward += k.backward;
  }
  CHECK(backward == 1);
  // Differentiated: 64·b forward, counted twice (the convention), and
  // 2 × 64·b backward.
  const comms::LineSends& vg = line_with(t, "value_and_grad(");
  REQUIRE(vg.calls.size() == 1);
  REQUIRE(vg.calls[0].bytes.terms.size() == 1);
  CHECK(vg.calls[0].bytes.terms.begin()->second == 4 * 64);

  // A run: each rank holds its heads of w_q, up.w, up.b and down.w.
  constexpr int kWorld = 3, kB = 5;
  std::vector<double> xs(kB * 16);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = double(i % 7) / 7 - 0.4;
  auto p = on_ranks<kWorld>(
      *c, split_h(6), [&](int r, ss::eval::Interpreter& in, const auto& clear) {
        ss::eval::Value m = heads_model(*c, "Layers", in, r, kWorld);
        CHECK(m.as<ss::eval::ModelRef>()->store->heads.size() == 4);
        auto opt = std::make_shared<ss::eval::OptimState>();
        opt->kind = ss::types::OptimKind::SGD;
        opt->model = m.as<ss::eval::ModelRef>()->store;
        ss::eval::Value ov =
            ss::eval::Value::object(ss::eval::Value::Kind::Optim, opt);
        auto x = ss::eval::Value::tensor(
            ss::ops::Tensor::from_doubles({kB, 16}, xs, ss::types::DType::F32));
        clear();
        in.call(*c->prog->fn("step"), {m, ov, x}, {});
      });
  using Op = ss::dist::CollectiveOp;
  for (int r = 0; r < kWorld; ++r) {
    INFO("rank " << r << ": " << p.errors[r]);
    REQUIRE(p.errors[r].empty());
    // Forward: down's partial sum; backward: the ties of h (into up and
    // into w_q). Each [b D] f32: 64 · 5 bytes. No all-gather.
    const auto& log = p.logs[r];
    REQUIRE(log.size() == 3);
    for (const auto& k : log) {
      CHECK(k.op == Op::AllReduce);
      CHECK(k.bytes == uint64_t(64 * kB));
    }
  }
}

TEST_CASE("explain split H: fns typed by size variables, as run", "[explain]") {
  // conformance/dist/split_heads_size_vars.ss: fns that name the heads
  // axis `h`, `g` or a group `m` (Note [Size variables carry the split]).
  std::ifstream f(std::string(SS_SOURCE_DIR) +
                  "/conformance/dist/split_heads_size_vars.ss");
  std::stringstream text;
  text << f.rdbuf();
  auto c = check_text(text.str(), "cpu[0 1]");
  comms::DeviceTable t = comms::build_table(*c->prog, c->sm);
  // D = 18, H = 6, Dh = 3, f32. `attend`'s q is split by heads as the
  // caller's [b H n Dh]; `total`'s g is (3 H Dh), H after 3: whole.
  CHECK(value(t, "attend", "q").kind == comms::ValueLayout::Kind::Split);
  CHECK(value(t, "total", "t").kind == comms::ValueLayout::Kind::Whole);
  // `pooled` sums o over h: each device's partial [b n d] all-reduced
  // (4·d per b·n), and its call of mixed_heads gathers twice (softmax
  // over g, then mean over g of the cut result), each device handing its
  // own heads: 2 · 4·(H/2)·d per b·n.
  const comms::LineSends& pooled = line_with(t, "mixed_heads(o) * sum(o");
  REQUIRE(pooled.collectives.size() == 1);
  CHECK(pooled.collectives[0].op == "all-reduce");
  // What loss sends per call, the caller's sizes put in (d = Dh = 3,
  // e = D = 18): mix's partial [b n D] (72), pooled's 4·Dh + 2·4·3·Dh
  // (12 + 72), and the sum(o) partial (4 bytes).
  const comms::FnEntry& loss = fn_entry(t, "loss");
  REQUIRE(loss.bytes_per_call);
  CHECK(loss.bytes_per_call->str() == "156·b·n + 4");

  // A run of loss on two thread ranks hands its collectives just that.
  constexpr int kWorld = 2, kB = 2, kN = 3;
  std::vector<double> xs(kB * kN * 18);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = double(i % 5) / 5 - 0.4;
  auto p = on_ranks<kWorld>(
      *c, split_h(6), [&](int r, ss::eval::Interpreter& in, const auto& clear) {
        ss::eval::Value m = heads_model(*c, "HeadMixer", in, r, kWorld);
        auto x = ss::eval::Value::tensor(ss::ops::Tensor::from_doubles(
            {kB, kN, 18}, xs, ss::types::DType::F32));
        clear();
        in.call(*c->prog->fn("loss"), {m, x}, {});
      });
  for (int r = 0; r < kWorld; ++r) {
    INFO("rank " << r << ": " << p.errors[r]);
    REQUIRE(p.errors[r].empty());
    uint64_t sent = 0;
    for (const auto& k : p.logs[r]) sent += k.bytes;
    CHECK(sent == uint64_t(156 * kB * kN + 4));
  }
}
