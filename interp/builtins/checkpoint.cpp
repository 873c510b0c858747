// Checkpoints: save, load, load_into (library.md, Checkpoints). One
// safetensors file (interp/data/safetensors.h):
//   - params and buffers by field path relative to the handle ("w1",
//     "norm.g", "blocks.w_q");
//   - optimizer state as "opt.<state>.<path>" ("opt.exp_avg.w1",
//     "opt.momentum_buffer.w1"), paths relative like the params';
//   - __metadata__: format=shapescript, model=<type name>, and with an
//     optimizer: optimizer=<its builtin: adamw, sgd, adam, ...>, step, and
//     the hyperparameters its table entry names (OptimizerRule::hypers:
//     lr, weight_decay, betas "[b1, b2]", eps, nesterov "true"|"false",
//     ...), numbers in the shortest form that reads back exactly; each
//     param group k as group<k>.name, group<k>.params (paths, space
//     separated) and group<k>.<hyperparameter> (Note [Param groups]);
//     with a grad scaler, grad_scaler.scale, growth_factor,
//     backoff_factor, growth_interval and _growth_tracker (torch's
//     scaler.state_dict(): Note [Loss scaling] in grad_scaler.cpp).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "interp/builtins/models.h"
#include "interp/builtins/optimizers.h"
#include "interp/data/dtype_spelling.h"
#include "interp/data/safetensors.h"
#include "interp/eval/device_hooks.h"
#include "interp/eval/runtime_table.h"
#include "ops/api.h"
#include "ops/core/storage_bytes.h"

namespace ss::builtins {

using namespace ss::eval;
using namespace ss::data;

using VK = Value::Kind;
using TK = types::Type::Kind;

namespace {

// The shortest text that reads back exactly, fixed-point in the range
// Python's repr uses it (0.0003, 0.9, 100.0 -> "100"), else scientific.
std::string num(double v) {
  char buf[512];
  double a = std::fabs(v);
  auto r =
      (a >= 1e-4 && a < 1e16) || a == 0
          ? std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed)
          : std::to_chars(
                buf, buf + sizeof buf, v, std::chars_format::scientific);
  return std::string(buf, r.ptr);
}

std::string quote(const std::string& s) {
  return "'" + s + "'";
}

std::string describe(const ops::Tensor& t) {
  return ops::shape_string(t.shape()) + " " + types::dtype_name(t.dtype());
}

const char* optim_name(types::OptimKind k) {
  return types::optim_names(k).fn;
}

const std::vector<std::string>& state_names(types::OptimKind k) {
  return optimizer_rule(k).state;
}

SafetensorsFile read(BuiltinCall& c, const std::string& path) {
  try {
    return read_safetensors(path);
  } catch (const SafetensorsError& e) {
    c.fail("IOError", e.what());
  }
}

std::string model_name(const ModelRef& m) {
  return m.type.model ? m.type.model->name : std::string("model");
}

// A tensor from the file checked against what the model holds at [what]
// ("Mlp.w1"): the same shape and the same dtype. A different dtype is a
// ShapeError, as a wrong dtype in a dataset is (Note [No silent dtype
// conversion] in lib/dataset.cpp): an f64 checkpoint read into f32 params
// silently loses precision, and torch's own `load_state_dict` is the only
// tool that converts; the help says how to convert the file instead.
ops::Tensor fit(BuiltinCall& c,
                const std::string& file,
                const std::string& name,
                const ops::Tensor& found,
                const ops::Tensor& expected,
                const std::string& what) {
  std::string mismatch = "checkpoint " + quote(file) + ": `" + name + "` is " +
                         describe(found) + ", but " + what + " is " +
                         describe(expected);
  if (found.shape() != expected.shape()) c.fail("ShapeError", mismatch);
  // Read on the host; it lives where the value it replaces lives.
  if (found.dtype() == expected.dtype()) return found.to(expected.device());
  std::string want = types::dtype_name(expected.dtype());
  std::string have = types::dtype_name(found.dtype());
  c.fail(
      "ShapeError",
      mismatch,
      {"help: write the checkpoint's tensors as " + want +
       " (torch: `{k: v.to(torch." + spelling_of(expected.dtype()).torch_name +
       ") for k, v in sd.items()}` before `save_file`), or declare " + what +
       " as " + have + " in the model"});
}

using TensorMap = std::map<std::string, ops::Tensor>;

// The model's new tensors from [tensors] by path, every one checked; the
// model is left untouched (the caller sets them once all are checked).
std::vector<std::pair<std::string, ops::Tensor>> model_tensors(
    BuiltinCall& c,
    const std::string& file,
    const TensorMap& tensors,
    const ModelRef& m) {
  std::vector<std::pair<std::string, ops::Tensor>> out;
  std::set<std::string> used;
  std::string mname = model_name(m);
  for (const std::string& p : m.paths(false)) {
    ops::Tensor expected = m.get(p);
    std::string what = mname + "." + p;
    auto it = tensors.find(p);
    if (it == tensors.end())
      c.fail("ShapeError",
             "checkpoint " + quote(file) + " has no tensor `" + p + "` (" +
                 what + ": " + describe(expected) + ")");
    out.emplace_back(p, fit(c, file, p, it->second, expected, what));
    used.insert(p);
  }
  // A tensor the model has no field for means the wrong file (or the wrong
  // model type): say which. Optimizer state is checked by load(.., adamw)
  // and skipped by a plain load.
  std::vector<std::string> unknown;
  for (const auto& [name, t] : tensors)
    if (!used.count(name) && name.rfind("opt.", 0) != 0)
      unknown.push_back(name);
  if (!unknown.empty()) {
    std::string list;
    for (size_t i = 0; i < unknown.size() && i < 10; ++i)
      list += (i ? ", `" : "`") + unknown[i] + "`";
    if (unknown.size() > 10)
      list += " and " + std::to_string(unknown.size() - 10) + " more";
    c.fail("ValueError",
           "checkpoint " + quote(file) + " has tensor" +
               (unknown.size() == 1 ? " " : "s ") + list + " that " + mname +
               " has no field for");
  }
  return out;
}

TensorMap by_name(SafetensorsFile& f) {
  TensorMap m;
  for (auto& [name, t] : f.tensors) m[name] = std::move(t);
  return m;
}

// ---- save ----

// Note [A streaming save]
// On several devices the workers hold the newer copy of a model (and of
// its optimizer's state); fetched whole, a save held it in the
// controller twice (the reply and its tensors) beside the controller's
// own older copy, and with `shard params` each worker gathered every
// param at once. The file's header needs only the names, dtypes and
// shapes, which the controller's older copy has (a field's type fixes
// them): so the header is written first, and then each tensor is fetched
// alone, whole (every worker gathers that one param), written and let
// go (write_safetensors_streamed). An optimizer's step, hyperparameters
// and which states it holds come first in one small fetch (fetch_layout);
// a state has its param's dtype and shape. The controller's copies stay
// as they are, still older than the workers'. A store the controller has
// no copy of, or a model of a stack (a handle with an index), is fetched
// whole as before.
namespace {

struct SaveParts {
  std::map<std::string, std::string> metadata;
  std::vector<SafetensorsPiece> pieces;
};

SafetensorsPiece piece_of(const std::string& name, const ops::Tensor& t) {
  return {name, t.dtype(), t.shape(), [t] { return t; }};
}

// Whether [m]'s fields can be fetched one at a time: its store is newer on
// the workers and the controller's older copy has every field.
bool streams(const ModelRef& m) {
  if (!m.store->newer_on || !m.index.empty()) return false;
  for (const std::string& p : m.paths(false)) {
    auto t = m.store->tensors.find(m.prefix + p);
    if (t == m.store->tensors.end() || !t->second.defined()) return false;
  }
  return true;
}

// [h]'s hyperparameters that [kind]'s table entry names, as metadata
// <prefix><name> (Note [Param groups]: a group's prefix is group<k>.).
void write_hypers(std::map<std::string, std::string>& meta,
                  const std::string& prefix,
                  types::OptimKind kind,
                  OptimHyper h) {
  for (const std::string& name : optimizer_rule(kind).hypers) {
    if (name == "betas") {
      meta[prefix + "betas"] = "[" + num(h.beta1) + ", " + num(h.beta2) + "]";
      continue;
    }
    h.each(
        [&](const char* n, double& x) {
          if (name == n) meta[prefix + name] = num(x);
        },
        [&](const char* n, bool& b) {
          if (name == n) meta[prefix + name] = b ? "true" : "false";
        });
  }
}

// A grad scaler as torch's scaler.state_dict() names it, under
// grad_scaler. (Note [Loss scaling] in grad_scaler.cpp). Gradients taken
// but not yet used by an update are not kept: save between steps.
void write_loss_scale(std::map<std::string, std::string>& meta,
                      const LossScale& l) {
  if (!l.enabled) return;
  meta["grad_scaler.scale"] = num(l.scale);
  meta["grad_scaler.growth_factor"] = num(l.growth_factor);
  meta["grad_scaler.backoff_factor"] = num(l.backoff_factor);
  meta["grad_scaler.growth_interval"] = std::to_string(l.growth_interval);
  meta["grad_scaler._growth_tracker"] = std::to_string(l.growth_tracker);
}

void save_optimizer(const ModelRef& m,
                    OptimState& o,
                    bool stream,
                    SaveParts& out) {
  // The workers' step and hyperparameters, and which states they hold.
  OptimState layout;
  OptimState* held = &o;
  if (stream && o.newer_on) {
    o.newer_on->fetch_layout(o, layout);
    held = &layout;
  } else {
    sync(o);
    stream = false;
  }
  const OptimState& h = *held;
  auto& meta = out.metadata;
  meta["optimizer"] = optim_name(o.kind);
  meta["step"] = std::to_string(h.step);
  write_loss_scale(meta, h.loss_scale);
  write_hypers(meta, "", o.kind, h);
  for (size_t k = 0; k < h.groups.size(); ++k) {
    const ParamGroup& g = h.groups[k];
    const std::string key = "group" + std::to_string(k) + ".";
    meta[key + "name"] = g.name;
    std::string paths;
    for (const std::string& p : g.paths)
      paths += (paths.empty() ? "" : " ") + p.substr(o.prefix.size());
    meta[key + "params"] = paths;
    write_hypers(meta, key, o.kind, g.hyper);
  }
  for (const std::string& st : state_names(o.kind))
    for (const std::string& p : m.paths(true)) {
      const std::string path = m.prefix + p;
      auto ps = h.state.find(path);
      if (ps == h.state.end()) continue;
      auto t = ps->second.find(st);
      if (t == ps->second.end() || !t->second.defined()) continue;
      const std::string name = "opt." + st + "." + p;
      if (!stream) {
        out.pieces.push_back(piece_of(name, t->second));
        continue;
      }
      const ops::Tensor& param = m.store->tensors.at(path);
      NewerCopies* workers = o.newer_on;
      OptimState* from = &o;
      out.pieces.push_back(
          {name, param.dtype(), param.shape(), [workers, from, path, st] {
             return workers->fetch_tensor(*from, path, st);
           }});
    }
}

}  // namespace

Value save(BuiltinCall& c) {
  const std::string& path = c.arg(0).s;
  if (c.arg(1).kind != VK::Model) c.fail("ValueError", "save needs a model");
  const auto* m = c.arg(1).as<ModelRef>();
  const bool stream = streams(*m);
  SaveParts parts;
  parts.metadata["format"] = "shapescript";
  parts.metadata["model"] = model_name(*m);
  for (const std::string& p : m->paths(false)) {
    if (!stream) {
      parts.pieces.push_back(piece_of(p, m->get(p)));
      continue;
    }
    const ops::Tensor& older = m->store->tensors.at(m->prefix + p);
    NewerCopies* workers = m->store->newer_on;
    const ModelStore* from = m->store.get();
    const std::string field = m->prefix + p;
    parts.pieces.push_back(
        {p, older.dtype(), older.shape(), [workers, from, field] {
           return workers->fetch_tensor(*from, field);
         }});
  }
  if (c.has(2)) {
    if (c.arg(2).kind != VK::Optim)
      c.fail("ValueError", "save's opt= is an optimizer");
    auto* o = c.arg(2).as<OptimState>();
    if (o->model != m->store)
      c.fail("ValueError",
             "save: this optimizer was made for another model (save it with "
             "the model it updates)");
    save_optimizer(*m, *o, stream, parts);
  }
  // SS_MEMORY_REPORT: what the save itself added to this process's
  // tensors at its peak (Note [Counting storage bytes]).
  static const bool report = std::getenv("SS_MEMORY_REPORT") != nullptr;
  const int64_t live_before = ops::storage_bytes().live;
  const double rss_before = report ? ops::process_mib("VmRSS") : 0;
  if (report) {
    ops::reset_storage_peak();
    ops::reset_process_peak();
  }
  try {
    write_safetensors_streamed(path, parts.metadata, parts.pieces);
  } catch (const SafetensorsError& e) {
    c.fail("IOError", e.what());
  }
  if (report)
    std::fprintf(
        stderr,
        "ss: memory during save: %lld bytes above the %lld live before "
        "it, VmHWM %.1f MiB above the VmRSS before it; %s\n",
        static_cast<long long>(ops::storage_bytes().peak - live_before),
        static_cast<long long>(live_before),
        ops::process_mib("VmHWM") - rss_before,
        ops::memory_report().c_str());
  return Value::unit();
}

// ---- load ----

double meta_number(BuiltinCall& c,
                   const std::string& file,
                   const std::map<std::string, std::string>& meta,
                   const std::string& key,
                   double dflt) {
  auto it = meta.find(key);
  if (it == meta.end()) return dflt;
  const std::string& s = it->second;
  double v = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size() || !std::isfinite(v))
    c.fail("ValueError",
           "checkpoint " + quote(file) + ": metadata " + key +
               " is not a number: " + quote(s));
  return v;
}

// betas "[b1, b2]" (metadata [key]) into o.beta1 and o.beta2, where the
// metadata has it.
void read_betas(BuiltinCall& c,
                const std::string& file,
                const std::map<std::string, std::string>& meta,
                const std::string& key,
                OptimHyper& o) {
  auto b = meta.find(key);
  if (b == meta.end()) return;
  std::string s = b->second;
  size_t comma = s.find(',');
  bool ok = s.size() >= 2 && s.front() == '[' && s.back() == ']' &&
            comma != std::string::npos;
  if (!ok)
    c.fail("ValueError",
           "checkpoint " + quote(file) +
               ": metadata betas is not [b1, b2]: " + quote(s));
  auto trim = [](std::string x) {
    while (!x.empty() && x.front() == ' ') x.erase(0, 1);
    while (!x.empty() && x.back() == ' ') x.pop_back();
    return x;
  };
  std::map<std::string, std::string> parts;
  parts["beta1"] = trim(s.substr(1, comma - 1));
  parts["beta2"] = trim(s.substr(comma + 1, s.size() - comma - 2));
  o.beta1 = meta_number(c, file, parts, "beta1", 0.9);
  o.beta2 = meta_number(c, file, parts, "beta2", 0.999);
}

// write_hypers's inverse: what the metadata leaves out stays as it is.
void read_hypers(BuiltinCall& c,
                 const std::string& file,
                 const std::map<std::string, std::string>& meta,
                 const std::string& prefix,
                 types::OptimKind kind,
                 OptimHyper& o) {
  for (const std::string& name : optimizer_rule(kind).hypers) {
    if (name == "betas") {
      read_betas(c, file, meta, prefix + "betas", o);
      continue;
    }
    o.each(
        [&](const char* n, double& x) {
          if (name == n) x = meta_number(c, file, meta, prefix + name, x);
        },
        [&](const char* n, bool& b) {
          auto f = meta.find(prefix + name);
          if (name == n && f != meta.end()) b = f->second == "true";
        });
  }
}

// write_loss_scale's inverse: a file without grad_scaler.scale holds an
// optimizer without a scaler.
void read_loss_scale(BuiltinCall& c,
                     const std::string& file,
                     const std::map<std::string, std::string>& meta,
                     LossScale& l) {
  if (!meta.count("grad_scaler.scale")) return;
  const std::string p = "grad_scaler.";
  l.enabled = true;
  l.scale = meta_number(c, file, meta, p + "scale", l.scale);
  l.growth_factor = meta_number(c, file, meta, p + "growth_factor", 2.0);
  l.backoff_factor = meta_number(c, file, meta, p + "backoff_factor", 0.5);
  const double interval =
      meta_number(c, file, meta, p + "growth_interval", 2000);
  const double tracker = meta_number(c, file, meta, p + "_growth_tracker", 0);
  const bool ok = l.scale > 0 && l.growth_factor > 1 && l.backoff_factor > 0 &&
                  l.backoff_factor < 1 && interval >= 1 && interval <= 9e15 &&
                  interval == std::floor(interval) && tracker >= 0 &&
                  tracker < interval && tracker == std::floor(tracker);
  if (!ok)
    c.fail("ValueError",
           "checkpoint " + quote(file) +
               ": metadata grad_scaler.* is not a grad scaler's state "
               "(scale > 0, growth_factor > 1, backoff_factor in (0, 1), "
               "0 <= _growth_tracker < growth_interval)");
  l.growth_interval = static_cast<int64_t>(interval);
  l.growth_tracker = static_cast<int64_t>(tracker);
}

std::shared_ptr<OptimState> load_optim(BuiltinCall& c,
                                       const std::string& file,
                                       const SafetensorsFile& f,
                                       const TensorMap& tensors,
                                       const ModelRef& m,
                                       const std::string& want) {
  const auto& meta = f.metadata;
  auto it = meta.find("optimizer");
  if (it == meta.end())
    c.fail("ValueError",
           "checkpoint " + quote(file) +
               " has no optimizer state (save(path, m, opt) "
               "writes it)");
  if (it->second != want)
    c.fail("ValueError",
           "checkpoint " + quote(file) + " holds " + it->second +
               " state, not " + want);
  auto o = std::make_shared<OptimState>();
  o->kind = types::optim_named(want, /*type=*/false)->kind;
  o->model = m.store;
  o->prefix = m.prefix;
  double step = meta_number(c, file, meta, "step", 0);
  if (step < 0 || step != std::floor(step) || step > 9e15)
    c.fail(
        "ValueError",
        "checkpoint " + quote(file) +
            ": metadata step is not a step count: " + quote(meta.at("step")));
  o->step = static_cast<int64_t>(step);
  read_loss_scale(c, file, meta, o->loss_scale);
  // A hyperparameter the file leaves out takes the optimizer's default.
  static_cast<OptimHyper&>(*o) = optimizer_defaults(o->kind);
  read_hypers(c, file, meta, "", o->kind, *o);
  const std::vector<std::string> paths = param_paths(*o);
  for (size_t k = 0;; ++k) {
    const std::string key = "group" + std::to_string(k) + ".";
    auto name = meta.find(key + "name");
    if (name == meta.end()) break;
    ParamGroup g;
    g.name = name->second;
    auto ps = meta.find(key + "params");
    std::string list = ps == meta.end() ? "" : ps->second;
    for (size_t at = 0; at < list.size();) {
      size_t end = std::min(list.find(' ', at), list.size());
      std::string p = list.substr(at, end - at);
      at = end + 1;
      if (p.empty()) continue;
      if (std::find(paths.begin(), paths.end(), p) == paths.end())
        c.fail("ValueError",
               "checkpoint " + quote(file) + ": param group \"" + g.name +
                   "\" names `" + p + "`, which is not a param of " +
                   model_name(m));
      g.paths.push_back(m.prefix + p);
    }
    g.hyper = *o;
    read_hypers(c, file, meta, key, o->kind, g.hyper);
    o->groups.push_back(std::move(g));
  }
  // State tensors, by the param they belong to, checked like the params.
  std::set<std::string> used;
  std::string mname = model_name(m);
  for (const std::string& p : m.paths(true)) {
    ops::Tensor param = m.get(p);
    std::map<std::string, ops::Tensor> st;
    for (const std::string& s : state_names(o->kind)) {
      std::string key = "opt." + s + "." + p;
      auto t = tensors.find(key);
      if (t == tensors.end()) continue;
      used.insert(key);
      st[s] = fit(c,
                  file,
                  key,
                  t->second,
                  param,
                  "the " + s + " of " + mname + "." + p)
                  .clone();
    }
    const std::vector<std::string>& names = state_names(o->kind);
    const bool moments =
        std::find(names.begin(), names.end(), "exp_avg_sq") != names.end();
    if (moments && st.count("exp_avg") != st.count("exp_avg_sq"))
      c.fail("ValueError",
             "checkpoint " + quote(file) + " has " +
                 (st.count("exp_avg") ? "exp_avg" : "exp_avg_sq") +
                 " but not " +
                 (st.count("exp_avg") ? "exp_avg_sq" : "exp_avg") + " for `" +
                 p + "`");
    if (!st.empty()) o->state[m.prefix + p] = std::move(st);
  }
  std::vector<std::string> unknown;
  for (const auto& [name, t] : tensors)
    if (name.rfind("opt.", 0) == 0 && !used.count(name))
      unknown.push_back(name);
  if (!unknown.empty()) {
    std::string list;
    for (size_t i = 0; i < unknown.size() && i < 10; ++i)
      list += (i ? ", `" : "`") + unknown[i] + "`";
    if (unknown.size() > 10)
      list += " and " + std::to_string(unknown.size() - 10) + " more";
    c.fail("ValueError",
           "checkpoint " + quote(file) + " has optimizer state " + list +
               " that " + want + " over " + mname + " has no place for");
  }
  return o;
}

Value load(BuiltinCall& c) {
  const std::string& path = c.arg(0).s;
  types::Type mt;
  if (c.arg(1).kind == VK::Type && c.arg(1).type) {
    mt = *c.arg(1).type;
  } else {
    // The checker's result: Mlp, or (Mlp, AdamW[Mlp]).
    const types::Type& r = c.result_type();
    mt = r.kind == TK::Tuple && !r.elems.empty() ? r.elems[0] : r;
  }
  if (mt.kind != TK::Model || !mt.model)
    c.fail("ValueError", "load needs a model type");
  std::string want;
  if (c.has(2)) {
    const Value& fn = c.arg(2);
    if (fn.kind != VK::Fn || !types::optim_named(fn.s, /*type=*/false))
      c.fail("ValueError",
             "load's third argument names an optimizer (adamw, sgd, ...)");
    want = fn.s;
  }
  SafetensorsFile f = read(c, path);
  TensorMap tensors = by_name(f);
  // A fresh model gives the layout (paths, shapes, dtypes); every tensor is
  // then replaced from the file.
  Value mv = init_model(c.in, mt, 0, c.span);
  auto* m = mv.as<ModelRef>();
  auto fitted = model_tensors(c, path, tensors, *m);
  std::shared_ptr<OptimState> o;
  if (!want.empty()) o = load_optim(c, path, f, tensors, *m, want);
  for (auto& [p, t] : fitted) m->set(p, t);
  if (!o) return mv;
  return Value::tuple({mv, Value::object(VK::Optim, o)});
}

Value load_into(BuiltinCall& c) {
  if (c.arg(0).kind != VK::Model)
    c.fail("ValueError", "load_into needs a model");
  auto* m = c.arg(0).as<ModelRef>();
  const std::string& path = c.arg(1).s;
  SafetensorsFile f = read(c, path);
  TensorMap tensors = by_name(f);
  // Every tensor is checked before any is replaced: a failed load_into
  // leaves the model as it was.
  auto fitted = model_tensors(c, path, tensors, *m);
  for (auto& [p, t] : fitted) m->set(p, t);
  return Value::unit();
}

}  // namespace

std::vector<RuntimeEntry> lib_checkpoint() {
  return {{"save", save}, {"load", load}, {"load_into", load_into}};
}

}  // namespace ss::builtins
