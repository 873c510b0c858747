#include "interp/embed/host_types.h"

#include <functional>

#include "ops/core/dtype.h"

namespace ss::embed {

using TK = types::Type::Kind;

std::string param_type(types::Type t, size_t k) {
  std::function<void(types::Axis&)> rename = [&](types::Axis& a) {
    if (a.kind == types::Axis::Kind::Var) a.name += "_" + std::to_string(k);
    a.label.clear();
    for (auto& i : a.items) rename(i);
  };
  std::function<void(types::Type&)> walk = [&](types::Type& x) {
    for (auto& a : x.shape) rename(a);
    x.varying.clear();
    for (auto& e : x.elems) walk(e);
  };
  walk(t);
  if (t.kind == TK::Bool) return "";  // host bools cannot be declared
  if (t.kind == TK::Tensor && t.shape.empty())
    return types::dtype_name(t.dtype);
  return t.str();
}

namespace {

std::string sizes_text(const ops::Tensor& x) {
  std::string s = "[";
  for (size_t i = 0; i < x.rank(); ++i)
    s += (i ? " " : "") + std::to_string(x.shape()[i]);
  return s + "]";
}

[[noreturn]] void size_var_mismatch(const std::string& arg,
                                    const std::string& callee,
                                    const types::Type& want,
                                    const ops::Tensor& x,
                                    const std::string& var,
                                    const HostSizes::Bound& first) {
  CheckFailed f;
  Problem& p = f.problems.emplace_back();
  p.code = "E0303";
  p.message = "argument `" + arg + "` of `" + callee + "` must be " +
              want.str() + ", found " + sizes_text(x) + " " +
              types::dtype_name(x.dtype());
  p.text = "error[E0303]: " + p.message + "\n  = note: `" + var + "` is " +
           std::to_string(first.size) + " in `" + first.by +
           "`, and every argument's `" + var + "` is the same size\n";
  f.text = p.text;
  throw f;
}

}  // namespace

std::string host_tensor_type(const ops::Tensor& x,
                             const types::Type* want,
                             const std::string& arg,
                             const std::string& callee,
                             HostSizes& sizes) {
  const std::string dtype = types::dtype_name(x.dtype());
  const bool aligned =
      want && want->kind == TK::Tensor && want->shape.size() == x.rank();
  if (x.rank() == 0) return dtype;
  std::string s = "[";
  for (size_t i = 0; i < x.rank(); ++i) {
    const int64_t n = x.shape()[i];
    std::string axis = std::to_string(n);
    if (aligned) {
      const types::Axis& a = want->shape[i];
      if (a.kind == types::Axis::Kind::Dim && a.size == n) {
        axis = a.name;
      } else if (a.kind == types::Axis::Kind::Var) {
        auto [it, fresh] =
            sizes.vars.try_emplace(a.name, HostSizes::Bound{a.name, n, arg});
        if (!fresh && it->second.size != n)
          size_var_mismatch(arg, callee, *want, x, a.name, it->second);
        axis = it->second.written;
      } else if (a.kind == types::Axis::Kind::Group && a.static_size() &&
                 *a.static_size() == n) {
        axis = a.str();
      }
    }
    s += (i ? " " : "") + axis;
  }
  return s + "] " + dtype;
}

types::Type type_of_value(const eval::Value& v) {
  types::Type t;
  using VK = eval::Value::Kind;
  switch (v.kind) {
    case VK::Int:
      t.kind = TK::Int;
      break;
    case VK::Float:
      t.kind = TK::Float;
      break;
    case VK::Bool:
      t.kind = TK::Bool;
      break;
    case VK::Str:
      t.kind = TK::Str;
      break;
    case VK::Tensor:
      t.kind = TK::Tensor;
      t.dtype = v.t.dtype();
      for (int64_t n : v.t.shape()) t.shape.push_back(types::Axis::lit(n));
      break;
    case VK::Tuple:
      t.kind = TK::Tuple;
      if (v.items)
        for (const eval::Value& i : *v.items)
          t.elems.push_back(type_of_value(i));
      break;
    default:
      t.kind = TK::Error;  // not declarable: it cannot go back into a call
      break;
  }
  return t;
}

}  // namespace ss::embed
