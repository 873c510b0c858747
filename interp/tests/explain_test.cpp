// `ss explain` (devices.md, "The `ss explain` report" and item 10): the
// DeviceTable of the README example matches the seed's hover word for word,
// and the payloads a real run hands to its collectives add up to the
// table's figures.
#include "interp/check/plan/explain.h"

#include <catch2/catch.hpp>
#include <cstdio>

#include "interp/tests/explain_test_util.h"

namespace {

namespace comms = ss::check::comms;
using ss::check::FnInfo;
using namespace explain_test;

// The seed's hover for the README's value_and_grad line on three devices.
const char* kValueAndGradHover =
    "Sent between the 3 devices on this line, per call:\n"
    "\n"
    "- all-reduce of the gradients of `Mlp`'s params `w1` and `w2`, which "
    "adds up every device's\n"
    "  part of the batch: 203,264 × f32 = 813,056 bytes (794 KiB)\n"
    "- inside `loss`: 16 bytes per call\n"
    "\n"
    "In all: 813,072 bytes (794 KiB).\n";

}  // namespace

TEST_CASE("explain: the README's value_and_grad line, word for word",
          "[explain]") {
  auto c = check_readme("cpu[0 1 2]");
  comms::DeviceTable t = comms::build_table(*c->prog, c->sm);
  CHECK(t.count == 3);
  const comms::LineSends& vg = line_with(t, "value_and_grad(loss, m, batch)");
  CHECK(vg.fn == "train_step");
  CHECK(vg.text == kValueAndGradHover);
  REQUIRE(vg.total.known());
  CHECK(vg.total.value() == 813072);
  REQUIRE(vg.collectives.size() == 1);
  CHECK(vg.collectives[0].count.value() == 203264);
  CHECK(vg.collectives[0].dtype == "f32");
  CHECK(vg.collectives[0].bytes.value() == 813056);
  REQUIRE(vg.calls.size() == 1);
  CHECK(vg.calls[0].fn == "loss");
  CHECK(vg.calls[0].differentiated);
  CHECK(vg.calls[0].bytes.value() == 16);
  // The report prints the same block.
  CHECK(comms::render_report(t).find(kValueAndGradHover) != std::string::npos);
}

TEST_CASE("explain: the loss fn's cross_entropy sends 8 bytes per call",
          "[explain]") {
  auto c = check_readme("cpu[0 1 2]");
  comms::DeviceTable t = comms::build_table(*c->prog, c->sm);
  const comms::LineSends& ce =
      line_with(t, "return cross_entropy(forward(m, batch.img)");
  CHECK(ce.fn == "loss");
  REQUIRE(ce.collectives.size() == 1);
  CHECK(ce.calls.empty());  // forward sends nothing
  CHECK(ce.collectives[0].op == "all-reduce");
  CHECK(ce.collectives[0].source == "cross_entropy");
  CHECK(ce.collectives[0].count.value() == 2);
  CHECK(ce.collectives[0].bytes.value() == 8);
  CHECK(ce.total.value() == 8);
  CHECK(ce.text ==
        "Sent between the 3 devices on this line, per call:\n\n"
        "- all-reduce of `cross_entropy`'s sum and count, which adds up every "
        "device's part of the\n"
        "  batch: 2 × f32 = 8 bytes\n\n"
        "In all: 8 bytes.\n");
  // Per fn, calls included.
  CHECK(fn_entry(t, "forward").bytes_per_call->zero());
  CHECK(fn_entry(t, "loss").bytes_per_call->value() == 8);
  CHECK(fn_entry(t, "train_step").bytes_per_call->value() == 813072);
  // evaluate: cross_entropy's sum and count, and mean's (a bool's mean is
  // f32): 8 + 8.
  CHECK(fn_entry(t, "evaluate").bytes_per_call->value() == 16);
  CHECK(line_with(t, "acc=mean(").collectives.at(0).source == "mean");
  // The training loop's call of train_step.
  const comms::LineSends& run = line_with(t, "train_step(m, opt, batch)");
  CHECK(run.fn == "run");
  CHECK(run.total.value() == 813072);
  CHECK(run.calls.at(0).text ==
        "inside `train_step`: 813,072 bytes (794 KiB) per call");
}

TEST_CASE("explain: placement and layouts of the README example", "[explain]") {
  auto c = check_readme("cpu[0 1 2]");
  comms::DeviceTable t = comms::build_table(*c->prog, c->sm);
  for (const char* w : {"forward", "loss", "train_step", "evaluate"})
    CHECK(fn_entry(t, w).placement == FnInfo::Placement::Workers);
  for (const char* w : {"run", "main"}) {
    CHECK(fn_entry(t, w).placement == FnInfo::Placement::Controller);
    CHECK_FALSE(fn_entry(t, w).bytes_per_call);
  }
  CHECK(fn_entry(t, "run").text.find("in the controller: it loops over a "
                                     "dataset") != std::string::npos);
  REQUIRE(t.example_batch);
  CHECK(*t.example_batch == 64);
  CHECK(t.example_split == std::vector<int64_t>{22, 21, 21});
  const std::string split =
      "split across the 3 devices along b, each holding its share of the "
      "batch (22/21/21 for a batch of 64)";
  CHECK(value(t, "train_step", "batch").text == split);
  CHECK(value(t, "loss", "batch").text == split);
  CHECK(value(t, "forward", "x").text == split);  // split follows the data
  CHECK(value(t, "evaluate", "logits").text == split);
  CHECK(value(t, "forward", "m").text ==
        "a copy on every device: 813,056 bytes (794 KiB) of params and "
        "buffers each");
  CHECK(value(t, "forward", "m").model_bytes == 813056);
  CHECK(value(t, "train_step", "l").text == "whole on every device");
  CHECK(value(t, "train_step", "g").text == "whole on every device");
  CHECK(value(t, "main", "m").text == "in the controller");
  CHECK(value(t, "run", "batch").kind == comms::ValueLayout::Kind::Controller);
  CHECK(t.notes.empty());
}

TEST_CASE("explain: two devices split 64 as 32/32", "[explain]") {
  auto c = check_readme("cpu[0 1]");
  comms::DeviceTable t = comms::build_table(*c->prog, c->sm);
  CHECK(t.example_split == std::vector<int64_t>{32, 32});
  CHECK(value(t, "train_step", "batch").text ==
        "split across the 2 devices along b, each holding its share of the "
        "batch (32/32 for a batch of 64)");
  // The bytes don't depend on the number of devices.
  const comms::LineSends& vg = line_with(t, "value_and_grad(");
  CHECK(vg.total.value() == 813072);
  CHECK(vg.text.rfind("Sent between the 2 devices on this line, per call:",
                      0) == 0);
}

TEST_CASE("explain: one device sends nothing", "[explain]") {
  auto c = check_readme("cpu");
  comms::DeviceTable t = comms::build_table(*c->prog, c->sm);
  CHECK(t.count == 1);
  CHECK(t.lines.empty());
  CHECK(fn_entry(t, "train_step").placement == FnInfo::Placement::Workers);
  CHECK(fn_entry(t, "main").placement == FnInfo::Placement::Controller);
  for (const comms::ValueLayout& v : t.values)
    CHECK(v.text == "whole on the one device");
}

TEST_CASE("explain: symbolic sizes, dims put in", "[explain]") {
  auto c = check_text(
      "dim D = 4\n"
      "\n"
      "data Ex:\n"
      "    x: [D]\n"
      "\n"
      "fn stats(batch: [b] Ex, w: [D n]) -> [n]:\n"
      "    return sum(batch.x @ w, over=b)\n"
      "\n"
      "fn centre(batch: [b] Ex) -> [D]:\n"
      "    return mean(batch.x, over=b)\n",
      "cpu[0 1 2]");
  comms::DeviceTable t = comms::build_table(*c->prog, c->sm);
  const comms::LineSends& s = line_with(t, "sum(batch.x @ w");
  REQUIRE(s.collectives.size() == 1);
  CHECK_FALSE(s.total.known());
  CHECK(s.collectives[0].count.str() == "n");
  CHECK(s.collectives[0].text.find(": n × f32 = 4·n bytes") !=
        std::string::npos);
  CHECK(s.text.find("In all: 4·n bytes.") != std::string::npos);
  // mean of [D]: its 4 values and a count.
  const comms::LineSends& m = line_with(t, "mean(batch.x");
  CHECK(m.total.value() == 20);
  CHECK(m.collectives.at(0).text.find("5 × f32 = 20 bytes") !=
        std::string::npos);
  CHECK(!t.example_batch);  // no batches(n) in the file
  CHECK(value(t, "stats", "batch").text ==
        "split across the 3 devices along b, each holding its share of the "
        "batch");
}

TEST_CASE("explain: batch_norm sends 2·C + 1 values in f64, in Train mode",
          "[explain]") {
  auto c = check_text(
      "dim C = 8\n"
      "\n"
      "data Ex:\n"
      "    x: [C]\n"
      "\n"
      "model Net:\n"
      "    bn: BatchNorm[C]\n"
      "\n"
      "fn f(mut m: Net, batch: [b] Ex, mode: Mode) -> [b C]:\n"
      "    return batch_norm(batch.x, m.bn, mode)\n"
      "\n"
      "fn g(mut m: Net, batch: [b] Ex) -> [b C]:\n"
      "    return batch_norm(batch.x, m.bn, Eval)\n",
      "cpu[0 1 2]");
  comms::DeviceTable t = comms::build_table(*c->prog, c->sm);
  const comms::LineSends& l = line_with(t, "m.bn, mode)");
  REQUIRE(l.collectives.size() == 1);
  CHECK(l.collectives[0].dtype == "f64");
  CHECK(l.collectives[0].count.value() == 17);
  CHECK(l.total.value() == 136);
  // Eval normalises with the running statistics: nothing is sent.
  CHECK(fn_entry(t, "g").bytes_per_call->zero());
  // g, b, running_mean, running_var: 4 × 8 × f32.
  CHECK(value(t, "f", "m").model_bytes == 128);
}

// Every lowering in the op table, counted by explain from its entry's
// PayloadSize, against bytes counted by hand (D = 3, C = 5); the same
// figures are what each share really sends (ops/tests/
// device_rules_test.cpp, "each lowering's payload is the entry's count").
TEST_CASE("explain: each lowering's bytes, counted by hand", "[explain]") {
  auto c = check_text(
      "dim D = 3\n"
      "dim C = 5\n"
      "\n"
      "data Ex:\n"
      "    x: [D]\n"
      "    z: [D] f64\n"
      "    k: [D] i64\n"
      "    h: [D] bf16\n"
      "    y: i64\n"
      "    v: [C]\n"
      "\n"
      "model Net:\n"
      "    bn: BatchNorm[C]\n"
      "\n"
      "fn f(mut m: Net, batch: [b] Ex, mode: Mode) -> f32:\n"
      "    let s1 = sum(batch.x, over=b)\n"
      "    let s2 = reduce(batch.z, over=b, with=sum)\n"
      "    let s3 = mean(batch.x, over=b)\n"
      "    let s4 = mean(batch.k)\n"
      "    let s8 = mean(batch.h, over=b)\n"
      "    let s5 = cross_entropy(batch.x, batch.y)\n"
      "    let s6 = mse(batch.x, batch.x)\n"
      "    let s7 = batch_norm(batch.v, m.bn, mode)\n"
      "    return s5\n",
      "cpu[0 1]");
  comms::DeviceTable t = comms::build_table(*c->prog, c->sm);
  struct Want {
    const char* line;
    const char* source;
    int64_t count;
    const char* dtype;
    int64_t bytes;
  };
  const Want want[] = {
      {"sum(batch.x", "sum", 3, "f32", 12},        // D partial sums
      {"reduce(batch.z", "reduce", 3, "f64", 24},  // D partial sums, f64
      {"mean(batch.x", "mean", 4, "f32", 16},      // D sums and a count
      {"mean(batch.k)", "mean", 2, "f32", 8},      // an int mean is f32
      {"mean(batch.h", "mean", 4, "f32", 16},      // a bf16 mean sums in f32
      {"cross_entropy(", "cross_entropy", 2, "f32", 8},  // sum and count
      {"mse(", "mse", 2, "f32", 8},                      // sum and count
      {"batch_norm(", "batch_norm", 11, "f64", 88},      // 2·C + 1 in f64
  };
  for (const Want& w : want) {
    INFO(w.line);
    const comms::LineSends& l = line_with(t, w.line);
    REQUIRE(l.collectives.size() == 1);
    const comms::Collective& k = l.collectives[0];
    CHECK(k.op == "all-reduce");
    CHECK(k.source == w.source);
    CHECK(k.count.value() == w.count);
    CHECK(k.dtype == w.dtype);
    CHECK(k.bytes.value() == w.bytes);
    CHECK(l.total.value() == w.bytes);
  }
}

TEST_CASE("explain: KiB rounds to nearest", "[explain]") {
  CHECK(comms::bytes_text(comms::Size::constant(271024)) ==
        "271,024 bytes (265 KiB)");
  CHECK(comms::bytes_text(comms::Size::constant(813072)) ==
        "813,072 bytes (794 KiB)");
  CHECK(comms::bytes_text(comms::Size::constant(1535)) ==
        "1,535 bytes (1 KiB)");
  CHECK(comms::bytes_text(comms::Size::constant(1536)) ==
        "1,536 bytes (2 KiB)");
  CHECK(comms::bytes_text(comms::Size::constant(16)) == "16 bytes");
}

// The table's figures are what a run hands to its collectives. Three
// ranks, one thread each over in-process collectives, call the README's
// train_step once on a batch of 64 (each keeps its 22/21/21 share). Each
// rank's payload log then holds, in order:
//   1. loss's cross_entropy: its sum and count, 2 × f32 = 8 bytes;
//   2. value_and_grad's gradient all-reduce, one per dtype: w1 and w2,
//      784·256 + 256·10 = 203,264 × f32 = 813,056 bytes.
// The backward of (1) sends nothing: its cotangent is the same on every
// rank (tape.cpp, Note [Replicated cotangents]). devices.md's convention
// counts a float collective inside a fn that value_and_grad differentiates
// twice, so the table's "inside `loss`: 16 bytes" is 2 × (1), and its
// 813,072 bytes for the value_and_grad line are 2 × (1) + (2).
TEST_CASE("explain: a run's payloads add up to the table's bytes",
          "[explain]") {
  auto c = check_readme("cpu[0 1 2]");
  comms::DeviceTable t = comms::build_table(*c->prog, c->sm);
  const uint64_t want = line_with(t, "value_and_grad(").total.value();
  REQUIRE(want == 813072);
  StepPayloads p = readme_step_payloads(*c, false);
  auto& logs = p.logs;
  auto& errors = p.errors;
  for (int r = 0; r < StepPayloads::kWorld; ++r) {
    INFO("rank " << r << ": " << errors[r]);
    REQUIRE(errors[r].empty());
    const auto& log = logs[r];
    REQUIRE(log.size() == 2);
    CHECK(2 * log[0].bytes + log[1].bytes == want);
    for (const auto& rec : log) {
      CHECK(rec.op == ss::dist::CollectiveOp::AllReduce);
      CHECK(rec.dtype == ss::types::DType::F32);
    }
    CHECK(log[0].count == 2);  // forward: cross_entropy's sum and count
    CHECK(log[0].bytes == 8);
    CHECK(log[1].count == 203264);  // the gradients
    CHECK(log[1].bytes == 813056);
    // The forward collective and the gradient all-reduce are the table's
    // figures, item for item.
    const comms::LineSends& ce = line_with(t, "return cross_entropy(");
    CHECK(uint64_t(ce.collectives.at(0).bytes.value()) == log[0].bytes);
    const comms::LineSends& vg = line_with(t, "value_and_grad(");
    CHECK(uint64_t(vg.collectives.at(0).bytes.value()) == log[1].bytes);
    CHECK(uint64_t(vg.calls.at(0).bytes.value()) == 2 * log[0].bytes);
  }
}

TEST_CASE("explain: ss explain prints the report and the JSON table",
          "[explain]") {
  auto run = [](const std::string& args) {
    std::string cmd =
        std::string(SS_BINARY) + " explain " + args + " 2>/dev/null";
    std::string out;
    FILE* p = popen(cmd.c_str(), "r");
    REQUIRE(p);
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    int rc = pclose(p);
    return std::make_pair(rc, out);
  };
  std::string file = std::string(SS_SOURCE_DIR) + "/examples/readme_mlp.ss";
  auto [rc, text] = run(file + " --devices 'cpu[0 1 2]'");
  CHECK(rc == 0);
  CHECK(text.find(kValueAndGradHover) != std::string::npos);
  CHECK(text.find("readme_mlp.ss:22: let l, g = value_and_grad(loss, m, "
                  "batch)") != std::string::npos);
  CHECK(text.find("fn run (") != std::string::npos);
  auto [jrc, json] = run(file + " --devices 'cpu[0 1 2]' --json");
  CHECK(jrc == 0);
  CHECK(json.find("\"total\": 813072") != std::string::npos);
  CHECK(json.find("\"example_split\": [\n    22,\n    21,\n    21\n  ]") !=
        std::string::npos);
  auto [orc, one] = run(file);
  CHECK(orc == 0);
  CHECK(one.find("whole on the one device") != std::string::npos);
  CHECK(one.find("Sent between") == std::string::npos);
  // A mesh program on `devices cpu`: its instances' table (the basic
  // matmul, M = 8 and N = 4 on x=4 y=2: each instance's psum hands a [2 4]
  // block, 32 bytes).
  std::string mesh =
      std::string(SS_SOURCE_DIR) + "/examples/spmd/matmul_basic.ss";
  auto [mrc, mt] = run(mesh);
  CHECK(mrc == 0);
  CHECK(mt.find("matmul_basic.ss:21: let c = matmul_basic(a, b)\n\n"
                "Sent between the 8 instances on this line, per call:\n\n"
                "- inside `matmul_basic`: 32 bytes per call\n") !=
        std::string::npos);
  auto [mjrc, mj] = run(mesh + " --json");
  CHECK(mjrc == 0);
  CHECK(mj.find("\"mesh\": \"mesh x=4 y=2: each spmd fn runs as 8 instances, "
                "simulated in this process\"") != std::string::npos);
  CHECK(mj.find("\"layout\": \"blocks\"") != std::string::npos);
}
