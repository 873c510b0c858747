#pragma once
// Shared by the `ss explain` tests (explain_test.cpp, explain_shard_test.cpp):
// checking a program on a device list, finding a table's entries, and one
// README train_step on three thread ranks with each rank's payload log.

#include <array>
#include <catch2/catch.hpp>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "dist/comm/inproc_comm.h"
#include "interp/builtins/models.h"
#include "interp/check/checker.h"
#include "interp/check/plan/explain.h"
#include "interp/devices/lower/lowering.h"
#include "interp/devices/lower/rank_context.h"
#include "interp/devices/lower/shards.h"
#include "interp/eval/interpreter.h"
#include "interp/eval/objects.h"

namespace explain_test {

namespace comms = ss::check::comms;

struct Checked {
  ss::diag::SourceMap sm;
  ss::diag::Diagnostics diags;
  std::unique_ptr<ss::check::Program> prog;
};

// The README example (examples/readme_mlp.ss) on [devices]; with [shard],
// with `shard params` under its devices line.
inline std::unique_ptr<Checked> check_readme(const std::string& devices,
                                             bool shard = false) {
  auto c = std::make_unique<Checked>();
  ss::check::Options o;
  o.devices_override = devices;
  std::ifstream f(std::string(SS_SOURCE_DIR) + "/examples/readme_mlp.ss");
  std::stringstream text;
  text << f.rdbuf();
  std::string src = text.str();
  if (shard) {
    size_t at = src.find("devices cpu\n");
    REQUIRE(at != std::string::npos);
    src.insert(at + 12, "    shard params\n");
  }
  c->prog = ss::check::check_source("readme_mlp.ss", src, c->sm, c->diags, o);
  INFO(ss::diag::render_terminal(c->diags, c->sm));
  REQUIRE(c->prog);
  return c;
}

inline std::unique_ptr<Checked> check_text(const std::string& text,
                                           const std::string& devices) {
  auto c = std::make_unique<Checked>();
  ss::check::Options o;
  o.devices_override = devices;
  c->prog = ss::check::check_source("explain.ss", text, c->sm, c->diags, o);
  INFO(ss::diag::render_terminal(c->diags, c->sm));
  REQUIRE(c->prog);
  return c;
}

inline const comms::FnEntry& fn_entry(const comms::DeviceTable& t,
                                      const std::string& name) {
  for (const comms::FnEntry& f : t.fns)
    if (f.name == name) return f;
  FAIL("no fn " << name);
  throw 0;
}

inline const comms::ValueLayout& value(const comms::DeviceTable& t,
                                       const std::string& fn,
                                       const std::string& name) {
  for (const comms::ValueLayout& v : t.values)
    if (v.fn == fn && v.name == name) return v;
  FAIL("no value " << fn << "." << name);
  throw 0;
}

// The line whose source contains [needle].
inline const comms::LineSends& line_with(const comms::DeviceTable& t,
                                         const std::string& needle) {
  for (const comms::LineSends& l : t.lines)
    if (l.source.find(needle) != std::string::npos) return l;
  FAIL("no sending line with " << needle);
  throw 0;
}

/// Each rank's collectives and error (empty: none) while [body] ran on
/// it: [World] thread ranks over in-process collectives, each with its
/// DeviceContext ([setup] may change it: `split H`) and an Interpreter
/// holding its RankContext; the log starts after what [body] calls
/// prepare (its model made and cut) with [clear].
template <int World>
struct RankPayloads {
  static constexpr int kWorld = World;
  std::array<std::vector<ss::dist::CollectiveRecord>, World> logs;
  std::array<std::string, World> errors;
};

template <int World, typename Setup, typename Body>
RankPayloads<World> on_ranks(const Checked& c, Setup setup, Body body) {
  RankPayloads<World> out;
  auto hub = std::make_shared<ss::dist::InprocHub>(World);
  std::vector<std::thread> threads;
  for (int r = 0; r < World; ++r)
    threads.emplace_back([&, r] {
      ss::dist::InprocComm comm(hub, r);
      try {
        ss::devices::lower::DeviceContext d;
        d.rank = r;
        d.world = World;
        d.comm = &comm;
        setup(d);
        std::ostringstream printed;
        ss::devices::lower::RankContext context(d);
        ss::eval::Interpreter in(*c.prog, c.sm, printed);
        in.set_device_hooks(&context);
        body(r, in, [&] { comm.clear_log(); });
        out.logs[r] = comm.log();
      } catch (const std::exception& e) {
        out.errors[r] = e.what();
        comm.close();
      }
    });
  for (auto& th : threads) th.join();
  return out;
}

/// Each rank's collectives during one README train_step on a batch of 64
/// (each rank keeps its 22/21/21 share), three ranks over in-process
/// collectives; with [shard], each rank's model holds its pieces.
using StepPayloads = RankPayloads<3>;

inline StepPayloads readme_step_payloads(const Checked& c, bool shard) {
  constexpr int kWorld = StepPayloads::kWorld;
  constexpr int kBatch = 64;
  std::mt19937 rng(0);
  std::uniform_real_distribution<float> u(0, 1);
  std::vector<double> x(size_t(kBatch) * 784), y(kBatch);
  for (double& v : x) v = u(rng);
  for (double& v : y) v = double(rng() % 10);
  return on_ranks<kWorld>(
      c,
      [](ss::devices::lower::DeviceContext&) {},
      [&](int r, ss::eval::Interpreter& in, const auto& clear) {
        auto batch = std::make_shared<ss::eval::RecordValue>();
        batch->info = c.prog->record("Digit");
        batch->batch = true;
        batch->fields["img"] = ss::ops::Tensor::from_doubles(
            {kBatch, 784}, x, ss::types::DType::F32);
        batch->fields["label"] =
            ss::ops::Tensor::from_doubles({kBatch}, y, ss::types::DType::I64);
        ss::eval::Value bv =
            ss::eval::Value::object(ss::eval::Value::Kind::Record, batch);
        ss::types::Type mt = ss::types::Type::of(ss::types::Type::Kind::Model);
        mt.model = c.prog->model("Mlp");
        ss::eval::Value m = ss::builtins::init_model(in, mt, 0, {});
        // As a worker cuts a model that arrives (Note [Sharded params]).
        if (shard)
          ss::devices::lower::shard_store(
              *m.as<ss::eval::ModelRef>()->store, r, kWorld);
        auto opt = std::make_shared<ss::eval::OptimState>();
        opt->kind = ss::types::OptimKind::AdamW;
        opt->model = m.as<ss::eval::ModelRef>()->store;
        opt->weight_decay = 0.01;
        ss::eval::Value ov =
            ss::eval::Value::object(ss::eval::Value::Kind::Optim, opt);
        clear();  // the step's collectives only
        in.call(*c.prog->fn("train_step"), {m, ov, bv}, {});
      });
}

}  // namespace explain_test
