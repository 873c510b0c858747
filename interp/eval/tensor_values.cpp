#include "interp/eval/tensor_values.h"

#include <stdexcept>

#include "ops/api.h"
#include "ops/registry/run_on_tensors.h"

namespace ss::eval {

using VK = Value::Kind;
using types::DType;

ops::Tensor number_tensor(const Value& v) {
  switch (v.kind) {
    case VK::Int:
      return ops::Tensor::integer_scalar(v.i, DType::I64);
    case VK::Float:
      return ops::Tensor::scalar(v.f, DType::F32);
    case VK::Bool:
      return ops::Tensor::scalar(v.b ? 1 : 0, DType::Bool);
    case VK::Tensor:
      return v.t;
    default:
      throw std::logic_error("not a number");
  }
}

ops::Tensor as_tensor(const Value& v, const Value& partner) {
  if (v.kind == VK::Tensor) return v.t;
  if (partner.kind != VK::Tensor) return number_tensor(v);
  DType d = partner.t.dtype();
  double x = v.number();
  switch (v.kind) {
    case VK::Float:
      return ops::Tensor::scalar(x, types::is_float(d) ? d : DType::F32);
    case VK::Int:  // never through the double (issue 32 item 2)
      return ops::Tensor::integer_scalar(v.i,
                                         d == DType::Bool ? DType::I64 : d);
    case VK::Bool:
      return ops::Tensor::scalar(x, d);
    default:
      throw std::logic_error("not a number");
  }
}

Value make_grads(const ModelRef& like,
                 const std::map<std::string, ops::Tensor>& grads,
                 const std::map<std::string, ops::Shape>& whole,
                 const std::map<std::string, int>& heads) {
  auto store = std::make_shared<ModelStore>();
  store->info = like.store->info;
  store->args = like.store->args;
  store->whole = whole;
  store->heads = heads;
  for (const auto& [path, t] : grads) {
    store->tensors[path] = t;
    store->order.push_back(path);
    store->is_buffer[path] = false;
  }
  auto ref = std::make_shared<ModelRef>();
  ref->store = store;
  ref->type = like.type;
  ref->type.kind = types::Type::Kind::Grads;
  return Value::object(VK::Grads, ref);
}

Value grads_map(const Value& g,
                const std::function<ops::Tensor(const ops::Tensor&)>& fn) {
  auto* m = g.as<ModelRef>();
  std::map<std::string, ops::Tensor> out;
  for (const std::string& p : m->paths(true)) out[p] = fn(m->get(p));
  ModelRef like = *m;
  like.prefix.clear();
  like.index.clear();
  return make_grads(like, out, m->whole_shapes(), m->heads_axes());
}

Value params_as_grads(const Value& m) {
  if (m.kind != VK::Model) return m;
  return grads_map(m, [](const ops::Tensor& t) { return t; });
}

Value grads_binary(const ops::OpDef& op,
                   const Value& a0,
                   const Value& b0,
                   diag::Span at) {
  const Value a = params_as_grads(a0), b = params_as_grads(b0);
  if (a.kind == VK::Grads && b.kind == VK::Grads) {
    auto* x = a.as<ModelRef>();
    auto* y = b.as<ModelRef>();
    std::map<std::string, ops::Tensor> out;
    for (const std::string& p : x->paths(true))
      out[p] = ops::run_on_tensors(op, {x->get(p), y->get(p)});
    ModelRef like = *x;
    like.prefix.clear();
    like.index.clear();
    return make_grads(like, out, x->whole_shapes(), x->heads_axes());
  }
  const bool grads_first = a.kind == VK::Grads;
  const double k = (grads_first ? b : a).number();
  return grads_map(grads_first ? a : b, [&](const ops::Tensor& t) {
    ops::Tensor kt = ops::scalar_like(k, t);
    return grads_first ? ops::run_on_tensors(op, {t, kt})
                       : ops::run_on_tensors(op, {kt, t});
  });
}

}  // namespace ss::eval
