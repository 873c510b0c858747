#include "interp/devices/lower/rank_context.h"

#include <memory>
#include <string>

#include "dist/comm/communicator.h"
#include "interp/builtins/output.h"
#include "interp/devices/lower/deferred_folds.h"
#include "interp/devices/lower/grad_allreduce.h"
#include "interp/devices/lower/heads.h"
#include "interp/devices/lower/param_buckets.h"
#include "interp/devices/lower/shards.h"
#include "interp/eval/interpreter.h"
#include "interp/eval/runtime_lib.h"
#include "ops/api.h"

namespace ss::devices::lower {

// The evaluator's values and objects, which the ranks' code works on.
using namespace ss::eval;

using VK = Value::Kind;

namespace {

// Whether [t]'s leading axis is one of [fn]'s batch axes.
bool batch_leading(const types::Type& t, const check::FnInfo& fn) {
  return t.kind == types::Type::Kind::Tensor && !t.shape.empty() &&
         t.shape[0].kind == types::Axis::Kind::Var &&
         fn.batch_vars.count(t.shape[0].var);
}

}  // namespace

std::optional<Value> RankContext::call(eval::Interpreter& in,
                                       const check::FnInfo& fn,
                                       std::vector<Value>& args,
                                       diag::Span site) {
  if (fn.decl->is_spmd && !in.mesh()) return call_spmd(in, fn, args, site);
  // Only a call from the controller's part into the workers' splits, once;
  // one device too in deterministic mode with `split H`, which runs the
  // heads one at a time as the ranks do (Note [Heads one at a time]).
  const bool heads_alone = d_.deterministic && d_.whole_batches();
  if ((!d_.active() && !heads_alone) || !eval::enters_workers(in, fn) ||
      splitting_)
    return std::nullopt;
  if (d_.deterministic && d_.active()) check_same_kernels(in, site);
  if (d_.on_step) d_.on_step(fn.name, in.sources().location(site, "?"));
  sources_ = &in.sources();
  if (d_.active() && d_.device().kind != ops::Device::Kind::Cpu) {
    // Note [A recorded step's collectives] in dist/comm/nccl/nccl_comm.cpp
    if (!recorded_) {
      dist::Communicator* comm = d_.comm;
      RecordedCalls::RankHooks hooks;
      hooks.before_end = [comm] { comm->join_lanes(); };
      hooks.after_replay = [comm] { comm->await_device(dist::Options{}); };
      recorded_ = std::make_unique<RecordedCalls>(d_.device(), hooks);
    }
    // The call itself runs through here again, inside the recording.
    if (std::optional<Value> v = recorded_->call(in, fn, args, site)) return v;
  }
  bucket_ = GatheredBucket{};  // the params may have changed since
  if (d_.whole_batches()) {
    // `split H`: the batch whole, a value typed with H cut to our heads.
    for (size_t i = 0; i < args.size() && i < fn.params.size(); ++i)
      args[i] = cut_value(args[i], fn.params[i].type, d_);
  } else {
    split_arguments(fn, args);
  }
  std::set<const eval::ModelStore*> sent;
  for (const Value& a : args)
    if (a.kind == VK::Model) sent.insert(a.as<eval::ModelRef>()->store.get());
  splitting_ = true;
  struct Reset {
    bool& flag;
    ~Reset() { flag = false; }
  } reset{splitting_};
  Value r = in.call(fn, std::move(args), site);
  bucket_ = GatheredBucket{};  // its copies go with the call's values
  d_.at = site;                // a joined result's all-gather
  return join_result(fn, std::move(r), fn.result, sent);
}

// Note [Same kernels everywhere]
// Deterministic mode promises one device's bits on every device, which
// holds only where every device computes a product with the same kernel:
// OpenBLAS picks its kernels by the CPU it finds (Haswell, SkylakeX, ...),
// and ss its vector loops (AVX2, AVX-512), so hosts of different CPUs
// round differently. The ranks compare their kernels (ops::
// kernel_signature) once, before their first step, and refuse to start
// rather than differ in silence.
void RankContext::check_same_kernels(eval::Interpreter& in, diag::Span site) {
  if (kernels_checked_) return;
  kernels_checked_ = true;
  constexpr int64_t kBytes = 256;
  ops::Tensor mine = ops::Tensor::zeros({kBytes}, types::DType::I32);
  const std::string s = d_.kernels.substr(0, kBytes - 1);
  int32_t* out = static_cast<int32_t*>(mine.raw());
  for (size_t i = 0; i < s.size(); ++i)
    out[i] = static_cast<unsigned char>(s[i]);
  ops::Tensor all;
  {
    Waiting w(d_);
    d_.comm->all_gather(mine, all, dist::Options{});
  }
  std::vector<std::string> each(d_.world);
  const int32_t* v = static_cast<const int32_t*>(all.raw());
  for (int r = 0; r < d_.world; ++r)
    for (int64_t i = 0; i < kBytes && v[r * kBytes + i]; ++i)
      each[r] += static_cast<char>(v[r * kBytes + i]);
  for (int r = 1; r < d_.world; ++r)
    if (each[r] != each[0])
      in.fail("ValueError",
              site,
              "deterministic mode needs the same kernels on every device: "
              "device 0 computes with " +
                  each[0] + ", device " + std::to_string(r) + " with " +
                  each[r],
              {"help: run every worker on hosts of one CPU type, or leave "
               "out `deterministic`"});
}

void RankContext::split_arguments(const check::FnInfo& fn,
                                  std::vector<Value>& args) {
  for (size_t i = 0; i < args.size() && i < fn.param_split.size(); ++i) {
    if (!fn.param_split[i]) continue;
    Value& v = args[i];
    if (v.kind == VK::Record && v.as<eval::RecordValue>()->batch) {
      auto* whole = v.as<eval::RecordValue>();
      if (whole->share_start >= 0) {  // a worker's own rows already
        d_.row_start = whole->share_start;
        d_.batch_rows = whole->batch_rows;
        continue;
      }
      auto part = std::make_shared<eval::RecordValue>(*whole);
      for (auto& [name, t] : part->fields) {
        auto [start, end] = d_.share(t.shape()[0]);
        d_.row_start = start;
        d_.batch_rows = t.shape()[0];
        t = ops::slice(t, 0, start, end);
      }
      v = Value::object(VK::Record, part);
    } else if (v.kind == VK::Tensor && v.t.rank() > 0) {
      auto [start, end] = d_.share(v.t.shape()[0]);
      d_.row_start = start;
      d_.batch_rows = v.t.shape()[0];
      v = Value::tensor(ops::slice(v.t, 0, start, end));
    }
  }
}

Value RankContext::join_result(const check::FnInfo& fn,
                               Value v,
                               const types::Type& t,
                               const std::set<const eval::ModelStore*>& sent) {
  if (v.kind == VK::Tensor && d_.whole_batches())
    return gather_value(v, t, d_);  // `split H`: our heads joined
  if (v.kind == VK::Tensor && batch_leading(t, fn))
    return Value::tensor(join_rows(v.t, d_));
  if ((v.kind == VK::Model || v.kind == VK::Grads) &&
      (!v.as<eval::ModelRef>()->store->whole.empty() ||
       !v.as<eval::ModelRef>()->store->heads.empty()) &&
      !sent.count(v.as<eval::ModelRef>()->store.get())) {
    // Made in the call (gradients, a copy): the controller gets it whole,
    // as one device's, never this rank's pieces or heads.
    auto ref = std::make_shared<eval::ModelRef>(*v.as<eval::ModelRef>());
    ref->store =
        std::make_shared<eval::ModelStore>(*gathered_store(*ref->store, d_));
    return Value::object(v.kind, ref);
  }
  if (v.kind == VK::Logs && !d_.whole_batches() &&
      !v.as<eval::LogsValue>()->split_fields.empty()) {
    // A new Logs: the worker's own may still be read where it was made.
    auto joined = std::make_shared<eval::LogsValue>(*v.as<eval::LogsValue>());
    for (const auto& [name, axis] : joined->split_fields)
      for (auto& [n, x] : joined->fields)
        if (n == name && x.kind == VK::Tensor && axis < int(x.t.rank()))
          x = Value::tensor(join_along(x.t, axis, d_));
    joined->split_fields.clear();
    return Value::object(VK::Logs, joined);
  }
  if (v.kind == VK::Tuple && t.kind == types::Type::Kind::Tuple) {
    std::vector<Value> items = *v.items;
    for (size_t i = 0; i < items.size() && i < t.elems.size(); ++i)
      items[i] = join_result(fn, items[i], t.elems[i], sent);
    return Value::tuple(std::move(items));
  }
  return v;
}

eval::Placement RankContext::placement() const {
  eval::Placement p;
  p.device = d_.device();
  if (std::optional<int64_t> r = chunks_.chunk_row_start())
    p.batch_share_start = r;
  else if (d_.active() && !d_.whole_batches())
    p.batch_share_start = d_.row_start;
  return p;
}

std::optional<Value> RankContext::lower_reduction(eval::BuiltinCall& c) {
  // `split H`: the batch is whole here, so is the reduction.
  if (!d_.active() || d_.whole_batches()) return std::nullopt;
  d_.at = c.span;
  return lower(c, d_);
}

std::optional<Value> RankContext::host_effect(eval::BuiltinCall& c) {
  if (!d_.active()) return std::nullopt;
  // Host effects happen once, on rank 0 (its output stream is the only
  // real one): files, checkpoints, bars.
  using H = ops::HostEffect;
  const H effect = c.op.device.host;
  if (effect == H::SavesCheckpoint) {
    // Ranks as threads (ss conformance), main on each: rank 0 writes the
    // checkpoint and every rank waits for it, so a load after it finds
    // the whole file on every rank. (In `ss run` save is a host call:
    // the controller alone runs it.)
    Value v = Value::unit();
    if (d_.host()) v = eval::call_builtin_forward(c);
    Waiting w(d_);
    d_.comm->barrier(dist::Options{});
    return v;
  }
  if (d_.host()) return std::nullopt;
  if (effect == H::MakesFileSink) return builtins::stdout_sink(c.in);
  if (effect == H::ShowsProgress) return c.arg(0);
  return std::nullopt;
}

// Note [A scaled loss is seeded at the root]
// A pass seeded with 1/world scales the leaves' gradients at the end (Note
// [The seed scales the leaves] in ops/autodiff/tape.cpp) and starts from 1
// at the root, so past the batch's all-reduce, whose VJP multiplies a
// replicated cotangent by the world (Note [Replicated cotangents]), each
// cotangent is world x one device's. In f32 and f64 that is the same
// gradient; in f16 it is not: a value world x larger overflows sooner, and
// a grad scaler (Note [Loss scaling] in interp/builtins/grad_scaler.cpp)
// exists to keep the pass just below overflow. So a scaled loss starts from
// scale / world at the root and scales no leaf: past the all-reduce each
// cotangent is one device's with that scale (scale / 3 rounds to f32 and
// back exactly for a power of two), each rank's gradients are its share's
// part of scale x the gradient, and their sum is the whole.
std::optional<std::vector<ops::Tensor>> RankContext::gradients(
    const ops::Tensor& loss,
    const std::vector<ops::Tensor>& leaves,
    const std::vector<bool>& pieces,
    diag::Span at,
    std::optional<double> scale) {
  // A mesh program sums no gradients: its spmd fns' collectives and cuts
  // did (devices.md, Which checks apply). `split H`: a whole param's
  // gradient is one device's already, and a param's heads' their own
  // (Note [Split heads]): nothing to sum.
  // Deterministic mode: each gradient is whole where the rows were added
  // (Note [Chunked sites]): one device's pass, seeded with 1, the params'
  // folds after it (Note [Deferred folds]).
  if (d_.deterministic && !d_.mesh) {
    DeferredFolds folds;
    struct Reset {  // a pass inside a pass (grad inside a loss) nests
      ChunkedSites& c;
      DeferredFolds* outer;
      ~Reset() { c.set_deferred(outer); }
    } reset{chunks_, chunks_.deferred()};
    chunks_.set_deferred(&folds);
    std::vector<ops::Tensor> g =
        ops::backward(loss, leaves, nullptr, 1.0, scale.value_or(1.0));
    chunks_.set_deferred(reset.outer);
    d_.at = at;
    folds.finish(leaves, g, d_);
    if (!reset.outer) chunks_.forget_stack_reads();
    return g;
  }
  if (!d_.active() || d_.mesh || d_.whole_batches()) return std::nullopt;
  // Gradients of whole params travel as the pass finishes them
  // (grad_allreduce.h); a sharded param's piece was reduce-scattered by the
  // pass itself (Note [Sharded params] in shards.cpp).
  d_.at = at;
  std::vector<size_t> summed_index(leaves.size());
  size_t n_summed = 0;
  for (size_t i = 0; i < leaves.size(); ++i)
    if (i >= pieces.size() || !pieces[i]) summed_index[i] = n_summed++;
  std::vector<ops::Tensor> out(leaves.size());
  GradAllReduce sum(d_, n_summed);
  // A piece's gradient is its bucket's reduce-scatter's (Note [Param
  // buckets]): the gathers' VJPs hand their cotangents to [scatter].
  // Each rank seeds 1/world, at the leaves; a scaled loss starts from
  // scale / world at the root instead (Note [A scaled loss is seeded at
  // the root]). The loss's value is not read.
  const double seed = scale ? 1.0 : 1.0 / d_.world;
  const double at_root = scale ? *scale / d_.world : 1.0;
  PieceScatter scatter(d_, seed);
  struct Sink {
    DeviceContext& d;
    PieceScatter* saved;
    ~Sink() { d.scatter = saved; }
  } sink{d_, d_.scatter};
  d_.scatter = &scatter;
  const size_t n_pieces = leaves.size() - n_summed;
  size_t n_told = 0;
  auto ready = [&](size_t i, const ops::Tensor& g) {
    if (i < pieces.size() && pieces[i]) {
      // [g] is zeros (the gather's VJP handed its part to [scatter]): not
      // kept, a piece's memory per param until the pass ends.
      scatter.ready(i, leaves[i], ++n_told == n_pieces);
    } else {
      sum.ready(summed_index[i], g);
    }
  };
  ops::backward(loss, leaves, ready, seed, at_root);
  d_.scatter = sink.saved;
  d_.at = at;
  std::vector<ops::Tensor> summed = sum.finish();
  for (auto& [i, g] : scatter.finish()) out[i] = g;
  for (size_t i = 0; i < leaves.size(); ++i)
    if (i >= pieces.size() || !pieces[i]) out[i] = summed[summed_index[i]];
  return out;
}

std::optional<ops::Tensor> RankContext::gather_param(const eval::ModelRef& m,
                                                     const std::string& path,
                                                     diag::Span at) {
  const std::string key = m.prefix + path;
  auto whole = m.store->whole.find(key);
  if (!d_.active() || whole == m.store->whole.end()) return std::nullopt;
  d_.at = at;
  const ops::Tensor& piece = m.store->tensors.at(key);
  const uint32_t line = line_of(at);
  if (!bucket_.holds(*m.store, key, piece, at.file, line)) {
    // The earlier reads' copies are used: their bytes go (Note [Gathered
    // copies]); this read gathers its bucket (Note [Param buckets]).
    copies_.let_go_all();
    bucket_ = GatheredBucket{};
    bucket_.store = m.store.get();
    bucket_.file = at.file;
    bucket_.line = line;
    bucket_.keys = bucket_of(*m.store, key);
    auto members = std::make_shared<BucketMembers>();
    std::vector<ops::Shape> wholes;
    for (const std::string& k : bucket_.keys) {
      const ops::Tensor& p = m.store->tensors.at(k);
      bucket_.pieces.push_back(p);
      wholes.push_back(m.store->whole.at(k));
      members->pieces.push_back(p.storage().get());
      members->numel.push_back(p.numel());
      members->dtype = p.dtype();
    }
    bucket_.members = std::move(members);
    // A bucket of one is gathered as before: straight into the param.
    if (bucket_.keys.size() > 1)
      bucket_.wholes = gather_bucket(bucket_.pieces, wholes, d_);
    else
      bucket_.wholes.resize(1);
  }
  size_t j = 0;
  while (bucket_.keys[j] != key) ++j;
  ops::Tensor t = lower::gather_param(
      piece, whole->second, d_, &copies_, bucket_.wholes[j], bucket_.members);
  // The next read of it on this line takes this copy (a bucket of one
  // included: `x @ m.w + m.w`'s second read sends nothing).
  if (!bucket_.wholes[j].defined()) bucket_.wholes[j] = t.detach();
  for (int64_t i : m.index) t = ops::take_one(t, i, 0);
  return t;
}

bool RankContext::write_param(const eval::ModelRef& m,
                              const std::string& path,
                              const ops::Tensor& v,
                              diag::Span at) {
  const std::string key = m.prefix + path;
  auto whole = m.store->whole.find(key);
  if (!d_.active() || whole == m.store->whole.end()) return false;
  d_.at = at;
  ops::Tensor& piece = m.store->tensors.at(key);
  // Note [Sharded params]: every rank holds piece `rank` of the flattened
  // whole; one model of a stack is a slice of it, so the whole is made
  // first (every rank runs this statement, so the gather meets).
  ops::Tensor w = v;
  if (!m.index.empty())
    w = eval::put_at(whole_param(piece, whole->second, d_), m.index, v);
  piece = piece_of(w, d_.rank, d_.world);
  return true;
}

bool RankContext::GatheredBucket::holds(const eval::ModelStore& s,
                                        const std::string& key,
                                        const ops::Tensor& piece,
                                        uint32_t at_file,
                                        uint32_t at_line) const {
  if (store != &s || file != at_file || line != at_line) return false;
  for (size_t j = 0; j < keys.size(); ++j)
    if (keys[j] == key)
      // The same piece: not a leaf value_and_grad made of it since, nor
      // one an update replaced (optim.cpp's own() copies a held piece).
      return pieces[j].same_storage(piece) &&
             pieces[j].autograd() == piece.autograd();
  return false;
}

uint32_t RankContext::line_of(diag::Span at) const {
  if (!sources_ || at.file >= sources_->size()) return at.begin;
  return sources_->line_col(at.file, at.begin).line;
}

ops::Tensor RankContext::sum_over_pieces(const ops::Tensor& partial) {
  if (!d_.active()) return partial;
  ops::Tensor t = partial.reshape({1}).clone();
  Waiting w(d_);
  d_.comm->all_reduce(t, dist::ReduceOp::Sum, dist::Options{});
  return t.reshape({});
}

std::optional<ops::Tensor> RankContext::whole_for_sums(
    const eval::ModelRef& m, const std::string& path) {
  if (!d_.deterministic || !d_.active()) return std::nullopt;
  const std::string key = m.prefix + path;
  auto w = m.store->whole.find(key);
  if (w == m.store->whole.end()) return std::nullopt;
  // The store's piece (of a whole stack, for one model of it).
  ops::Tensor t = whole_param(m.store->tensors.at(key), w->second, d_);
  for (int64_t i : m.index) t = ops::take_one(t, i, 0);
  return t;
}

Value RankContext::read_param(eval::OpSite& s) {
  Value v = Context::run_op(s);
  if (d_.deterministic && v.kind == VK::Tensor && !s.model->index.empty())
    // One model's param of a stack: its uses fold after the pass, as the
    // stack's own (Note [Deferred folds]).
    chunks_.note_stack_read(
        v.t,
        s.model->store->tensors.at(s.model->prefix + s.path),
        s.model->index);
  return v;
}

bool RankContext::splits_heads() const {
  // Inside a call into the workers' part: main and the controller fns that
  // every rank runs (the threads engine) hold whole values.
  return (d_.active() || d_.deterministic) && d_.whole_batches() && splitting_;
}

void RankContext::bind_call(eval::Interpreter& in,
                            const check::FnInfo& fn,
                            eval::Frame& callee,
                            diag::Span site,
                            const std::vector<types::Type>* arg_types,
                            bool remat,
                            std::vector<eval::ParamShare>& shares) {
  if (splits_heads())
    heads_.bind_call(in, fn, callee, site, arg_types, remat, shares);
}

Value RankContext::run_op(eval::OpSite& s) {
  using K = eval::OpSite::Kind;
  if (s.kind == K::Builtin && s.op->device.host != ops::HostEffect::None) {
    // A host effect happens once, also where split H's plan runs the op
    // (host_effect has nothing to do for an op without one: no wrapper).
    eval::BuiltinCall& c = *s.call;
    s.run = [this, &c, plain = std::move(s.run)] {
      if (std::optional<Value> v = host_effect(c)) return *v;
      return plain();
    };
  }
  if (s.kind == K::ParamRead && d_.deterministic && chunks_.running())
    // Read once for the chunked op, each chunk using it (Note [Chunked
    // sites]): a sharded param gathered once on every rank.
    return chunks_.param_read(s, [this, &s] {
      if (!s.model->store->whole.empty())
        if (std::optional<ops::Tensor> t = gather_param(*s.model, s.path, s.at))
          return Value::tensor(*t);
      return read_param(s);
    });
  if (s.kind == K::ParamRead && !s.model->store->whole.empty())
    if (std::optional<ops::Tensor> t = gather_param(*s.model, s.path, s.at))
      return Value::tensor(*t);
  if (s.kind == K::ParamWrite && !s.model->store->whole.empty() &&
      write_param(*s.model, s.path, *s.operands.at(0), s.at))
    return Value::unit();
  // Inside an op run one head at a time, every op runs as one device's
  // (Note [Heads one at a time]).
  if (splits_heads() && !chunks_.running())
    if (std::optional<Value> v = heads_.run_op(s)) return *v;
  if (d_.deterministic && s.kind == K::ParamRead) return read_param(s);
  if (d_.deterministic) {
    // With `split H` the batch is whole everywhere: not cut into chunks.
    if (!d_.whole_batches())
      if (std::optional<Value> v = chunks_.run_op(s)) return *v;
    return Context::run_op(s);
  }
  if (s.kind == K::Builtin && s.call->info && s.call->info->allreduce)
    if (std::optional<Value> v = lower_reduction(*s.call)) return *v;
  return Context::run_op(s);
}

}  // namespace ss::devices::lower
