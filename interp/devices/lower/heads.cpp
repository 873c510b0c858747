// The ranks' side of `split H`: Note [Split heads] in
// interp/check/plan/heads_plan.cpp says what each op does; here are the
// collectives that do it, each with the VJP that runs the plan backwards.
//
// Note [Heads one at a time]
// Deterministic mode (Note [Deterministic mode] in chunks.h) with `split
// H`. The batch is whole on every rank, so nothing is cut into chunks; what
// changes bits across layouts is where heads are added: a Partial op sums
// a rank's heads in one product (`o @ m.w_o` over (H Dh): the kernel adds
// H/N·Dh columns), then the ranks' sums in the all-reduce's order; a whole
// operand tied to the heads (`h @ m.wq`) gets a cotangent summed the same
// way; and a product's kernel may change its blocking with the number of
// heads' columns it has. So in this mode a Local or Partial op runs once
// per head this rank holds, with H taken as 1 (ChunkedSites::run_pieces,
// the heads its pieces: ChunkLayout::each_one): every product has one
// head's shape on every layout. A Local op's heads are joined again; a
// Partial op's values are added in the fold tree over the global head
// indices, as a chunked reduction's payloads are (each rank folds its
// complete subtrees, the subtrees are exchanged, every rank folds the rest
// alike), and each head's use of a whole operand is its own tape node,
// whose cotangents are folded in the same tree (Note [Chunked sites]) in
// place of the tie's all-reduce. A Cut's cotangent is the ranks' blocks
// joined (an all-gather; no zeros are added, which would turn a -0 into
// +0). One device runs a rank of one with `split H` (one_device.cpp): the
// same heads, the same tree, the bits the others match.
#include "interp/devices/lower/heads.h"

#include <stdexcept>
#include <tuple>

#include "dist/comm/communicator.h"
#include "interp/devices/lower/chunked_sites.h"
#include "interp/devices/lower/lowering.h"
#include "interp/devices/lower/shards.h"
#include "interp/eval/interpreter.h"
#include "ops/api.h"
#include "ops/autodiff/tape.h"

namespace ss::devices::lower {

// The evaluator's values and objects, which the ranks' code works on.
using namespace ss::eval;

using ops::Tensor;
using VK = Value::Kind;

namespace {

// Block [rank] of [world] equal blocks of [t] along [axis].
Tensor block(const Tensor& t, int axis, int rank, int world) {
  const int64_t n = t.shape()[axis] / world;
  return ops::slice(t, axis, rank * n, (rank + 1) * n);
}

// Every rank's [local] joined along [axis] (plain, no tape).
Tensor joined(const Tensor& local, int axis, DeviceContext& d) {
  if (d.world == 1) return local.detach();  // deterministic mode's one device
  const int rank = static_cast<int>(local.rank());
  std::vector<int> to_front(rank), back(rank);
  to_front[0] = axis;
  for (int k = 0, j = 1; k < rank; ++k)
    if (k != axis) to_front[j++] = k;
  for (int k = 0; k < rank; ++k) back[to_front[k]] = k;
  Tensor front =
      axis == 0 ? local.detach() : ops::permute(local.detach(), to_front);
  Tensor out;
  {
    Waiting w(d);
    d.comm->all_gather(front, out, dist::Options{});
  }
  return axis == 0 ? out : ops::permute(out, back);
}

Tensor summed(const Tensor& x, DeviceContext& d) {
  Tensor t = x.detach().clone();
  if (d.world == 1) return t;
  Waiting w(d);
  d.comm->all_reduce(t, dist::ReduceOp::Sum, dist::Options{});
  return t;
}

// The op runs on this rank's heads: dim [name] counts its local share.
struct LocalDim {
  Interpreter& in;
  LocalDim(Interpreter& i, const std::string& name, int64_t size) : in(i) {
    in.set_local_dim(name, size);
  }
  ~LocalDim() { in.set_local_dim("", 0); }
};

// The heads path of each field of model type [m] (stack axes counted).
void head_axes(const types::Type& m,
               const std::string& prefix,
               const std::string& dim,
               std::map<std::string, int>& out) {
  if (!m.model) return;
  for (const types::FieldInfo& f : m.model->fields) {
    types::Type ft = types::model_field_type(m, f);
    if (ft.kind == types::Type::Kind::Model)
      head_axes(ft, prefix + f.name + ".", dim, out);
    else if (int a = check::heads_axis(ft, dim); a >= 0)
      out[prefix + f.name] = a;
  }
}

}  // namespace

Tensor cut_heads(const Tensor& whole, int axis, DeviceContext& d) {
  if (d.world == 1) return whole;  // deterministic mode's one device
  Tensor out = block(whole.detach(), axis, d.rank, d.world);
  if (!types::is_float(whole.dtype())) return out;
  DeviceContext* dp = &d;
  const int64_t len = whole.shape()[axis];
  if (d.deterministic)
    // Note [Heads one at a time]: the blocks joined, with no zeros added.
    return ops::record("cut_heads", out, {whole}, [dp, axis](const Tensor& g) {
      return std::vector<Tensor>{joined(g, axis, *dp)};
    });
  return ops::record(
      "cut_heads", out, {whole}, [dp, axis, len](const Tensor& g) {
        // The block's cotangent in place, zeros elsewhere; every rank's sum
        // is the whole value's cotangent.
        const int64_t n = len / dp->world;
        Tensor full =
            ops::pad(g, axis, dp->rank * n, (dp->world - 1 - dp->rank) * n);
        return std::vector<Tensor>{summed(full, *dp)};
      });
}

Tensor gather_heads(const Tensor& local, int axis, DeviceContext& d) {
  if (d.world == 1) return local;
  Tensor out = joined(local, axis, d);
  if (!types::is_float(local.dtype())) return out;
  DeviceContext* dp = &d;
  return ops::record("gather_heads", out, {local}, [dp, axis](const Tensor& g) {
    return std::vector<Tensor>{block(g, axis, dp->rank, dp->world)};
  });
}

Tensor tie_heads(const Tensor& whole, DeviceContext& d) {
  if (!types::is_float(whole.dtype())) return whole;
  DeviceContext* dp = &d;
  return ops::record("tie_heads", whole, {whole}, [dp](const Tensor& g) {
    return std::vector<Tensor>{summed(g, *dp)};
  });
}

Tensor sum_heads(const Tensor& partial, DeviceContext& d) {
  Tensor out = summed(partial, d);
  if (!types::is_float(partial.dtype())) return out;
  return ops::record("sum_heads", out, {partial}, [](const Tensor& g) {
    return std::vector<Tensor>{g};
  });
}

namespace {

// Each head's value of one tensor (or number) of a Local op's result
// joined along its heads axis [axis]; of a Partial op's, added in the
// heads' fold tree [heads], across the ranks even where this rank holds
// one head (Note [Heads one at a time]).
Value join_or_fold(const std::vector<Value>& each,
                   int axis,
                   bool partial,
                   const Chunks& heads,
                   ChunkedSites& pieces) {
  if (partial && each.at(0).is_number()) {
    std::vector<Tensor> ts;
    for (const Value& v : each)
      ts.push_back(Tensor::scalar(v.number(), types::DType::F64));
    return Value::floating(pieces.fold(ts, heads).item());
  }
  std::vector<Tensor> ts;
  for (const Value& v : each) {
    if (v.kind != VK::Tensor)
      throw std::logic_error("an op on one head at a time gave no tensor");
    ts.push_back(v.t);
  }
  if (partial) return Value::tensor(pieces.fold_taped(ts, heads));
  return Value::tensor(ts.size() == 1 ? ts[0] : ops::concat(ts, axis));
}

// A Local or Partial op run once per head here (Note [Heads one at a
// time]).
Value one_head_at_a_time(Interpreter& in,
                         const check::HeadsSite& site,
                         std::vector<Tensor*>& operands,
                         const std::function<Value()>& run,
                         bool partial,
                         ChunkedSites& pieces,
                         DeviceContext& d) {
  const std::string& dim = d.split_dim;
  const int64_t local = d.split_size / d.world;
  Chunks heads;
  heads.layout = ChunkLayout::each_one(d.split_size, d.world);
  std::tie(heads.a, heads.b) = heads.layout.chunks_of(d.rank);
  heads.row0 = heads.a;
  heads.across = d.active();
  std::vector<Cut> cuts(operands.size());
  for (size_t i = 0; i < operands.size() && i < site.operands.size(); ++i)
    if (int a = check::heads_axis(site.operands[i], dim); a >= 0)
      cuts[i] = Cut{a, operands[i]->shape()[a] / local};
  std::vector<Value> each;
  {
    LocalDim one(in, dim, 1);
    each = pieces.run_pieces(run, operands, cuts, heads);
  }
  // A tuple item by item, each along its own heads axis.
  const std::vector<int> axes = check::result_heads_axes(site.result, dim);
  if (each.at(0).kind != VK::Tuple)
    return join_or_fold(each, axes.at(0), partial, heads, pieces);
  std::vector<Value> items;
  for (size_t k = 0; k < each[0].items->size(); ++k) {
    std::vector<Value> item;
    for (const Value& v : each) item.push_back(v.items->at(k));
    items.push_back(join_or_fold(
        item, k < axes.size() ? axes[k] : -1, partial, heads, pieces));
  }
  return Value::tuple(std::move(items));
}

}  // namespace

std::optional<Value> run_heads(Interpreter& in,
                               const check::HeadsSite& site,
                               std::vector<Tensor*>& operands,
                               const std::function<Value()>& run,
                               diag::Span at,
                               DeviceContext& d,
                               ChunkedSites* one_at_a_time) {
  using S = check::HeadsStep;
  const std::string& dim = d.split_dim;
  const S step = check::plan_heads(site, dim);
  if (step == S::None) return std::nullopt;
  d.at = at;
  const int64_t local = d.split_size / d.world;
  if (one_at_a_time && (step == S::Local || step == S::Partial)) {
    Value v = one_head_at_a_time(
        in, site, operands, run, step == S::Partial, *one_at_a_time, d);
    d.at = at;
    return v;
  }
  if (step == S::Local || step == S::Partial) {
    // A whole operand beside split ones meets only this rank's heads, so
    // its cotangent here covers them alone (Megatron's f).
    for (size_t i = 0; i < operands.size() && i < site.operands.size(); ++i)
      if (check::heads_axis(site.operands[i], dim) < 0)
        *operands[i] = tie_heads(*operands[i], d);
  }
  switch (step) {
    case S::None:
      break;
    case S::Cut:
      return cut_value(run(), site.result, d);
    case S::Local: {
      LocalDim heads(in, dim, local);
      return run();
    }
    case S::Partial: {
      Value v;
      {
        LocalDim heads(in, dim, local);
        v = run();
      }
      d.at = at;
      if (v.kind == VK::Tensor) return Value::tensor(sum_heads(v.t, d));
      if (v.is_number()) {
        Tensor t = Tensor::scalar(v.number(), types::DType::F64).reshape({1});
        return Value::floating(summed(t, d).at(0));
      }
      return v;
    }
    case S::Gather:
      for (size_t i = 0; i < operands.size() && i < site.operands.size(); ++i)
        if (int a = check::heads_axis(site.operands[i], dim); a >= 0)
          *operands[i] = gather_heads(*operands[i], a, d);
      return cut_value(run(), site.result, d);
  }
  return std::nullopt;
}

namespace {

// [v] (of type [t]) with [f] applied to each tensor split by heads (and
// its axis); tuples item by item.
Value each_split(const Value& v,
                 const types::Type& t,
                 const std::string& dim,
                 const std::function<Tensor(const Tensor&, int)>& f) {
  if (v.kind == VK::Tensor) {
    const int a = check::heads_axis(t, dim);
    return a < 0 ? v : Value::tensor(f(v.t, a));
  }
  if (v.kind == VK::Tuple && t.kind == types::Type::Kind::Tuple) {
    std::vector<Value> items = *v.items;
    for (size_t i = 0; i < items.size() && i < t.elems.size(); ++i)
      items[i] = each_split(items[i], t.elems[i], dim, f);
    return Value::tuple(std::move(items));
  }
  return v;
}

}  // namespace

Value cut_value(const Value& v, const types::Type& t, DeviceContext& d) {
  return each_split(v, t, d.split_dim, [&](const Tensor& x, int a) {
    return cut_heads(x, a, d);
  });
}

Value gather_value(const Value& v, const types::Type& t, DeviceContext& d) {
  return each_split(v, t, d.split_dim, [&](const Tensor& x, int a) {
    return joined(x, a, d);
  });
}

void cut_store_heads(ModelStore& s,
                     const std::string& dim,
                     int rank,
                     int world) {
  types::Type m;
  m.kind = types::Type::Kind::Model;
  m.model = s.info;
  m.model_args = s.args;
  std::map<std::string, int> axes;
  head_axes(m, "", dim, axes);
  for (const auto& [path, axis] : axes) {
    auto t = s.tensors.find(path);
    if (t == s.tensors.end() || s.heads.count(path)) continue;
    t->second = block(t->second, axis, rank, world).clone();
    s.heads[path] = axis;
  }
}

void cut_optim_heads(OptimState& o, int rank, int world) {
  if (!o.model) return;
  for (auto& [path, st] : o.state) {
    auto h = o.model->heads.find(path);
    if (h == o.model->heads.end()) continue;
    const Tensor& mine = o.model->tensors.at(path);
    const int a = h->second;
    for (auto& [name, t] : st)
      if (t.defined() && t.rank() == mine.rank() &&
          t.shape()[a] == mine.shape()[a] * world)
        t = block(t, a, rank, world).clone();
  }
}

std::shared_ptr<const ModelStore> gathered_store(const ModelStore& s,
                                                 DeviceContext& d) {
  if (s.heads.empty()) return whole_store(s, d);
  auto out = std::make_shared<ModelStore>(s);
  out->heads.clear();
  for (const auto& [path, axis] : s.heads)
    out->tensors[path] = joined(s.tensors.at(path), axis, d);
  std::shared_ptr<const ModelStore> w = whole_store(*out, d);
  return w.get() == out.get() ? out : w;
}

Tensor gathered_tensor(const ModelStore& s,
                       const std::string& path,
                       DeviceContext& d) {
  auto t = s.tensors.find(path);
  if (t == s.tensors.end())
    throw std::runtime_error("the model has no field " + path);
  if (auto h = s.heads.find(path); h != s.heads.end())
    return joined(t->second, h->second, d);
  if (auto w = s.whole.find(path); w != s.whole.end())
    return whole_param(t->second, w->second, d);
  return t->second;
}

Tensor gathered_state(const OptimState& o,
                      const std::string& path,
                      const std::string& state,
                      DeviceContext& d) {
  auto st = o.state.find(path);
  if (st == o.state.end()) return {};
  auto t = st->second.find(state);
  if (t == st->second.end() || !t->second.defined()) return {};
  if (!o.model) return t->second;
  if (auto h = o.model->heads.find(path); h != o.model->heads.end())
    return joined(t->second, h->second, d);
  if (auto w = o.model->whole.find(path); w != o.model->whole.end())
    return whole_param(t->second, w->second, d);
  return t->second;
}

std::shared_ptr<const OptimState> gathered_optim(const OptimState& o,
                                                 DeviceContext& d) {
  if (!o.model || o.model->heads.empty()) return whole_optim(o, d);
  auto out = std::make_shared<OptimState>(o);
  // Every rank walks the same paths in the same order (std::map).
  for (auto& [path, st] : out->state) {
    auto h = o.model->heads.find(path);
    if (h == o.model->heads.end()) continue;
    for (auto& [name, t] : st)
      if (t.defined()) t = joined(t, h->second, d);
  }
  std::shared_ptr<const OptimState> w = whole_optim(*out, d);
  return w.get() == out.get() ? out : w;
}

}  // namespace ss::devices::lower
