// Note [Recorded steps]
// devices.md item 11: on a GPU, a call that enters device work (a worker
// fn called from controller code: train_step from run's loop) is recorded
// as the device's work after its first calls, and replayed: one launch of
// a CUDA graph instead of a launch per kernel, and none of the walk's host
// work. A replay runs the recorded kernels on the recorded addresses with
// the recorded arguments, so it is the call only when the call would do
// on the host exactly what it did when it was recorded. What makes that so:
//   * The key. A call is replayed only for arguments whose host signature
//     (Signature below) is the recorded one: every host number, string
//     and mode, each tensor's dtype, shape and device, each model's and
//     optimizer's identity and layout. Worker fns read no host number of
//     a tensor (the checker puts such a fn in the controller), so the walk
//     is a function of the key, but for two host values that change every
//     step: an optimizer's step count and learning rate. Only update reads
//     them, and it replays its host half (below); a fn that reads opt.step
//     or opt.lr itself is refused (eval_expr.cpp).
//   * The probe. The first call of a key runs as usual, watched: a copy to
//     the host, a builtin that refuses (update with a grad scaler, an
//     optimizer without a fused kernel), a change to the arguments' host
//     state that a replay would not make (a Train mode's draw count), or a
//     result that holds a model: the key is never recorded, and
//     SHAPESCRIPT_RECORD_STEPS=verbose says why. The second call of a
//     clean key is recorded; a recording runs nothing, so its step is
//     replayed at once for that call, and for every later call.
//   * Inputs. A value argument's tensors (a batch) are copied into buffers
//     the recording holds, before each replay. A model's and optimizer's
//     tensors are used where they are: the step updates them in place, as
//     the fused optimizers do, and a replay checks that each is the same
//     bytes, held as often as when recorded (an update in place must not
//     change a value someone else holds: update copies such a param, and
//     so runs as usual then). One the call replaced (a batch_norm buffer,
//     a param update copied because its tape still held it) is copied into
//     the recorded bytes first, and the host gets the step's new tensor,
//     which no other value may hold; a call that replaces a tensor another
//     value held before it is not recorded (a replay would write it). The
//     recording adopts these bytes, so no other tensor is given their address
//     while it lives.
//   * Host effects. update's host half (the step count, the constants of
//     the fused kernels, which depend on it and on the learning rate) is
//     run again before each replay, its backend calls patching the
//     recorded kernels' arguments (ops::RecordedStep::replay).
//   * Outputs. The result's tensors are copied out of the step's bytes, so
//     a value the program keeps is never overwritten by the next replay.
// Anything else runs as usual: a key seen first, a guard that fails, more
// than kMaxKeys signatures of one fn (a dropout seed that changes every
// call) or kMaxRecorded steps of it.
// On several GPUs each worker records its share of the call the same way
// (lower::RankContext::call: the key is its own arguments, its shares of
// the batch), with a rank's two hooks (RankHooks): the lanes' collectives
// joined before a recording ends, and the host waiting for each replay as
// for a collective, within its timeout (Note [A recorded step's
// collectives] in dist/comm/nccl/nccl_comm.cpp). The ranks make the same
// choices, as each runs the same program on arguments of the same
// signature; and a rank that ran a call as usual where another replayed
// it would still make the same collectives, lane by lane, in the same
// order.

#include "interp/devices/recorded_calls.h"

#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>

#include "interp/eval/interpreter.h"
#include "interp/eval/objects.h"
#include "interp/eval/step_recording.h"
#include "ops/backend/recorded_step.h"

namespace ss::devices {

using eval::Value;
using VK = eval::Value::Kind;

namespace {

constexpr int kMaxKeys = 8;      // argument signatures tried per fn
constexpr int kMaxRecorded = 4;  // steps kept per fn (each holds its bytes)

constexpr const char* kChangedHostState =
    "the call changed its arguments' host state, which a replay would not "
    "(an optimizer's first step makes its state, and a later call may be "
    "recorded; a Train mode counts its draws)";

// The host signature of a call's arguments (Note [Recorded steps]: the
// key), and why they cannot be recorded at all.
class Signature {
 public:
  void add(const Value& v) {
    pod(v.kind);
    switch (v.kind) {
      case VK::Unit:
        return;
      case VK::Int:
      case VK::Bool:
        pod(v.i);
        pod(v.b);
        return;
      case VK::Float:
        pod(v.f);
        return;
      case VK::Str:
        str(v.s);
        return;
      case VK::Tensor:
        tensor(v.t);
        return;
      case VK::Tuple:
      case VK::List:
        pod(v.items->size());
        for (const Value& x : *v.items) add(x);
        return;
      case VK::Record: {
        auto* r = v.as<eval::RecordValue>();
        if (r->lazy) refuse("it takes a batch that is not loaded yet");
        pod(r->info);
        pod(r->batch);
        pod(r->share_start);
        pod(r->batch_rows);
        for (const auto& [name, t] : r->fields) {
          str(name);
          tensor(t);
        }
        return;
      }
      case VK::Model:
      case VK::Grads: {
        auto* m = v.as<eval::ModelRef>();
        if (!m->index.empty())
          refuse("it takes a selected block of a stacked model");
        if (m->store->newer_on)
          refuse("a newer copy of its model is elsewhere");
        pod(m->store.get());
        str(m->prefix);
        for (const auto& [path, t] : m->store->tensors) {
          str(path);
          tensor(t);
        }
        return;
      }
      case VK::Optim: {
        auto* o = v.as<eval::OptimState>();
        if (o->newer_on) refuse("a newer copy of its optimizer is elsewhere");
        pod(o);
        pod(o->kind);
        pod(o->model.get());
        str(o->prefix);
        hyper(*o);
        for (const eval::ParamGroup& g : o->groups) {
          str(g.name);
          for (const std::string& p : g.paths) str(p);
          hyper(g.hyper);
        }
        const eval::LossScale& s = o->loss_scale;
        pod(s.enabled);
        pod(s.scale);
        pod(s.growth_tracker);
        pod(s.unscaled);
        pod(s.found_inf);
        for (const auto& [key, st] : o->state) {
          str(key);
          for (const auto& [name, t] : st) {
            str(name);
            tensor(t);
          }
        }
        return;
      }
      case VK::Mode: {
        auto* m = v.as<eval::ModeState>();
        pod(m->train);
        pod(m->seed);
        pod(m->calls);
        pod(m->draws);
        return;
      }
      default:
        refuse("it takes a value of a kind a step cannot be recorded with");
        return;
    }
  }

  std::string bytes, why;

 private:
  void put(const void* p, size_t n) {
    bytes.append(static_cast<const char*>(p), n);
  }
  template <class T>
  void pod(const T& x) {
    put(&x, sizeof x);
  }
  void str(const std::string& s) {
    pod(s.size());
    bytes += s;
  }
  void tensor(const ops::Tensor& t) {
    pod(t.defined());
    if (!t.defined()) return;
    if (t.autograd())
      refuse("an argument is being differentiated through the call");
    pod(t.dtype());
    pod(t.device().kind);
    pod(t.device().index);
    pod(t.rank());
    for (int64_t d : t.shape()) pod(d);
  }
  // Every hyperparameter but the learning rate, which update reads when
  // it replays (Note [Recorded steps]).
  void hyper(eval::OptimHyper h) {
    h.each(
        [&](const auto& name, double& x) {
          if (std::string(name) != "lr") pod(x);
        },
        [&](const auto&, bool& b) { pod(b); });
  }
  void refuse(std::string w) {
    if (why.empty()) why = std::move(w);
  }
};

Signature signature_of(const std::vector<Value>& args) {
  Signature s;
  for (const Value& a : args) s.add(a);
  return s;
}

// A value argument's tensors (not a model's or an optimizer's), in order,
// each given to [f], which may replace it: the value as [f] leaves it.
Value map_values(const Value& v,
                 const std::function<ops::Tensor(const ops::Tensor&)>& f) {
  Value out = v;
  switch (v.kind) {
    case VK::Tensor:
      out.t = f(v.t);
      return out;
    case VK::Tuple:
    case VK::List: {
      auto items = std::make_shared<std::vector<Value>>();
      for (const Value& x : *v.items) items->push_back(map_values(x, f));
      out.items = items;
      return out;
    }
    case VK::Record: {
      auto r = std::make_shared<eval::RecordValue>(*v.as<eval::RecordValue>());
      for (auto& [name, t] : r->fields) t = f(t);
      out.obj = r;
      return out;
    }
    case VK::Logs: {
      auto l = std::make_shared<eval::LogsValue>(*v.as<eval::LogsValue>());
      for (auto& [name, x] : l->fields) x = map_values(x, f);
      out.obj = l;
      return out;
    }
    default:
      return v;
  }
}

// Why a result cannot be handed out of a step as copies ("" when it can).
std::string result_refusal(const Value& v) {
  switch (v.kind) {
    case VK::Unit:
    case VK::Int:
    case VK::Float:
    case VK::Bool:
    case VK::Str:
    case VK::Tensor:
    case VK::Record:
      return "";
    case VK::Tuple:
    case VK::List:
      for (const Value& x : *v.items)
        if (std::string w = result_refusal(x); !w.empty()) return w;
      return "";
    case VK::Logs:
      for (const auto& [name, x] : v.as<eval::LogsValue>()->fields)
        if (std::string w = result_refusal(x); !w.empty()) return w;
      return "";
    default:
      return "it returns a model, optimizer or other object";
  }
}

// The tensors of the arguments' models and optimizers, where they are held
// (their stores' maps), in a fixed order.
std::vector<ops::Tensor*> object_leaves(std::vector<Value>& args) {
  std::vector<ops::Tensor*> out;
  std::vector<const void*> seen;
  auto once = [&](const void* o) {
    for (const void* s : seen)
      if (s == o) return false;
    seen.push_back(o);
    return true;
  };
  for (Value& a : args) {
    if (a.kind == VK::Model || a.kind == VK::Grads) {
      eval::ModelStore* s = a.as<eval::ModelRef>()->store.get();
      if (once(s))
        for (auto& [path, t] : s->tensors) out.push_back(&t);
    } else if (a.kind == VK::Optim) {
      auto* o = a.as<eval::OptimState>();
      if (once(o))
        for (auto& [key, st] : o->state)
          for (auto& [name, t] : st) out.push_back(&t);
    }
  }
  return out;
}

// The probe's or recording's StepRecording (interp/eval/step_recording.h).
class CallRecording final : public eval::StepRecording {
 public:
  explicit CallRecording(bool keeps_effects) : keeps_effects_(keeps_effects) {}
  void refuse(std::string why) override {
    if (why_.empty()) why_ = std::move(why);
  }
  void on_replay(std::function<void()> effect) override {
    if (keeps_effects_) effects_.push_back(std::move(effect));
  }
  bool keeps_effects_;
  std::string why_;
  std::vector<std::function<void()>> effects_;
};

}  // namespace

struct RecordedCalls::Entry {
  enum class State { Probed, Recorded, Never };
  State state = State::Probed;
  std::unique_ptr<ops::RecordedStep> step;
  /// Value arguments' tensors: the buffers the step reads them from.
  std::vector<ops::Tensor> inputs;
  /// Models' and optimizers' tensors, by object_leaves' order: the bytes
  /// the step reads, how many held them, and, for one the call replaced,
  /// the step's new tensor.
  struct Leaf {
    void* bytes = nullptr;
    long uses = 0;
    ops::Tensor replaced_by;
    /// Whether a value beside its model or optimizer held it before the
    /// recorded call (a param kept in a `let`).
    bool shared_before = false;
  };
  std::vector<Leaf> leaves;
  std::vector<std::function<void()>> effects;
  Value result;  // the recorded call's, its tensors the step's outputs
  std::vector<std::shared_ptr<eval::Object>> keep;  // the key's identities
  uint64_t replays = 0;
};

RecordedCalls::RecordedCalls(ops::Device device, RankHooks hooks)
    : device_(device), hooks_(std::move(hooks)) {
  const char* e = std::getenv("SHAPESCRIPT_RECORD_STEPS");
  const std::string mode = e ? e : "";
  on_ = device.kind != ops::Device::Kind::Cpu && mode != "0" &&
        ops::step_recorder(device.kind) != nullptr;
  verbose_ = mode == "verbose";
}

RecordedCalls::~RecordedCalls() {
  if (!verbose_) return;
  for (const auto& [fn, keys] : entries_)
    for (const auto& [key, e] : keys)
      if (e->state == Entry::State::Recorded)
        std::cerr << ("recorded steps: `" + fn->name + "` replayed " +
                      std::to_string(e->replays) + " times\n");
}

void RecordedCalls::say(const check::FnInfo& fn, const std::string& what) {
  // One write a line: a worker's lines reach the controller's stderr
  // whole, not cut into another worker's.
  if (verbose_)
    std::cerr << ("recorded steps: `" + fn.name + "`: " + what + "\n");
}

Value RecordedCalls::run(eval::Interpreter& in,
                         const check::FnInfo& fn,
                         std::vector<Value> args,
                         diag::Span site) {
  inside_ = true;
  struct Out {
    bool& b;
    ~Out() { b = false; }
  } out{inside_};
  return in.call(fn, std::move(args), site);
}

std::optional<Value> RecordedCalls::call(eval::Interpreter& in,
                                         const check::FnInfo& fn,
                                         std::vector<Value>& args,
                                         diag::Span site) {
  if (!on_ || inside_ || !eval::enters_workers(in, fn)) return std::nullopt;
  Signature sig = signature_of(args);
  auto& keys = entries_[&fn];
  auto it = keys.find(sig.bytes);
  if (it == keys.end()) {
    if (static_cast<int>(keys.size()) >= kMaxKeys) return std::nullopt;
    auto e = std::make_unique<Entry>();
    if (!sig.why.empty()) {
      e->state = Entry::State::Never;
      say(fn, "not recorded: " + sig.why);
      keys.emplace(sig.bytes, std::move(e));
      return std::nullopt;
    }
    Entry& entry = *keys.emplace(sig.bytes, std::move(e)).first->second;
    // The probe: this call as usual, watched (Note [Recorded steps]).
    CallRecording probe(false);
    const uint64_t reads = ops::host_reads_of_device_bytes();
    Value result;
    try {
      eval::StepRecording::Scope scope(&probe);
      result = run(in, fn, args, site);
    } catch (...) {
      entry.state = Entry::State::Never;
      throw;
    }
    std::string why = probe.why_;
    if (ops::host_reads_of_device_bytes() != reads && why.empty())
      why = "it reads a value on the host";
    if (why.empty()) why = result_refusal(result);
    if (why.empty() && signature_of(args).bytes != sig.bytes)
      why = kChangedHostState;
    if (!why.empty()) {
      entry.state = Entry::State::Never;
      say(fn, "not recorded: " + why);
    }
    return result;
  }
  Entry& e = *it->second;
  switch (e.state) {
    case Entry::State::Never:
      return std::nullopt;
    case Entry::State::Probed: {
      int recorded = 0;
      for (const auto& [key, other] : keys)
        recorded += other->state == Entry::State::Recorded;
      if (recorded >= kMaxRecorded) return std::nullopt;
      return record(in, fn, args, site, sig.bytes, e);
    }
    case Entry::State::Recorded:
      return replay(args, e);
  }
  return std::nullopt;
}

std::optional<Value> RecordedCalls::record(eval::Interpreter& in,
                                           const check::FnInfo& fn,
                                           std::vector<Value>& args,
                                           diag::Span site,
                                           const std::string& key,
                                           Entry& e) {
  ops::StepRecorder& rec = *ops::step_recorder(device_.kind);
  // Value arguments read from buffers of the recording's own.
  std::vector<Value> given;
  for (const Value& a : args)
    given.push_back(map_values(a, [&](const ops::Tensor& t) {
      if (!t.defined()) return t;
      e.inputs.push_back(t.clone());
      return e.inputs.back();
    }));
  for (const Value& a : args)
    if (a.obj) e.keep.push_back(a.obj);
  std::vector<ops::Tensor*> before = object_leaves(given);
  for (ops::Tensor* t : before)
    e.leaves.push_back({t->defined() ? t->storage()->data() : nullptr,
                        0,
                        {},
                        t->defined() && t->storage().use_count() > 1});
  CallRecording recording(true);
  rec.begin(device_.index);
  for (ops::Tensor* t : before) rec.adopt(*t);
  Value result;
  std::exception_ptr failed;
  try {
    eval::StepRecording::Scope scope(&recording);
    result = run(in, fn, given, site);
  } catch (...) {
    failed = std::current_exception();
  }
  std::string why;
  if (hooks_.before_end) {
    try {
      hooks_.before_end();
    } catch (...) {
      if (!failed) failed = std::current_exception();
    }
  }
  e.step = rec.end(why);
  if (!e.step)
    throw std::runtime_error(
        "a recorded step of `" + fn.name + "` could not be recorded (" + why +
        "); SHAPESCRIPT_RECORD_STEPS=0 runs every step as it comes");
  // What the call queued runs now, as it would have as it came (its
  // effects are the walk's, already made: e.effects is empty yet).
  if (failed) {
    try {
      replay_step(e);
    } catch (...) {
      // The call's own error is the one to raise.
    }
    e = Entry{};
    e.state = Entry::State::Never;
    std::rethrow_exception(failed);
  }
  replay_step(e);
  std::vector<ops::Tensor*> after = object_leaves(args);
  why = recording.why_;
  if (why.empty()) why = result_refusal(result);
  if (why.empty() &&
      (after.size() != before.size() || signature_of(args).bytes != key))
    why = kChangedHostState;
  for (size_t i = 0; why.empty() && i < after.size(); ++i)
    if (after[i]->defined() &&
        after[i]->storage()->data() != e.leaves[i].bytes) {
      if (!e.leaves[i].bytes)
        why = "it gives a model or optimizer a tensor it did not have";
      else if (e.leaves[i].shared_before)
        // A replay writes the replaced tensor's bytes: here they are a
        // value the program holds.
        why =
            "it replaces a model's or optimizer's tensor that another "
            "value holds";
      else
        e.leaves[i].replaced_by = *after[i];
    }
  if (!why.empty()) {
    e = Entry{};
    e.state = Entry::State::Never;
    say(fn, "not recorded: " + why);
    return result;
  }
  // Each tensor as often held as now, at most, when a replay changes it.
  for (size_t i = 0; i < after.size(); ++i)
    e.leaves[i].uses = static_cast<long>(after[i]->storage().use_count());
  e.effects = std::move(recording.effects_);
  e.result = result;
  e.state = Entry::State::Recorded;
  say(fn,
      "recorded: " + std::to_string(e.step->nodes()) + " kernels and copies, " +
          std::to_string(e.step->patchable()) + " patched per replay");
  return map_values(result, [](const ops::Tensor& t) { return t.clone(); });
}

std::optional<Value> RecordedCalls::replay(std::vector<Value>& args, Entry& e) {
  // The guards: the same bytes where the step reads a model or optimizer,
  // held no more often than when it was recorded.
  std::vector<ops::Tensor*> leaves = object_leaves(args);
  if (leaves.size() != e.leaves.size()) return std::nullopt;
  for (size_t i = 0; i < leaves.size(); ++i) {
    const ops::Tensor& t = *leaves[i];
    const Entry::Leaf& l = e.leaves[i];
    if (!t.defined()) return std::nullopt;
    if (l.replaced_by.defined()) {
      // The step writes its new tensor's bytes: held by the recording and
      // the model's slot, when it holds it, and nothing else.
      const long slot = t.same_storage(l.replaced_by) ? 0 : 1;
      if (l.replaced_by.storage().use_count() > l.uses - slot)
        return std::nullopt;
    } else if (t.storage()->data() != l.bytes ||
               t.storage().use_count() > l.uses) {
      return std::nullopt;
    }
  }
  size_t k = 0;
  for (const Value& a : args)
    map_values(a, [&](const ops::Tensor& t) {
      if (t.defined()) {
        ops::Tensor& in = e.inputs[k++];
        if (!in.same_storage(t)) in.copy_from(t);
      }
      return t;
    });
  ops::DeviceMemory* mem = ops::device_memory(device_.kind);
  for (size_t i = 0; i < leaves.size(); ++i)
    if (e.leaves[i].replaced_by.defined())
      mem->on_device(e.leaves[i].bytes,
                     leaves[i]->raw(),
                     leaves[i]->nbytes(),
                     device_.index);
  replay_step(e);
  for (size_t i = 0; i < leaves.size(); ++i)
    if (e.leaves[i].replaced_by.defined()) *leaves[i] = e.leaves[i].replaced_by;
  ++e.replays;
  return map_values(e.result, [](const ops::Tensor& t) { return t.clone(); });
}

void RecordedCalls::replay_step(Entry& e) {
  e.step->replay([&] {
    for (auto& effect : e.effects) effect();
  });
  if (hooks_.after_replay) hooks_.after_replay();
  e.step->settle();
}

}  // namespace ss::devices
