#include "interp/eval/objects.h"

#include <stdexcept>

#include "interp/eval/device_hooks.h"
#include "ops/api.h"

namespace ss::eval {

std::vector<std::string> ModelRef::paths(bool params_only) const {
  std::vector<std::string> out;
  for (const std::string& p : store->order) {
    if (p.compare(0, prefix.size(), prefix) != 0) continue;
    if (params_only) {
      auto b = store->is_buffer.find(p);
      if (b != store->is_buffer.end() && b->second) continue;
    }
    out.push_back(p.substr(prefix.size()));
  }
  return out;
}

void sync(ModelStore& s) {
  if (s.newer_on) s.newer_on->fetch(s);
}

const OptimHyper& OptimSettings::hyper_of(const std::string& key) const {
  for (const ParamGroup& g : groups)
    for (const std::string& p : g.paths)
      if (p == key) return g.hyper;
  return *this;
}

void sync(OptimState& o) {
  if (o.newer_on) o.newer_on->fetch(o);
}

void load_unloaded_batch(Interpreter& in, RecordValue& r) {
  if (!r.lazy) return;
  // Taken first: the record is whole after this, even if loading fails.
  std::shared_ptr<const UnloadedBatch> lazy = std::move(r.lazy);
  lazy->load_into(in, r);
}

std::map<std::string, ops::Shape> ModelRef::whole_shapes() const {
  std::map<std::string, ops::Shape> out;
  for (const auto& [p, shape] : store->whole)
    if (p.compare(0, prefix.size(), prefix) == 0)
      out[p.substr(prefix.size())] = shape;
  return out;
}

std::map<std::string, int> ModelRef::heads_axes() const {
  std::map<std::string, int> out;
  for (const auto& [p, axis] : store->heads)
    if (p.compare(0, prefix.size(), prefix) == 0)
      out[p.substr(prefix.size())] = axis - static_cast<int>(index.size());
  return out;
}

int64_t ModelRef::stack_size() const {
  for (const std::string& p : paths(false)) return shape_of(p).at(0);
  return 0;
}

ops::Shape ModelRef::shape_of(const std::string& path) const {
  auto whole = store->whole.find(prefix + path);
  if (whole == store->whole.end()) return get(path).shape();
  return ops::Shape(whole->second.begin() + index.size(), whole->second.end());
}

std::vector<std::shared_ptr<ModelRef>> ModelRef::stack_items() const {
  std::vector<std::shared_ptr<ModelRef>> out;
  const int64_t n = stack_size();
  for (int64_t i = 0; i < n; ++i) {
    auto r = std::make_shared<ModelRef>(*this);
    r->index.push_back(i);
    if (!r->type.stack.empty()) r->type.stack.erase(r->type.stack.begin());
    out.push_back(std::move(r));
  }
  return out;
}

ops::Tensor ModelRef::get(const std::string& path) const {
  sync(*store);
  ops::Tensor t = store->tensors.at(prefix + path);
  // A rank's piece of a sharded param is flat: one of a stack is read
  // whole (a ParamRead op site: Note [Op sites]), never cut from the piece.
  if (!index.empty() && store->whole.count(prefix + path))
    throw std::runtime_error(
        "one model of a stack can't be updated or differentiated alone "
        "with `shard params` (not in this build)");
  for (int64_t i : index) t = ops::take_one(t, i, 0);
  return t;
}

namespace {

// [x] with x[i] (along axis 0) replaced by [v].
ops::Tensor put_one(const ops::Tensor& x, int64_t i, const ops::Tensor& v) {
  int64_t n = x.shape()[0];
  std::vector<ops::Tensor> parts;
  if (i > 0) parts.push_back(ops::slice(x, 0, 0, i));
  parts.push_back(ops::unsqueeze(v, 0));
  if (i + 1 < n) parts.push_back(ops::slice(x, 0, i + 1, n));
  return ops::concat(parts, 0);
}

ops::Tensor put_path(const ops::Tensor& x,
                     const std::vector<int64_t>& index,
                     size_t k,
                     const ops::Tensor& v) {
  if (k == index.size()) return v;
  ops::Tensor inner = ops::take_one(x, index[k], 0);
  return put_one(x, index[k], put_path(inner, index, k + 1, v));
}

}  // namespace

ops::Tensor put_at(const ops::Tensor& x,
                   const std::vector<int64_t>& index,
                   const ops::Tensor& v) {
  return put_path(x, index, 0, v);
}

void ModelRef::set(const std::string& path, const ops::Tensor& t) {
  // Changed here: the workers' copy (if any) is stale, send it whole again.
  sync(*store);
  store->remote_id = 0;
  ops::Tensor& slot = store->tensors.at(prefix + path);
  // A value made on the host (a load, set_params) joins its model's device.
  const ops::Tensor placed = t.to(slot.device());
  slot = index.empty() ? placed : put_at(slot, index, placed);
}

const Value* LogsValue::find(const std::string& name) const {
  for (const auto& [n, v] : fields)
    if (n == name) return &v;
  return nullptr;
}

}  // namespace ss::eval
