// Cutting arguments into blocks and joining results (blocks.h).
#include "interp/eval/spmd/blocks.h"

#include <algorithm>
#include <functional>

#include "interp/eval/objects.h"
#include "ops/api.h"

namespace ss::eval::spmd {

using VK = Value::Kind;
using TK = types::Type::Kind;

namespace {

// How many blocks [split] cuts an axis into, and which one instance [n]
// holds (mixed radix over the split, its first axis major).
struct Cut {
  int64_t count = 1, index = 0;
};

Cut cut(const MeshShape& mesh,
        int64_t n,
        const std::vector<std::string>& split) {
  std::vector<int64_t> c = mesh.coords(n);
  Cut r;
  for (const std::string& name : split) {
    int p = mesh.axis_pos(name);
    if (p < 0) continue;
    r.count *= mesh.axes()[p].size;
    r.index = r.index * mesh.axes()[p].size + c[p];
  }
  return r;
}

ops::Tensor slice_block(const ops::Tensor& x, int axis, Cut c) {
  int64_t len = x.shape()[axis] / c.count;
  return ops::slice(x, axis, c.index * len, (c.index + 1) * len);
}

ops::Tensor tensor_block(const MeshShape& mesh,
                         int64_t n,
                         ops::Tensor x,
                         const types::Type& t) {
  for (size_t d = 0; d < t.shape.size() && d < x.rank(); ++d)
    if (!t.shape[d].split.empty())
      x = slice_block(
          x, static_cast<int>(d), cut(mesh, n, t.shape[d].split.axes));
  return x;
}

// A model's block: a private store whose split fields hold this instance's
// slice of their first axis.
Value model_block(const MeshShape& mesh,
                  int64_t n,
                  const ModelRef& m,
                  const ast::TypeExpr* te) {
  auto store = std::make_shared<ModelStore>();
  store->info = m.type.model;
  store->args = m.type.model_args;
  for (const std::string& p : m.paths(false)) {
    const std::vector<std::string>* split = te ? &te->split : nullptr;
    if (te && split->empty())
      for (const ast::FieldSpec& f : te->field_specs)
        if (p == f.field ||
            p.compare(0, f.field.size() + 1, f.field + ".") == 0)
          split = &f.split;
    ops::Tensor x = m.get(p);
    if (split && !split->empty() && x.rank() > 0)
      x = slice_block(x, 0, cut(mesh, n, *split));
    store->tensors[p] = x;
    store->order.push_back(p);
    store->is_buffer[p] = m.store->is_buffer[m.prefix + p];
  }
  auto r = std::make_shared<ModelRef>();
  r->store = store;
  r->type = m.type;
  return Value::object(VK::Model, r);
}

// A batch's block (`batch: [b/x] Digit`): every field's rows (masks
// included) cut along the batch axis.
Value batch_block(const MeshShape& mesh,
                  int64_t n,
                  const RecordValue& r,
                  const types::Type& t) {
  auto out = std::make_shared<RecordValue>(r);
  if (!t.shape.empty() && !t.shape[0].split.empty())
    for (auto& [name, x] : out->fields)
      if (x.rank() > 0)
        x = slice_block(x, 0, cut(mesh, n, t.shape[0].split.axes));
  return Value::object(VK::Record, out);
}

}  // namespace

Value block_of(const MeshShape& mesh,
               int64_t n,
               const Value& v,
               const types::Type& t,
               const ast::TypeExpr* te) {
  if (v.kind == VK::Tensor && t.kind == TK::Tensor)
    return Value::tensor(tensor_block(mesh, n, v.t, t));
  if (v.kind == VK::Record && t.kind == TK::Batch && !v.as<RecordValue>()->lazy)
    return batch_block(mesh, n, *v.as<RecordValue>(), t);
  if (v.kind == VK::Model && t.kind == TK::Model && te)
    return model_block(mesh, n, *v.as<ModelRef>(), te);
  if ((v.kind == VK::Tuple || v.kind == VK::List) && t.kind == TK::Tuple) {
    std::vector<Value> items;
    for (size_t i = 0; i < v.items->size(); ++i) {
      const ast::TypeExpr* e =
          te && i < te->elems.size() ? &te->elems[i] : nullptr;
      items.push_back(i < t.elems.size()
                          ? block_of(mesh, n, (*v.items)[i], t.elems[i], e)
                          : (*v.items)[i]);
    }
    return v.kind == VK::Tuple ? Value::tuple(std::move(items))
                               : Value::list(std::move(items));
  }
  // A Train mode: each instance its own copy of the draw counters (the
  // instances run at once), so every instance draws as the caller would,
  // the same masks for its block as a replicated key gives in JAX.
  if (v.kind == VK::Mode && v.obj) {
    Value m = v;
    m.obj = std::make_shared<ModeState>(*v.as<ModeState>());
    return m;
  }
  return v;  // host values, and whatever a type does not split: whole
}

Value param_block(const MeshShape& mesh,
                  int64_t n,
                  const Value& v,
                  const check::ParamInfo& p) {
  if (v.kind == VK::Unit) return v;
  return block_of(
      mesh, n, v, p.type, p.decl && p.decl->type ? &*p.decl->type : nullptr);
}

namespace {

// The mesh axes a result type splits somewhere.
void mentioned(const types::Type& t, std::vector<std::string>& out) {
  for (const types::Axis& a : t.shape)
    out.insert(out.end(), a.split.begin(), a.split.end());
  for (const types::Type& e : t.elems) mentioned(e, out);
}

ops::Tensor join_tensor(const MeshShape& mesh,
                        const std::vector<ops::Tensor>& blocks,
                        const std::vector<int64_t>& who,
                        const types::Type& t) {
  // Each holder's block index along each axis, and the axes' block counts.
  const size_t rank = blocks[who[0]].rank();
  std::vector<int64_t> counts(rank, 1);
  std::vector<std::vector<int64_t>> at(who.size(), std::vector<int64_t>(rank));
  for (size_t d = 0; d < rank && d < t.shape.size(); ++d)
    for (size_t k = 0; k < who.size(); ++k) {
      Cut c = cut(mesh, who[k], t.shape[d].split.axes);
      counts[d] = c.count;
      at[k][d] = c.index;
    }
  // Concatenate along axis d the joins of the blocks that agree on the
  // indices before d.
  std::function<ops::Tensor(size_t, std::vector<int64_t>&)> build =
      [&](size_t d, std::vector<int64_t>& prefix) -> ops::Tensor {
    if (d == rank) {
      for (size_t k = 0; k < who.size(); ++k)
        if (std::equal(prefix.begin(), prefix.end(), at[k].begin()))
          return blocks[who[k]];
      return ops::Tensor();
    }
    std::vector<ops::Tensor> parts;
    for (int64_t b = 0; b < counts[d]; ++b) {
      prefix.push_back(b);
      parts.push_back(build(d + 1, prefix));
      prefix.pop_back();
    }
    return parts.size() == 1 ? parts[0]
                             : ops::concat(parts, static_cast<int>(d));
  };
  std::vector<int64_t> prefix;
  return build(0, prefix);
}

Value join_with(const MeshShape& mesh,
                const std::vector<Value>& results,
                const std::vector<int64_t>& who,
                const types::Type& t) {
  const Value& first = results[who[0]];
  if (first.kind == VK::Tensor && t.kind == TK::Tensor) {
    std::vector<ops::Tensor> blocks(results.size());
    for (int64_t k : who) blocks[k] = results[k].t;
    return Value::tensor(join_tensor(mesh, blocks, who, t));
  }
  if ((first.kind == VK::Tuple || first.kind == VK::List) &&
      t.kind == TK::Tuple) {
    std::vector<Value> items;
    for (size_t i = 0; i < first.items->size(); ++i) {
      std::vector<Value> each(results.size());
      for (int64_t k : who) each[k] = (*results[k].items)[i];
      items.push_back(i < t.elems.size()
                          ? join_with(mesh, each, who, t.elems[i])
                          : each[who[0]]);
    }
    return first.kind == VK::Tuple ? Value::tuple(std::move(items))
                                   : Value::list(std::move(items));
  }
  return first;
}

}  // namespace

Value join(const MeshShape& mesh,
           const std::vector<Value>& results,
           const types::Type& t) {
  std::vector<std::string> used;
  mentioned(t, used);
  // The instances at index 0 along every mesh axis the type leaves out.
  std::vector<int64_t> who;
  for (int64_t n = 0; n < mesh.instances(); ++n) {
    std::vector<int64_t> c = mesh.coords(n);
    bool keep = true;
    for (size_t k = 0; k < mesh.axes().size(); ++k)
      if (c[k] != 0 &&
          std::find(used.begin(), used.end(), mesh.axes()[k].name) ==
              used.end())
        keep = false;
    if (keep) who.push_back(n);
  }
  return join_with(mesh, results, who, t);
}

}  // namespace ss::eval::spmd
