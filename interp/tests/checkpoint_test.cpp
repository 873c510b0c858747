// Checkpoints (save, load, load_into: interp/builtins/checkpoint.cpp) through
// the interpreter and through `ss run`.

#include <catch2/catch.hpp>

#include "interp/builtins/models.h"
#include "interp/tests/safetensors_test_util.h"

using namespace ss;
using Catch::Matchers::Contains;
using data::read_safetensors;
using data::SafetensorsError;
using data::SafetensorsFile;
using data::write_safetensors;
using ops::Tensor;
using types::DType;

namespace fs = std::filesystem;

using namespace safetensors_test;

// ---- checkpoints through the interpreter ----

namespace {

const char* kModels = R"(devices cpu

dim D = 4
dim H = 3

model Lin:
    w: [D H] = normal(std=1.0)
    b: [H] = zeros()
    buffer count: [H] = ones()

model Wide:
    w: [D 5] = normal(std=1.0)
    b: [H] = zeros()
    buffer count: [H] = ones()

model More:
    w: [D H] = normal(std=1.0)
    b: [H] = zeros()
    buffer count: [H] = ones()
    c: [H] = zeros()

model Less:
    w: [D H] = normal(std=1.0)

model Ints:
    w: [D H] = normal(std=1.0)
    b: [H] = zeros()
    buffer count: [H] i32 = ones()

model Half:
    w: [D H] bf16 = normal(std=1.0)
    b: [H] f64 = zeros()
    buffer count: [H] = ones()

model Net:
    inner: Lin
    g: [H] = ones()

fn main():
    let m = Lin.init(seed=0)
)";

struct Env {
  std::unique_ptr<testing::Checked> checked = testing::check_text(kModels);
  std::ostringstream out;
  std::unique_ptr<eval::Interpreter> in;
  Env() {
    INFO(checked->rendered());
    REQUIRE(checked->prog);
    REQUIRE(checked->diags.list().empty());
    in = std::make_unique<eval::Interpreter>(*checked->prog, checked->sm, out);
  }
  types::Type type(const std::string& name) const {
    types::Type t = types::Type::of(types::Type::Kind::Model);
    t.model = checked->prog->model(name);
    REQUIRE(t.model);
    return t;
  }
  eval::Value model(const std::string& name, uint64_t seed) {
    return ss::builtins::init_model(*in, type(name), seed, {});
  }
  eval::Value call(const std::string& name, std::vector<eval::Value> args) {
    return in->call_builtin_values(name, std::move(args), {});
  }
  // The RuntimeError a call raises, as "Kind: message" (empty when none).
  std::string error(const std::string& name, std::vector<eval::Value> args) {
    try {
      call(name, std::move(args));
    } catch (const eval::RuntimeError& e) {
      std::string s = e.kind() + ": " + e.message();
      for (const std::string& n : e.notes()) s += "\n" + n;
      return s;
    }
    return "";
  }
};

eval::Value str(const std::string& s) {
  return eval::Value::string(s);
}

std::shared_ptr<eval::OptimState> adamw_state(const eval::Value& m) {
  auto* ref = m.as<eval::ModelRef>();
  auto o = std::make_shared<eval::OptimState>();
  o->kind = types::OptimKind::AdamW;
  o->model = ref->store;
  o->lr = 3e-4;
  o->beta1 = 0.8;
  o->beta2 = 0.95;
  o->eps = 1e-6;
  o->weight_decay = 0.05;
  o->step = 7;
  double k = 1;
  for (const std::string& p : ref->paths(true)) {
    Tensor t = ref->get(p);
    o->state[p]["exp_avg"] = Tensor::full(t.shape(), 0.1 * k, t.dtype());
    o->state[p]["exp_avg_sq"] = Tensor::full(t.shape(), 0.01 * k, t.dtype());
    k += 1;
  }
  return o;
}

bool same_model(const eval::Value& a, const eval::Value& b) {
  auto* x = a.as<eval::ModelRef>();
  auto* y = b.as<eval::ModelRef>();
  if (x->paths(false) != y->paths(false)) return false;
  for (const std::string& p : x->paths(false))
    if (!same_bytes(x->get(p), y->get(p))) return false;
  return true;
}

}  // namespace

TEST_CASE("checkpoint: save and load a model with adamw state",
          "[checkpoint]") {
  TempDir tmp;
  Env env;
  std::string path = tmp / "lin.safetensors";
  eval::Value m = env.model("Lin", 3);
  auto o = adamw_state(m);
  env.call("save",
           {str(path), m, eval::Value::object(eval::Value::Kind::Optim, o)});
  CHECK(leftovers(tmp.dir).empty());

  SafetensorsFile f = read_safetensors(path);
  CHECK(f.metadata.at("format") == "shapescript");
  CHECK(f.metadata.at("model") == "Lin");
  CHECK(f.metadata.at("optimizer") == "adamw");
  CHECK(f.metadata.at("step") == "7");
  CHECK(f.metadata.at("lr") == "0.0003");
  CHECK(f.metadata.at("betas") == "[0.8, 0.95]");
  CHECK(f.metadata.at("eps") == "1e-06");
  CHECK(f.metadata.at("weight_decay") == "0.05");
  std::vector<std::string> names;
  for (const auto& [n, t] : f.tensors) names.push_back(n);
  CHECK(names == std::vector<std::string>{"w",
                                          "b",
                                          "count",
                                          "opt.exp_avg.w",
                                          "opt.exp_avg.b",
                                          "opt.exp_avg_sq.w",
                                          "opt.exp_avg_sq.b"});

  SECTION("load(path, Lin, adamw)") {
    eval::Value r = env.call("load",
                             {str(path),
                              eval::Value::type_value(env.type("Lin")),
                              eval::Value::fn("adamw")});
    REQUIRE(r.kind == eval::Value::Kind::Tuple);
    const eval::Value& m2 = (*r.items)[0];
    const eval::Value& o2v = (*r.items)[1];
    REQUIRE(m2.kind == eval::Value::Kind::Model);
    REQUIRE(o2v.kind == eval::Value::Kind::Optim);
    CHECK(same_model(m, m2));
    CHECK(m2.as<eval::ModelRef>()->store->is_buffer.at("count"));
    auto* o2 = o2v.as<eval::OptimState>();
    CHECK(o2->model == m2.as<eval::ModelRef>()->store);
    CHECK(o2->kind == types::OptimKind::AdamW);
    CHECK(o2->step == 7);
    CHECK(o2->lr == o->lr);
    CHECK(o2->beta1 == o->beta1);
    CHECK(o2->beta2 == o->beta2);
    CHECK(o2->eps == o->eps);
    CHECK(o2->weight_decay == o->weight_decay);
    REQUIRE(o2->state.size() == 2);
    for (const char* p : {"w", "b"})
      for (const char* s : {"exp_avg", "exp_avg_sq"})
        CHECK(same_bytes(o2->state.at(p).at(s), o->state.at(p).at(s)));
    CHECK(!o2->state.count("count"));  // buffers have no optimizer state
  }
  SECTION("load(path, Lin) ignores the optimizer state") {
    eval::Value m2 =
        env.call("load", {str(path), eval::Value::type_value(env.type("Lin"))});
    REQUIRE(m2.kind == eval::Value::Kind::Model);
    CHECK(same_model(m, m2));
  }
  SECTION("load_into replaces the tensors in place") {
    eval::Value m2 = env.model("Lin", 99);
    CHECK(!same_model(m, m2));
    env.call("load_into", {m2, str(path)});
    CHECK(same_model(m, m2));
  }
  SECTION("the wrong optimizer") {
    CHECK_THAT(
        env.error("load",
                  {str(path),
                   eval::Value::type_value(env.type("Lin")),
                   eval::Value::fn("sgd")}),
        Contains("ValueError") && Contains("holds adamw state, not sgd"));
  }
}

TEST_CASE("checkpoint: sgd state, sub-models and files without optimizer",
          "[checkpoint]") {
  TempDir tmp;
  Env env;
  std::string path = tmp / "net.safetensors";
  eval::Value m = env.model("Net", 1);
  auto* ref = m.as<eval::ModelRef>();
  auto o = std::make_shared<eval::OptimState>();
  o->kind = types::OptimKind::SGD;
  o->model = ref->store;
  o->lr = 0.1;
  o->momentum = 0.9;
  o->nesterov = true;
  o->weight_decay = 1e-4;
  o->step = 2;
  o->state["inner.w"]["momentum_buffer"] =
      Tensor::full({4, 3}, 0.5, DType::F32);
  env.call("save",
           {str(path), m, eval::Value::object(eval::Value::Kind::Optim, o)});
  SafetensorsFile f = read_safetensors(path);
  CHECK(find(f, "inner.w"));
  CHECK(find(f, "inner.count"));
  CHECK(find(f, "opt.momentum_buffer.inner.w"));
  CHECK(f.metadata.at("nesterov") == "true");
  CHECK(f.metadata.at("momentum") == "0.9");

  eval::Value r = env.call("load",
                           {str(path),
                            eval::Value::type_value(env.type("Net")),
                            eval::Value::fn("sgd")});
  auto* o2 = (*r.items)[1].as<eval::OptimState>();
  CHECK(same_model(m, (*r.items)[0]));
  CHECK(o2->kind == types::OptimKind::SGD);
  CHECK(o2->momentum == 0.9);
  CHECK(o2->nesterov);
  CHECK(o2->weight_decay == 1e-4);
  CHECK(o2->lr == 0.1);
  CHECK(o2->step == 2);
  REQUIRE(o2->state.size() == 1);
  CHECK(same_bytes(o2->state.at("inner.w").at("momentum_buffer"),
                   o->state.at("inner.w").at("momentum_buffer")));

  // A sub-model handle saves paths relative to it, and loads as its type.
  auto inner = std::make_shared<eval::ModelRef>(*ref);
  inner->prefix = "inner.";
  inner->type = env.type("Lin");
  eval::Value iv = eval::Value::object(eval::Value::Kind::Model, inner);
  std::string ipath = tmp / "inner.safetensors";
  env.call("save", {str(ipath), iv});
  SafetensorsFile g = read_safetensors(ipath);
  REQUIRE(g.tensors.size() == 3);
  CHECK(g.tensors[0].first == "w");
  CHECK(g.metadata.at("model") == "Lin");
  CHECK(!g.metadata.count("optimizer"));
  eval::Value lin =
      env.call("load", {str(ipath), eval::Value::type_value(env.type("Lin"))});
  CHECK(same_model(iv, lin));
  CHECK_THAT(env.error("load",
                       {str(ipath),
                        eval::Value::type_value(env.type("Lin")),
                        eval::Value::fn("adamw")}),
             Contains("ValueError") && Contains("has no optimizer state"));
  // load_into a sub-model handle writes through to the parent's store.
  eval::Value other = env.model("Lin", 42);
  env.call("save", {str(ipath), other});
  env.call("load_into", {iv, str(ipath)});
  CHECK(same_model(iv, other));
  CHECK(same_bytes(ref->get("inner.w"), other.as<eval::ModelRef>()->get("w")));
}

TEST_CASE("checkpoint: rmsprop's three states, flag and group round-trip",
          "[checkpoint]") {
  // Every kind saves the hyperparameters its table entry names and
  // the states it holds by torch's names (Note [An optimizer's table
  // entry]); RMSprop, centered with momentum, holds three.
  TempDir tmp;
  Env env;
  std::string path = tmp / "lin.safetensors";
  eval::Value m = env.model("Lin", 3);
  auto* ref = m.as<eval::ModelRef>();
  auto o = std::make_shared<eval::OptimState>();
  o->kind = types::OptimKind::RMSprop;
  o->model = ref->store;
  o->lr = 0.005;
  o->alpha = 0.9;
  o->eps = 1e-6;
  o->momentum = 0.7;
  o->centered = true;
  o->step = 3;
  double k = 1;
  for (const std::string& p : ref->paths(true)) {
    Tensor t = ref->get(p);
    for (const char* st : {"square_avg", "momentum_buffer", "grad_avg"})
      o->state[p][st] = Tensor::full(t.shape(), 0.1 * k++, t.dtype());
  }
  eval::ParamGroup vec{"vec", {"b"}, *o};  // Note [Param groups]
  vec.hyper.alpha = 0.5;
  vec.hyper.centered = false;
  o->groups.push_back(vec);
  env.call("save",
           {str(path), m, eval::Value::object(eval::Value::Kind::Optim, o)});
  SafetensorsFile f = read_safetensors(path);
  CHECK(f.metadata.at("optimizer") == "rmsprop");
  CHECK(f.metadata.at("group0.name") == "vec");
  CHECK(f.metadata.at("group0.params") == "b");
  CHECK(f.metadata.at("group0.alpha") == "0.5");
  CHECK(f.metadata.at("group0.centered") == "false");
  CHECK(f.metadata.at("group0.momentum") == "0.7");
  CHECK(f.metadata.at("alpha") == "0.9");
  CHECK(f.metadata.at("momentum") == "0.7");
  CHECK(f.metadata.at("centered") == "true");
  CHECK(f.metadata.count("betas") == 0);  // not RMSprop's
  CHECK(f.tensors.size() == 3 + 3 * 2);   // w, b, count; 3 states of w, b

  eval::Value r = env.call("load",
                           {str(path),
                            eval::Value::type_value(env.type("Lin")),
                            eval::Value::fn("rmsprop")});
  auto* o2 = (*r.items)[1].as<eval::OptimState>();
  CHECK(o2->kind == types::OptimKind::RMSprop);
  CHECK(o2->step == 3);
  CHECK(o2->lr == o->lr);
  CHECK(o2->alpha == o->alpha);
  CHECK(o2->eps == o->eps);
  CHECK(o2->momentum == o->momentum);
  CHECK(o2->centered);
  REQUIRE(o2->groups.size() == 1);
  CHECK(o2->groups[0].name == "vec");
  CHECK(o2->groups[0].paths == std::vector<std::string>{"b"});
  CHECK(o2->groups[0].hyper.alpha == 0.5);
  CHECK(!o2->groups[0].hyper.centered);
  CHECK(o2->groups[0].hyper.momentum == 0.7);
  CHECK(&o2->hyper_of("b") == &o2->groups[0].hyper);
  CHECK(&o2->hyper_of("w") == static_cast<eval::OptimHyper*>(o2));
  for (const auto& [p, st] : o->state)
    for (const auto& [name, t] : st)
      CHECK(same_bytes(o2->state.at(p).at(name), t));
  CHECK(env.error("load",
                  {str(path),
                   eval::Value::type_value(env.type("Lin")),
                   eval::Value::fn("adam")})
            .find("holds rmsprop state, not adam") != std::string::npos);
}

TEST_CASE("checkpoint: every tensor is checked against the model type",
          "[checkpoint]") {
  TempDir tmp;
  Env env;
  std::string path = tmp / "lin.safetensors";
  eval::Value m = env.model("Lin", 3);
  env.call("save", {str(path), m});
  auto load_as = [&](const std::string& type) {
    return env.error("load",
                     {str(path), eval::Value::type_value(env.type(type))});
  };
  CHECK_THAT(load_as("Wide"),
             Contains("ShapeError") && Contains("`w` is [4 3] f32") &&
                 Contains("Wide.w is [4 5] f32"));
  CHECK_THAT(load_as("More"),
             Contains("ShapeError") &&
                 Contains("has no tensor `c` (More.c: [3] f32)"));
  CHECK_THAT(load_as("Less"),
             Contains("ValueError") && Contains("`b`, `count`") &&
                 Contains("Less has no field for"));
  CHECK_THAT(load_as("Ints"),
             Contains("ShapeError") && Contains("`count` is [3] f32") &&
                 Contains("Ints.count is [3] i32") &&
                 Contains("help: write the checkpoint's tensors as i32"));
  // Other float dtypes are ShapeErrors too (no silent f64 -> f32 or f32
  // -> bf16), with a help line that says how to convert the file.
  CHECK_THAT(load_as("Half"),
             Contains("ShapeError") && Contains("`w` is [4 3] f32") &&
                 Contains("Half.w is [4 3] bf16") &&
                 Contains("v.to(torch.bfloat16)") &&
                 Contains("or declare Half.w as f32"));
  SECTION("a failed load_into leaves the model as it was") {
    eval::Value w = env.model("Wide", 5);
    eval::Value before = env.call("copy", {w});
    // b and count fit Wide, w does not: nothing may be replaced.
    CHECK_THAT(env.error("load_into", {w, str(path)}), Contains("ShapeError"));
    CHECK(same_model(w, before));
  }
  SECTION("optimizer state of the wrong shape") {
    SafetensorsFile f = read_safetensors(path);
    f.metadata["optimizer"] = "adamw";
    f.metadata["step"] = "1";
    f.tensors.emplace_back("opt.exp_avg.w", Tensor::zeros({4, 2}, DType::F32));
    f.tensors.emplace_back("opt.exp_avg_sq.w",
                           Tensor::zeros({4, 2}, DType::F32));
    write_safetensors(path, f);
    CHECK_THAT(env.error("load",
                         {str(path),
                          eval::Value::type_value(env.type("Lin")),
                          eval::Value::fn("adamw")}),
               Contains("ShapeError") && Contains("opt.exp_avg.w") &&
                   Contains("[4 2]") && Contains("[4 3]"));
  }
  SECTION("unknown optimizer state and half of adamw's pair") {
    SafetensorsFile f = read_safetensors(path);
    f.metadata["optimizer"] = "adamw";
    f.tensors.emplace_back("opt.exp_avg.w", Tensor::zeros({4, 3}, DType::F32));
    write_safetensors(path, f);
    CHECK_THAT(
        env.error("load",
                  {str(path),
                   eval::Value::type_value(env.type("Lin")),
                   eval::Value::fn("adamw")}),
        Contains("ValueError") && Contains("exp_avg but not exp_avg_sq"));
    f.tensors.emplace_back("opt.exp_avg_sq.w",
                           Tensor::zeros({4, 3}, DType::F32));
    f.tensors.emplace_back("opt.exp_avg.nope",
                           Tensor::zeros({4, 3}, DType::F32));
    write_safetensors(path, f);
    CHECK_THAT(env.error("load",
                         {str(path),
                          eval::Value::type_value(env.type("Lin")),
                          eval::Value::fn("adamw")}),
               Contains("ValueError") && Contains("`opt.exp_avg.nope`"));
  }
  SECTION("bad metadata") {
    SafetensorsFile f = read_safetensors(path);
    f.metadata["optimizer"] = "adamw";
    f.metadata["lr"] = "fast";
    write_safetensors(path, f);
    CHECK_THAT(
        env.error("load",
                  {str(path),
                   eval::Value::type_value(env.type("Lin")),
                   eval::Value::fn("adamw")}),
        Contains("ValueError") && Contains("lr is not a number: 'fast'"));
  }
  SECTION("a grad scaler's metadata out of its domain") {
    // Note [Loss scaling]: a scale must be positive and the growth tracker
    // below the interval, else the scaler would never move as torch's.
    const std::vector<std::pair<std::string, std::string>> bad = {
        {"grad_scaler.scale", "-1"},
        {"grad_scaler.scale", "big"},
        {"grad_scaler.growth_factor", "1"},
        {"grad_scaler.backoff_factor", "1.5"},
        {"grad_scaler._growth_tracker", "2000"},
        {"grad_scaler.growth_interval", "0.5"}};
    for (const auto& [key, value] : bad) {
      INFO(key << " = " << value);
      SafetensorsFile f = read_safetensors(path);
      f.metadata["optimizer"] = "adamw";
      f.metadata["grad_scaler.scale"] = "65536";
      f.metadata[key] = value;
      write_safetensors(path, f);
      CHECK_THAT(env.error("load",
                           {str(path),
                            eval::Value::type_value(env.type("Lin")),
                            eval::Value::fn("adamw")}),
                 Contains("ValueError") && Contains(key.substr(0, 12)));
    }
  }
  SECTION("a torch-style file with matching names loads") {
    SafetensorsFile f;
    f.tensors.emplace_back("count", Tensor::full({3}, 2.0, DType::F32));
    f.tensors.emplace_back("b", Tensor::full({3}, 0.5, DType::F32));
    f.tensors.emplace_back("w", Tensor::full({4, 3}, 1.0, DType::F32));
    f.metadata["format"] = "pt";
    write_safetensors(path, f);
    eval::Value l =
        env.call("load", {str(path), eval::Value::type_value(env.type("Lin"))});
    auto* lr = l.as<eval::ModelRef>();
    CHECK(lr->get("w").dtype() == DType::F32);
    CHECK(lr->get("w").to_doubles() == std::vector<double>(12, 1.0));
    CHECK(lr->get("b").to_doubles() == std::vector<double>(3, 0.5));
  }
}

TEST_CASE("checkpoint: IO failures are IOErrors", "[checkpoint]") {
  TempDir tmp;
  Env env;
  eval::Value lin = eval::Value::type_value(env.type("Lin"));
  CHECK_THAT(env.error("load", {str(tmp / "nope.safetensors"), lin}),
             Contains("IOError") && Contains("cannot open") &&
                 Contains("nope.safetensors"));
  std::string path = tmp / "trunc.safetensors";
  env.call("save", {str(path), env.model("Lin", 0)});
  std::string bytes = read_bytes(path);
  write_bytes(path, bytes.substr(0, bytes.size() - 4));
  CHECK_THAT(env.error("load", {str(path), lin}),
             Contains("IOError") && Contains("truncated"));
  eval::Value m = env.model("Lin", 0);
  CHECK_THAT(env.error("load_into", {m, str(path)}), Contains("IOError"));
  CHECK_THAT(env.error("save", {str(tmp / "no/dir/x.safetensors"), m}),
             Contains("IOError") && Contains("cannot write"));
}

// ---- whole programs through `ss run` ----

TEST_CASE("checkpoint: ss run saves and loads models and optimizers",
          "[checkpoint]") {
  TempDir tmp;
  std::string prog = tmp / "ck.ss";
  std::string a = tmp / "a.safetensors", b = tmp / "b.safetensors";
  std::string c = tmp / "c.safetensors";
  std::ofstream(prog) << R"(devices cpu

dim D = 4
dim H = 3

model Lin:
    w: [D H] = normal(std=1.0)
    b: [H] = uniform(lo=-1.0, hi=1.0)

fn main():
    let m = Lin.init(seed=1)
    let opt = sgd(m, lr=0.05, momentum=0.9, nesterov=true)
    save(")" << a << R"(", m, opt)
    let m2, opt2 = load(")"
                      << a << R"(", Lin, sgd)
    save(")" << b << R"(", m2, opt2)
    let m3 = Lin.init(seed=7)
    load_into(m3, ")" << b
                      << R"(")
    save(")" << c << R"(", m3)
    print(m3.w == m.w)
)";
  std::string cmd = std::string(SS_BINARY) + " run " + prog + " 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  REQUIRE(p);
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  int rc = ::pclose(p);
  INFO(out);
  REQUIRE(rc == 0);
  CHECK(out.find("false") == std::string::npos);
  SafetensorsFile fa = read_safetensors(a), fb = read_safetensors(b),
                  fc = read_safetensors(c);
  CHECK(fa.metadata == fb.metadata);
  CHECK(fa.metadata.at("optimizer") == "sgd");
  CHECK(fa.metadata.at("lr") == "0.05");
  CHECK(fa.metadata.at("nesterov") == "true");
  REQUIRE(fa.tensors.size() == 2);
  REQUIRE(fb.tensors.size() == 2);
  REQUIRE(fc.tensors.size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    CHECK(fa.tensors[i].first == fb.tensors[i].first);
    CHECK(same_bytes(fa.tensors[i].second, fb.tensors[i].second));
    CHECK(same_bytes(fa.tensors[i].second, fc.tensors[i].second));
  }
  CHECK(!fc.metadata.count("optimizer"));

  // A load that does not fit is a ShapeError naming the field and shapes.
  std::ofstream(prog) << R"(devices cpu

dim D = 4

model Lin:
    w: [D 5] = normal(std=1.0)
    b: [3] = zeros()

fn main():
    let m = load(")" << a
                      << R"(", Lin)
    print(m.w)
)";
  p = ::popen(cmd.c_str(), "r");
  REQUIRE(p);
  out.clear();
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  rc = ::pclose(p);
  INFO(out);
  CHECK(rc != 0);
  CHECK_THAT(out,
             Contains("ShapeError") && Contains("`w` is [4 3] f32") &&
                 Contains("Lin.w is [4 5] f32"));
}
