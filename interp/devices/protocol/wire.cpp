#include "interp/devices/protocol/wire.h"

#include "interp/data/batches.h"

namespace ss::devices::protocol {

// The evaluator's values and objects, which this code sends and runs.
using namespace ss::eval;
using namespace ss::data;

using VK = Value::Kind;

namespace {

enum Tag : uint8_t {
  kUnit,
  kInt,
  kFloat,
  kBool,
  kStr,
  kTensor,
  kTuple,
  kList,
  kFn,
  kRecord,
  kModel,
  kGrads,
  kOptim,
  kMode,
  kLogs,
  kBatchRef
};

void write_axis(Writer& w, const types::Axis& a) {
  w.u8(static_cast<uint8_t>(a.kind));
  w.str(a.name);
  w.u32(a.var);
  w.i64(a.size);
  w.u32(static_cast<uint32_t>(a.items.size()));
  for (const types::Axis& x : a.items) write_axis(w, x);
  w.u32(static_cast<uint32_t>(a.split.size()));
  for (size_t i = 0; i < a.split.size(); ++i) {
    w.str(a.split.axes[i]);
    w.i64(a.split.sizes[i]);
  }
  w.str(a.label);
}

types::Axis read_axis(Reader& r) {
  types::Axis a;
  a.kind = static_cast<types::Axis::Kind>(r.u8());
  a.name = r.str();
  a.var = r.u32();
  a.size = r.i64();
  for (uint32_t n = r.u32(), i = 0; i < n; ++i) a.items.push_back(read_axis(r));
  for (uint32_t n = r.u32(), i = 0; i < n; ++i) {
    std::string axis = r.str();
    a.split.push_back(std::move(axis), r.i64());
  }
  a.label = r.str();
  return a;
}

void write_axes(Writer& w, const std::vector<types::Axis>& v) {
  w.u32(static_cast<uint32_t>(v.size()));
  for (const types::Axis& a : v) write_axis(w, a);
}

std::vector<types::Axis> read_axes(Reader& r) {
  std::vector<types::Axis> v;
  for (uint32_t n = r.u32(), i = 0; i < n; ++i) v.push_back(read_axis(r));
  return v;
}

const types::ModelInfo* find_model(const check::Program& p,
                                   const std::string& name) {
  const types::ModelInfo* m = p.model(name);
  if (!m) throw WireError("the workers' program has no model `" + name + "`");
  return m;
}

}  // namespace

namespace {

// Reader::place_on's device: one per process (a worker computes on one).
ops::Device& placed_on() {
  static ops::Device device;
  return device;
}

}  // namespace

void Writer::tensor(const ops::Tensor& t) {
  u8(static_cast<uint8_t>(t.dtype()));
  u32(static_cast<uint32_t>(t.rank()));
  for (int64_t d : t.shape()) i64(d);
  u64(t.nbytes());
  if (!t.nbytes()) return;
  if (t.device().kind == ops::Device::Kind::Cpu) {
    raw(t.raw(), t.nbytes());
  } else {
    const ops::Tensor host = t.to(ops::Device{});  // a GPU worker's value
    raw(host.raw(), host.nbytes());
  }
}

void Reader::place_on(ops::Device device) {
  placed_on() = device;
}

ops::Tensor Reader::tensor() {
  return host_tensor().to(placed_on());
}

ops::Tensor Reader::host_tensor() {
  auto dt = static_cast<types::DType>(u8());
  ops::Shape shape(u32());
  for (int64_t& d : shape) d = i64();
  ops::Tensor t = ops::Tensor::empty(shape, dt);
  uint64_t n = u64();
  if (n != t.nbytes()) throw WireError("a tensor's bytes don't fit its shape");
  if (n) std::memcpy(t.raw(), take(n), n);
  return t;
}

void Codec::write_tensors(Writer& w, const ModelStore& s) {
  w.u32(static_cast<uint32_t>(s.order.size()));
  for (const std::string& p : s.order) {
    w.str(p);
    auto b = s.is_buffer.find(p);
    w.u8(b != s.is_buffer.end() && b->second);
    w.tensor(s.tensors.at(p));
  }
}

void Codec::read_tensors(Reader& r, ModelStore& s) {
  s.order.clear();
  s.tensors.clear();
  s.is_buffer.clear();
  for (uint32_t n = r.u32(), i = 0; i < n; ++i) {
    std::string p = r.str();
    s.is_buffer[p] = r.u8() != 0;
    s.tensors[p] = r.tensor();
    s.order.push_back(p);
  }
}

// Note [Optimizer hyperparameters]
// The controller sends an optimizer whole once, then by id; set_lr in the
// controller changes its lr after that. So a handle by id carries the
// hyperparameters whenever the controller changed them since the last
// send (OptimState::hyper_newer), and the workers take them before the
// call runs: a warm-up schedule set from main reaches every step. The other
// way, set_lr in a worker fn changes the workers' lr, so a fetch (reading
// opt.lr or opt.step, save) brings the hyperparameters back with the step
// and state, unless the controller's are newer (changed here after the
// call that the fetch follows was sent, not yet sent themselves).
namespace {

void write_numbers(Writer& w, const OptimHyper& o) {
  OptimHyper h = o;
  h.each([&](const char*, double& x) { w.f64(x); },
         [&](const char*, bool& b) { w.u8(b); });
}

void read_numbers(Reader& r, OptimHyper& o) {
  o.each([&](const char*, double& x) { x = r.f64(); },
         [&](const char*, bool& b) { b = r.u8() != 0; });
}

// The default group's hyperparameters, then each other group's.
void write_hyper(Writer& w, const OptimSettings& o) {
  write_numbers(w, o);
  w.u32(static_cast<uint32_t>(o.groups.size()));
  for (const ParamGroup& g : o.groups) {
    w.str(g.name);
    w.u32(static_cast<uint32_t>(g.paths.size()));
    for (const std::string& p : g.paths) w.str(p);
    write_numbers(w, g.hyper);
  }
}

void read_hyper(Reader& r, OptimSettings& o) {
  read_numbers(r, o);
  o.groups.clear();
  for (uint32_t n = r.u32(), i = 0; i < n; ++i) {
    ParamGroup g;
    g.name = r.str();
    for (uint32_t m = r.u32(), j = 0; j < m; ++j) g.paths.push_back(r.str());
    read_numbers(r, g.hyper);
    o.groups.push_back(std::move(g));
  }
}

// A grad scaler's settings and state (Note [Loss scaling] in
// interp/builtins/grad_scaler.cpp), which change on the workers with the
// step.
void write_loss_scale(Writer& w, const LossScale& l) {
  w.u8(l.enabled);
  w.f64(l.scale);
  w.f64(l.growth_factor);
  w.f64(l.backoff_factor);
  w.i64(l.growth_interval);
  w.i64(l.growth_tracker);
  w.i64(l.unscaled);
  w.u8(l.found_inf);
}

void read_loss_scale(Reader& r, LossScale& l) {
  l.enabled = r.u8() != 0;
  l.scale = r.f64();
  l.growth_factor = r.f64();
  l.backoff_factor = r.f64();
  l.growth_interval = r.i64();
  l.growth_tracker = r.i64();
  l.unscaled = r.i64();
  l.found_inf = r.u8() != 0;
}

}  // namespace

void Codec::write_optim_state(Writer& w, const OptimState& o, bool tensors) {
  write_hyper(w, o);
  w.i64(o.step);
  write_loss_scale(w, o.loss_scale);
  w.u32(static_cast<uint32_t>(o.state.size()));
  for (const auto& [path, st] : o.state) {
    w.str(path);
    w.u32(static_cast<uint32_t>(st.size()));
    for (const auto& [name, t] : st) {
      w.str(name);
      w.u8(t.defined());
      if (t.defined() && tensors) w.tensor(t);
    }
  }
}

void Codec::read_optim_state(Reader& r, OptimState& o, bool tensors) {
  if (o.hyper_newer) {
    OptimSettings theirs;
    read_hyper(r, theirs);
  } else {
    read_hyper(r, o);
  }
  o.step = r.i64();
  read_loss_scale(r, o.loss_scale);
  o.state.clear();
  for (uint32_t n = r.u32(), i = 0; i < n; ++i) {
    auto& st = o.state[r.str()];
    for (uint32_t m = r.u32(), j = 0; j < m; ++j) {
      std::string name = r.str();
      const bool held = r.u8() != 0;
      st[name] = !held     ? ops::Tensor()
                 : tensors ? r.tensor()
                           : ops::Tensor::scalar(0);
    }
  }
}

std::shared_ptr<ModelStore> Codec::model(uint64_t id) const {
  auto it = w_models_.find(id);
  return it == w_models_.end() ? nullptr : it->second;
}

std::shared_ptr<OptimState> Codec::optim(uint64_t id) const {
  auto it = w_optims_.find(id);
  return it == w_optims_.end() ? nullptr : it->second;
}

void Codec::each_sent(const std::function<void(ModelStore&)>& model,
                      const std::function<void(OptimState&)>& optim) const {
  for (const auto& [id, weak] : c_models_)
    if (auto s = weak.lock()) model(*s);
  for (const auto& [id, weak] : c_optims_)
    if (auto o = weak.lock()) optim(*o);
}

// A store: 0 and its id (the other side has it), or 1, its id (0: not
// kept), its model and args and its tensors.
void Codec::write_store(Writer& w, const std::shared_ptr<ModelStore>& s) {
  uint64_t id = 0;
  if (side_ == Side::Controller) {
    sent_models.push_back(s);
    if (s->remote_id) {
      w.u8(0);
      w.u64(s->remote_id);
      return;
    }
    id = s->remote_id = next_id_++;
    c_models_[id] = s;
  } else {
    auto it = w_model_ids_.find(s.get());
    if (it != w_model_ids_.end()) {
      w.u8(0);
      w.u64(it->second);
      return;
    }
  }
  w.u8(1);
  w.u64(id);
  w.str(s->info ? s->info->name : "");
  write_axes(w, s->args);
  write_tensors(w, *s);
}

std::shared_ptr<ModelStore> Codec::read_store(Reader& r) {
  if (r.u8() == 0) {
    uint64_t id = r.u64();
    if (side_ == Side::Worker) {
      auto s = model(id);
      if (!s)
        throw WireError("this model is no longer on the devices (id " +
                        std::to_string(id) + ")");
      return s;
    }
    auto it = c_models_.find(id);
    std::shared_ptr<ModelStore> s =
        it == c_models_.end() ? nullptr : it->second.lock();
    if (!s) throw WireError("the workers named an unknown model");
    return s;
  }
  uint64_t id = r.u64();
  auto s = std::make_shared<ModelStore>();
  std::string name = r.str();
  s->info = name.empty() ? nullptr : find_model(*prog_, name);
  s->args = read_axes(r);
  read_tensors(r, *s);
  if (side_ == Side::Worker && model_arrived) model_arrived(*s);
  if (side_ == Side::Worker && id) {
    if (auto old = model(id)) w_model_ids_.erase(old.get());
    w_models_[id] = s;
    w_model_ids_[s.get()] = id;
  }
  return s;
}

void Codec::write_handle(Writer& w, const ModelRef& m) {
  write_store(w, m.store);
  w.str(m.prefix);
  w.u32(static_cast<uint32_t>(m.index.size()));
  for (int64_t i : m.index) w.i64(i);
  w.str(m.type.model ? m.type.model->name : "");
  write_axes(w, m.type.model_args);
  write_axes(w, m.type.stack);
  w.u8(static_cast<uint8_t>(m.type.model_dtype));
}

Value Codec::read_handle(Reader& r, Value::Kind kind) {
  auto ref = std::make_shared<ModelRef>();
  ref->store = read_store(r);
  ref->prefix = r.str();
  for (uint32_t n = r.u32(), i = 0; i < n; ++i) ref->index.push_back(r.i64());
  ref->type.kind =
      kind == VK::Grads ? types::Type::Kind::Grads : types::Type::Kind::Model;
  std::string name = r.str();
  ref->type.model = name.empty() ? nullptr : find_model(*prog_, name);
  ref->type.model_args = read_axes(r);
  ref->type.stack = read_axes(r);
  const uint8_t dt = r.u8();
  if (dt > static_cast<uint8_t>(types::DType::Bool))
    throw WireError("a model's dtype is not one of ss's");
  ref->type.model_dtype = static_cast<types::DType>(dt);
  return Value::object(kind, ref);
}

// An optimizer: its model's store, then 0 and its id, or 1, its id and the
// whole state.
void Codec::write_optim(Writer& w, const std::shared_ptr<OptimState>& o) {
  write_store(w, o->model);
  uint64_t id = 0;
  if (side_ == Side::Controller) {
    sent_optims.push_back(o);
    if (o->remote_id) {
      w.u8(0);
      w.u64(o->remote_id);
      w.u8(o->hyper_newer);
      if (o->hyper_newer) write_hyper(w, *o);
      o->hyper_newer = false;
      return;
    }
    id = o->remote_id = next_id_++;
    c_optims_[id] = o;
  } else {
    auto it = w_optim_ids_.find(o.get());
    if (it != w_optim_ids_.end()) {
      w.u8(0);
      w.u64(it->second);
      w.u8(0);  // the controller fetches them with the state
      return;
    }
  }
  w.u8(1);
  w.u64(id);
  w.u8(static_cast<uint8_t>(o->kind));
  w.str(o->prefix);
  write_optim_state(w, *o);  // the hyperparameters included
  o->hyper_newer = false;
}

std::shared_ptr<OptimState> Codec::read_optim(Reader& r) {
  std::shared_ptr<ModelStore> model = read_store(r);
  if (r.u8() == 0) {
    uint64_t id = r.u64();
    std::shared_ptr<OptimState> o;
    if (side_ == Side::Worker) {
      o = optim(id);
    } else {
      auto it = c_optims_.find(id);
      if (it != c_optims_.end()) o = it->second.lock();
    }
    if (!o) throw WireError("this optimizer state is no longer on the devices");
    o->model = model;               // the model may have been sent again
    if (r.u8()) read_hyper(r, *o);  // set_lr in the controller
    return o;
  }
  uint64_t id = r.u64();
  auto o = std::make_shared<OptimState>();
  o->model = model;
  const uint8_t kind = r.u8();
  if (kind >= types::optim_names().size())
    throw WireError("an optimizer of unknown kind " + std::to_string(kind));
  o->kind = static_cast<types::OptimKind>(kind);
  o->prefix = r.str();
  read_optim_state(r, *o);
  if (side_ == Side::Worker && optim_arrived) optim_arrived(*o);
  if (side_ == Side::Worker && id) {
    if (auto old = optim(id)) w_optim_ids_.erase(old.get());
    w_optims_[id] = o;
    w_optim_ids_[o.get()] = id;
  }
  return o;
}

void Codec::write(Writer& w, const Value& v) {
  switch (v.kind) {
    case VK::Unit:
      w.u8(kUnit);
      return;
    case VK::Int:
      w.u8(kInt);
      w.i64(v.i);
      return;
    case VK::Float:
      w.u8(kFloat);
      w.f64(v.f);
      return;
    case VK::Bool:
      w.u8(kBool);
      w.u8(v.b);
      return;
    case VK::Str:
      w.u8(kStr);
      w.str(v.s);
      return;
    case VK::Tensor:
      w.u8(kTensor);
      w.tensor(v.t);
      return;
    case VK::Tuple:
    case VK::List:
      w.u8(v.kind == VK::Tuple ? kTuple : kList);
      w.u32(static_cast<uint32_t>(v.items ? v.items->size() : 0));
      if (v.items)
        for (const Value& x : *v.items) write(w, x);
      return;
    case VK::Fn:
      w.u8(kFn);
      w.str(v.s);
      w.u8(v.b);
      return;
    case VK::Record: {
      auto* r = v.as<RecordValue>();
      if (const LazyBatch* lazy = LazyBatch::of(*r)) {
        w.u8(kBatchRef);
        write_batch_ref(w, *lazy);
        return;
      }
      w.u8(kRecord);
      w.str(r->info ? r->info->name : "");
      w.u8(r->batch);
      w.u32(static_cast<uint32_t>(r->fields.size()));
      for (const auto& [name, t] : r->fields) {
        w.str(name);
        w.tensor(t);
      }
      return;
    }
    case VK::Model:
    case VK::Grads:
      w.u8(v.kind == VK::Model ? kModel : kGrads);
      write_handle(w, *v.as<ModelRef>());
      return;
    case VK::Optim:
      w.u8(kOptim);
      write_optim(w, std::static_pointer_cast<OptimState>(v.obj));
      return;
    case VK::Mode: {
      auto* m = v.as<ModeState>();
      w.u8(kMode);
      w.u8(m->train);
      w.u64(m->seed);
      w.u64(m->calls);
      w.u64(m->draws);
      w.i64(v.i);
      w.u8(v.b);
      return;
    }
    case VK::Logs: {
      auto* l = v.as<LogsValue>();
      w.u8(kLogs);
      w.u32(static_cast<uint32_t>(l->fields.size()));
      for (const auto& [name, x] : l->fields) {
        w.str(name);
        write(w, x);
      }
      return;
    }
    default:
      break;
  }
  throw WireError(
      "this value can't be sent to the workers (a dataset, batches, a sink, "
      "a type or an axis)");
}

Value Codec::read(Reader& r) {
  uint8_t tag = r.u8();
  switch (tag) {
    case kUnit:
      return Value::unit();
    case kInt:
      return Value::integer(r.i64());
    case kFloat:
      return Value::floating(r.f64());
    case kBool:
      return Value::boolean(r.u8() != 0);
    case kStr:
      return Value::string(r.str());
    case kTensor:
      return Value::tensor(r.tensor());
    case kTuple:
    case kList: {
      std::vector<Value> items;
      for (uint32_t n = r.u32(), i = 0; i < n; ++i) items.push_back(read(r));
      return tag == kTuple ? Value::tuple(std::move(items))
                           : Value::list(std::move(items));
    }
    case kFn: {
      std::string name = r.str();
      bool remat = r.u8() != 0;
      return Value::fn(std::move(name), remat);
    }
    case kRecord: {
      auto rec = std::make_shared<RecordValue>();
      std::string name = r.str();
      rec->info = name.empty() ? nullptr : prog_->record(name);
      if (!name.empty() && !rec->info)
        throw WireError("the workers' program has no record `" + name + "`");
      rec->batch = r.u8() != 0;
      for (uint32_t n = r.u32(), i = 0; i < n; ++i) {
        std::string f = r.str();
        rec->fields[f] = r.tensor();
      }
      return Value::object(VK::Record, rec);
    }
    case kBatchRef:
      return read_batch_ref(r);
    case kModel:
      return read_handle(r, VK::Model);
    case kGrads:
      return read_handle(r, VK::Grads);
    case kOptim:
      return Value::object(VK::Optim, read_optim(r));
    case kMode: {
      auto m = std::make_shared<ModeState>();
      m->train = r.u8() != 0;
      m->seed = r.u64();
      m->calls = r.u64();
      m->draws = r.u64();
      Value v = Value::object(VK::Mode, m);
      v.i = r.i64();
      v.b = r.u8() != 0;
      return v;
    }
    case kLogs: {
      auto l = std::make_shared<LogsValue>();
      for (uint32_t n = r.u32(), i = 0; i < n; ++i) {
        std::string name = r.str();
        Value x = read(r);
        l->fields.emplace_back(std::move(name), std::move(x));
      }
      return Value::object(VK::Logs, l);
    }
    default:
      break;
  }
  throw WireError("a message with an unknown value tag");
}

}  // namespace ss::devices::protocol
