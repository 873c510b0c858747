// Deterministic mode's op sites (Note [Chunked sites] in chunked_sites.h).
#include "interp/devices/lower/chunked_sites.h"

#include <map>
#include <memory>

#include "dist/comm/communicator.h"
#include "interp/check/checked.h"
#include "interp/devices/lower/deferred_folds.h"
#include "interp/devices/lower/lowering.h"
#include "interp/eval/interpreter.h"
#include "interp/eval/runtime_lib.h"
#include "ops/api.h"
#include "ops/autodiff/tape.h"
#include "ops/core/op_error.h"
#include "ops/registry/op_def.h"

namespace ss::devices::lower {

using eval::OpSite;
using eval::Value;
using ops::Tensor;

namespace {

int axis_count(const types::Axis& a, const std::set<uint32_t>& vars) {
  int n = a.kind == types::Axis::Kind::Var && vars.count(a.var) ? 1 : 0;
  for (const types::Axis& i : a.items) n += axis_count(i, vars);
  return n;
}

}  // namespace

BatchAxis batch_axis_of(const types::Type& t, const check::FnInfo* fn) {
  BatchAxis out;
  if (!fn || fn->batch_vars.empty() || t.kind != types::Type::Kind::Tensor)
    return out;
  int total = 0;
  for (size_t k = 0; k < t.shape.size(); ++k) {
    const types::Axis& a = t.shape[k];
    const int n = axis_count(a, fn->batch_vars);
    if (n == 0) continue;
    total += n;
    const bool plain = a.kind == types::Axis::Kind::Var;
    const bool first = a.kind == types::Axis::Kind::Group && !a.items.empty() &&
                       a.items[0].kind == types::Axis::Kind::Var &&
                       fn->batch_vars.count(a.items[0].var);
    out.kind = plain || first ? BatchAxis::Kind::Axis : BatchAxis::Kind::Uncut;
    out.axis = static_cast<int>(k);
    out.grouped = first;
    out.var = plain ? a.var : first ? a.items[0].var : 0;
  }
  if (total > 1) out.kind = BatchAxis::Kind::Uncut;
  return out;
}

std::pair<int64_t, int64_t> Chunks::rows(int64_t j) const {
  if (b == a) return {0, 0};
  auto [s, e] = layout.chunk_rows(a + j);
  return {s - row0, e - row0};
}

// The chunked op running now: where each chunk's uses of a whole operand
// and its rows of a batch operand gather their cotangents. Every chunk
// runs the same code, so the n-th use (or rows) in one chunk is the n-th
// in every other: its slot, whatever tensor it is.
struct ChunkedSites::Run {
  explicit Run(uint64_t& uses_made) : uses(&uses_made) {}
  Chunks chunks;
  int64_t j = 0;   // the chunk running
  uint64_t* uses;  // the sites' count of uses made (Slot::order)
  /// The params read in the op, read once: (store, path) -> value.
  std::map<std::pair<const void*, std::string>, Value> params;

  /// Chunk [k] runs (again: its uses continue its count).
  void start_chunk(int64_t k) {
    j = k;
    if (next_.empty()) next_.assign(chunks.count(), 0);
  }

  // Chunk [j]'s use of whole operand [w]. Its cotangent is one partial;
  // the last chunk's to arrive folds them (the pass reaches every chunk's
  // use or none: the join hands each chunk its rows of the cotangent).
  Tensor use(const Tensor& w, ChunkedSites& sites) {
    if (!ops::GradMode::enabled() || !ops::needs_grad(w)) return w;
    std::shared_ptr<Slot> slot = next_slot();
    const int64_t k = j;
    ChunkedSites* self = &sites;
    Chunks c = chunks;
    // A param's use (the leaf itself, or one model's param of a stack
    // read from it): in value_and_grad's pass, as the pass runs it, folded
    // when the pass ends (Note [Deferred folds]).
    std::optional<ParamView> param = sites.param_view(w);
    return ops::record(
        "chunk_use",
        w.detach(),
        {w},
        [slot, k, self, c, param](const Tensor& g) {
          if (!slot->arrive(k, g)) return std::vector<Tensor>{Tensor()};
          if (param && self->deferred_) {
            self->deferred_->add(slot->order, *param, slot->take(), c);
            return std::vector<Tensor>{Tensor()};
          }
          return std::vector<Tensor>{self->fold(slot->take(), c)};
        });
  }

  // Chunk [j]'s rows of batch operand [x] (along [cut]'s axis, each row
  // [cut.per_row] of its entries); their cotangents go back joined, once.
  Tensor rows(const Tensor& x, const Cut& cut) {
    auto [r0, r1] = chunks.rows(j);
    const int axis = cut.axis;
    Tensor part =
        ops::slice(x.detach(), axis, r0 * cut.per_row, r1 * cut.per_row);
    if (!ops::GradMode::enabled() || !ops::needs_grad(x)) return part;
    std::shared_ptr<Slot> slot = next_slot();
    const int64_t k = j;
    return ops::record(
        "chunk_rows", part, {x}, [slot, k, axis](const Tensor& g) {
          if (!slot->arrive(k, g)) return std::vector<Tensor>{Tensor()};
          std::vector<Tensor> got = slot->take();
          if (got.size() == 1) return got;
          ops::GradMode::Guard no_grad(false);
          return std::vector<Tensor>{ops::concat(got, axis)};
        });
  }

 private:
  struct Slot {
    std::vector<Tensor> got;
    int64_t arrived = 0;
    // Its place among the forward pass's uses (Note [Deferred folds]).
    uint64_t order = 0;
    // Whether chunk [k]'s cotangent [g] was the last to arrive.
    bool arrive(int64_t k, const Tensor& g) {
      got.at(k) = g;
      return ++arrived == static_cast<int64_t>(got.size());
    }
    std::vector<Tensor> take() { return std::move(got); }
  };
  std::shared_ptr<Slot> next_slot() {
    size_t& n = next_.at(j);
    if (n == slots_.size()) {
      slots_.push_back(std::make_shared<Slot>());
      slots_.back()->got.resize(chunks.count());
      slots_.back()->order = (*uses)++;
    }
    return slots_[n++];
  }
  std::vector<std::shared_ptr<Slot>> slots_;
  std::vector<size_t> next_;  // by chunk: its next slot
};

void ChunkedSites::note_stack_read(const Tensor& view,
                                   const Tensor& stack,
                                   const std::vector<int64_t>& index) {
  if (!ops::GradMode::enabled() || !ops::needs_grad(view) ||
      !stack.autograd() || stack.autograd()->grad_fn)
    return;
  // The view's meta is held, so its address names it while it is here.
  stack_views_[view.autograd().get()] = {
      view.autograd(), ParamView{stack.autograd().get(), index}};
}

std::optional<ParamView> ChunkedSites::param_view(const Tensor& w) const {
  const ops::AutogradMeta* meta = w.autograd().get();
  if (!meta) return std::nullopt;
  if (!meta->grad_fn) return ParamView{meta, {}};
  auto v = stack_views_.find(meta);
  if (v == stack_views_.end()) return std::nullopt;
  return v->second.second;
}

std::optional<Chunks> ChunkedSites::chunks_for(int64_t local_rows) const {
  Chunks c;
  if (d_.active() && !d_.whole_batches()) {
    const int64_t n = d_.batch_rows;
    auto [s, e] = d_.share(n);
    if (e - s != local_rows) return std::nullopt;
    c.layout = ChunkLayout::of(n, d_.world);
    std::tie(c.a, c.b) = c.layout.chunks_of(d_.rank);
    c.row0 = s;
    c.across = true;
    return c;
  }
  c.layout = ChunkLayout::of(local_rows, 1);
  c.a = 0;
  c.b = c.layout.chunks;
  return c;
}

std::optional<int64_t> ChunkedSites::chunk_row_start() const {
  if (!running_) return std::nullopt;
  return running_->chunks.layout.chunk_rows(running_->chunks.a + running_->j)
      .first;
}

Tensor ChunkedSites::fold(const std::vector<Tensor>& values, const Chunks& c) {
  // One use's fold, exchanged at once (Note [Deferred folds] exchanges
  // a pass's params' together, the same way).
  DeferredFolds now;
  now.add(0, ParamView{}, values, c);
  return now.fold_all(d_).at(0);
}

std::optional<Value> ChunkedSites::run_op(OpSite& s) {
  using K = OpSite::Kind;
  if (s.kind == K::ParamRead) return param_read(s, [&s] { return s.run(); });
  // Inside a chunk every op runs as one device runs it.
  if (running_) return std::nullopt;
  switch (s.kind) {
    case K::Builtin:
      if (s.call->info && s.call->info->allreduce)
        if (std::optional<Value> v = reduction(s)) return v;
      return builtin(s);
    case K::Operator:
    case K::Pattern:
      return operands(s);
    default:
      return std::nullopt;
  }
}

Value ChunkedSites::param_read(OpSite& s, const std::function<Value()>& read) {
  if (!running_) return read();
  const std::pair<const void*, std::string> key{s.model->store.get(),
                                                s.model->prefix + s.path};
  auto it = running_->params.find(key);
  if (it == running_->params.end())
    it = running_->params.emplace(key, read()).first;
  if (it->second.kind != Value::Kind::Tensor) return it->second;
  return Value::tensor(running_->use(it->second.t, *this));
}

namespace {

// Why an op that must run by chunks cannot: a ValueError at it.
[[noreturn]] void cannot_chunk(OpSite& s, const std::string& why) {
  s.in.fail(
      "ValueError",
      s.at,
      "deterministic mode cannot cut this op into the batch's chunks: " + why,
      {"help: keep the batch axis an axis of its own, or the first of "
       "its group (`(b n)`, not `(n b)`), where it meets a param"});
}

}  // namespace

// How an op's tensor operands meet the batch.
struct Operands {
  std::vector<Cut> cuts;  // by operand: the batch's cut, or axis -1 (whole)
  bool batch = false;     // some operand has the batch axis
  bool whole = false;     // some whole operand the chunks change
  bool uncut = false;     // some operand has it where no chunk can cut
  int64_t rows = -1;      // the batch rows here
  // Operand [t] of type [type] in [f]'s frame.
  void add(const types::Type& type, const Tensor& t, const eval::Frame* f) {
    const BatchAxis b = batch_axis_of(type, f ? f->fn : nullptr);
    Cut cut;
    if (b.kind == BatchAxis::Kind::Uncut) uncut = true;
    if (b.kind == BatchAxis::Kind::Axis && t.defined() &&
        b.axis < static_cast<int>(t.rank())) {
      const int64_t len = t.shape()[b.axis];
      int64_t per_row = 1;
      if (b.grouped) {
        // `(b t)`: a batch row is the group's other items; b's size is
        // the frame's.
        auto size = f->sizes.find(b.var);
        per_row = size == f->sizes.end() || size->second <= 0 ||
                          len % size->second != 0
                      ? 0
                      : len / size->second;
      }
      if (per_row == 0) {
        uncut = true;
      } else {
        cut = {b.axis, per_row};
        batch = true;
        rows = len / per_row;
      }
    } else if (b.kind == BatchAxis::Kind::None && t.defined() &&
               (t.rank() >= 2 || ops::needs_grad(t))) {
      // A product's whole operand (its kernel changes with the rows), or
      // one whose cotangent sums the rows.
      whole = true;
    }
    cuts.push_back(cut);
  }
};

std::optional<Value> ChunkedSites::operands(OpSite& s) {
  const check::Program& prog = s.in.program();
  const eval::Frame* f = s.in.current_frame();
  Operands o;
  for (size_t i = 0; i < s.operands.size(); ++i)
    o.add(i < s.operand_exprs.size() ? prog.type_of(s.operand_exprs[i])
                                     : types::Type::error(),
          *s.operands[i],
          f);
  return chunked(s, s.operands, o, prog.type_of(s.expr));
}

std::optional<Value> ChunkedSites::builtin(OpSite& s) {
  eval::BuiltinCall& c = *s.call;
  if (!c.op.forward) return std::nullopt;
  const eval::Frame* f = s.in.current_frame();
  std::vector<Tensor*> tensors;
  Operands o;
  for (size_t i = 0; i < c.args.size(); ++i) {
    if (!c.has(i)) continue;
    Value& v = c.args[i];
    // A model's params are read inside (linear(m.l1, x)): whole operands.
    if (v.kind == Value::Kind::Model) o.whole = true;
    if (v.kind != Value::Kind::Tensor) continue;
    tensors.push_back(&v.t);
    o.add(c.arg_type(i), v.t, f);
  }
  return chunked(s, tensors, o, c.result_type());
}

std::optional<Value> ChunkedSites::chunked(OpSite& s,
                                           const std::vector<Tensor*>& operands,
                                           const Operands& o,
                                           const types::Type& result) {
  // Only batch values meet, or none: each element from its own row.
  if (!o.batch || !o.whole) return std::nullopt;
  const eval::Frame* f = s.in.current_frame();
  const BatchAxis out = batch_axis_of(result, f ? f->fn : nullptr);
  if (o.uncut || out.kind != BatchAxis::Kind::Axis) {
    // A whole result from batch rows (a product over them): it runs as
    // one device runs it, a contraction the checker refuses on several
    // devices; one it lets through, with a grouped batch, cannot run.
    if (out.kind == BatchAxis::Kind::None && !o.uncut) return std::nullopt;
    cannot_chunk(s,
                 "its batch axis is inside a group after another axis, "
                 "or in two places");
  }
  std::optional<Chunks> c = chunks_for(o.rows);
  if (!c)
    cannot_chunk(s,
                 "its batch axis holds " + std::to_string(o.rows) +
                     " rows, not this device's share of the batch");
  return run_chunks(s, operands, o.cuts, *c, out.axis);
}

Value ChunkedSites::run_chunks(OpSite& s,
                               const std::vector<Tensor*>& operands,
                               const std::vector<Cut>& cuts,
                               const Chunks& c,
                               int out_axis) {
  std::vector<Tensor> outs;
  for (Value& v : run_pieces(s.run, operands, cuts, c)) {
    if (v.kind != Value::Kind::Tensor)
      throw std::logic_error("a chunked op gave no tensor");
    outs.push_back(v.t);
  }
  if (outs.size() == 1) return Value::tensor(outs[0]);
  return Value::tensor(ops::concat(outs, out_axis));
}

std::vector<Value> ChunkedSites::run_pieces(
    const std::function<Value()>& run_one,
    const std::vector<Tensor*>& operands,
    const std::vector<Cut>& cuts,
    const Chunks& c) {
  Run run(uses_made_);
  run.chunks = c;
  std::vector<Tensor> saved;
  for (Tensor* t : operands) saved.push_back(*t);
  struct Restore {
    ChunkedSites& self;
    Run* outer;
    const std::vector<Tensor*>& operands;
    std::vector<Tensor>& saved;
    ~Restore() {
      self.running_ = outer;
      for (size_t i = 0; i < operands.size(); ++i) *operands[i] = saved[i];
    }
  } restore{*this, running_, operands, saved};
  running_ = &run;
  std::vector<Value> outs;
  for (int64_t j = 0; j < c.count(); ++j) {
    run.start_chunk(j);
    for (size_t i = 0; i < operands.size(); ++i)
      *operands[i] = cuts[i].axis >= 0 ? run.rows(saved[i], cuts[i])
                                       : run.use(saved[i], *this);
    outs.push_back(run_one());
  }
  return outs;
}

Tensor ChunkedSites::fold_taped(const std::vector<Tensor>& values,
                                const Chunks& c) {
  std::vector<Tensor> plain;
  for (const Tensor& p : values) plain.push_back(p.detach());
  Tensor total = fold(plain, c);
  if (!types::is_float(total.dtype())) return total;
  const size_t n = values.size();
  return ops::record("chunk_fold", total, values, [n](const Tensor& g) {
    return std::vector<Tensor>(n, g);
  });
}

std::optional<Value> ChunkedSites::reduction(OpSite& s) {
  eval::BuiltinCall& c = *s.call;
  const ops::Lowering* low = c.op.device.lowering;
  if (!low) return std::nullopt;
  const eval::Frame* f = s.in.current_frame();
  std::vector<size_t> batch_args;
  std::vector<Cut> cuts;
  Operands o;
  for (size_t i = 0; i < c.args.size(); ++i) {
    if (!c.has(i) || c.args[i].kind != Value::Kind::Tensor) continue;
    o.add(c.arg_type(i), c.args[i].t, f);
    if (o.cuts.back().axis < 0) continue;
    batch_args.push_back(i);
    cuts.push_back(o.cuts.back());
  }
  const int64_t rows = o.rows;
  // Per example (reduce given another function, batch_norm in Eval
  // mode, reduction="none"): an op where the batch meets whole values.
  if (!lowers_here(*low, *eval::forward_ctx(c))) return std::nullopt;
  // The checker lowered it: it reduces rows here, which only the chunks
  // may add.
  if (batch_args.empty() || o.uncut)
    cannot_chunk(s,
                 "its batch axis is inside a group after another axis, "
                 "or in two places");
  std::optional<Chunks> ch = chunks_for(rows);
  if (!ch)
    cannot_chunk(s,
                 "its batch axis holds " + std::to_string(rows) +
                     " rows, not this device's share of the batch");
  Run run(uses_made_);
  run.chunks = *ch;
  std::vector<Value> saved;
  for (size_t i : batch_args) saved.push_back(c.args[i]);
  struct Restore {
    ChunkedSites& self;
    eval::BuiltinCall& c;
    const std::vector<size_t>& batch_args;
    std::vector<Value>& saved;
    ~Restore() {
      self.running_ = nullptr;
      for (size_t k = 0; k < batch_args.size(); ++k)
        c.args[batch_args[k]] = saved[k];
    }
  } restore{*this, c, batch_args, saved};
  running_ = &run;
  // Each chunk's rows, cut once: the finish reads the payload's.
  std::vector<std::vector<Value>> chunk_args(ch->count());
  for (int64_t j = 0; j < ch->count(); ++j) {
    run.start_chunk(j);
    for (size_t k = 0; k < batch_args.size(); ++k)
      chunk_args[j].push_back(Value::tensor(run.rows(saved[k].t, cuts[k])));
  }
  auto set_chunk = [&](int64_t j) {
    run.start_chunk(j);
    for (size_t k = 0; k < batch_args.size(); ++k)
      c.args[batch_args[k]] = chunk_args[j][k];
  };
  // The entry's payload per chunk; each chunk's context lives until its
  // finish has run (a finish may read its arguments).
  std::vector<std::unique_ptr<ops::ForwardCtx>> ctxs;
  std::vector<ops::Share> shares;
  std::vector<Tensor> payloads;
  try {
    for (int64_t j = 0; j < ch->count(); ++j) {
      set_chunk(j);
      ctxs.push_back(eval::forward_ctx(c));
      shares.push_back(low->share(*ctxs.back()));
      payloads.push_back(shares.back().send);
    }
    // The fold's cotangent is each chunk's: the result's is whole already
    // (every path to it from the loss runs through whole values).
    Tensor total = fold_taped(payloads, *ch);
    const BatchAxis res = batch_axis_of(c.result_type(), f ? f->fn : nullptr);
    const int out = res.kind == BatchAxis::Kind::Axis ? res.axis : -1;
    if (res.kind == BatchAxis::Kind::None) {
      // A whole result: one finish (each chunk's is the same).
      running_ = nullptr;
      return Value::tensor(shares[0].finish(total).at(0));
    }
    // Rows (batch_norm): the whole part once, and each chunk's rows from
    // its uses of the whole part's results.
    if (!shares[0].whole || !shares[0].rows || batch_args.size() != 1 ||
        batch_args[0] != 0)
      cannot_chunk(s,
                   "its result has the batch axis, and its table entry "
                   "does not say how to compute it a chunk at a time");
    running_ = nullptr;
    std::vector<Tensor> whole = shares[0].whole(total);
    running_ = &run;
    std::vector<Tensor> outs;
    for (int64_t j = 0; j < ch->count(); ++j) {
      set_chunk(j);
      std::vector<Tensor> used;
      for (const Tensor& w : whole) used.push_back(run.use(w, *this));
      outs.push_back(shares[j].rows(chunk_args[j][0].t, used));
    }
    if (outs.size() == 1) return Value::tensor(outs[0]);
    return Value::tensor(ops::concat(outs, out));
  } catch (const ops::OpError& e) {
    c.fail(e.kind() == ops::OpError::Kind::Shape ? "ShapeError" : "ValueError",
           std::string(c.op.name) + ": " + e.what());
  }
}

}  // namespace ss::devices::lower
