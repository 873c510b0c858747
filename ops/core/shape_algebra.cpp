#include "ops/core/shape_algebra.h"

#include <algorithm>
#include <cctype>

namespace ss::ops {

using K = Type::Kind;

bool any_error(std::initializer_list<const Type*> ts) {
  for (const Type* t : ts)
    if (t->is_error()) return true;
  return false;
}

int category(DType d) {
  if (d == DType::Bool) return 0;
  return types::is_int(d) ? 1 : 2;
}

int category(const Type& t) {
  switch (t.kind) {
    case K::Bool:
      return 0;
    case K::Int:
      return 1;
    case K::Float:
      return 2;
    case K::Tensor:
      return category(t.dtype);
    default:
      return 2;
  }
}

DType default_dtype(int cat) {
  return cat == 0 ? DType::Bool : cat == 1 ? DType::I64 : DType::F32;
}

DType tensor_dtype(const Type& t) {
  if (t.is_tensor()) return t.dtype;
  return default_dtype(category(t));
}

void normalize_names(std::vector<std::string>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

std::vector<std::string> union_varying(std::initializer_list<const Type*> ts) {
  std::vector<std::string> v;
  for (const Type* t : ts)
    if (t->is_tensor()) v.insert(v.end(), t->varying.begin(), t->varying.end());
  normalize_names(v);
  return v;
}

void add_varying(std::vector<std::string>& v, const std::string& name) {
  v.push_back(name);
  normalize_names(v);
}

DType float_result(DType d) {
  return types::is_float(d) ? d : DType::F32;
}

DType sum_result(DType d) {
  return types::is_float(d) ? d : DType::I64;
}

namespace {
// torch.result_type's priority: dimensioned tensors, then 0-d tensors,
// then host scalars.
int priority(const Type& t) {
  if (!t.is_tensor()) return 0;
  return t.shape.empty() ? 1 : 2;
}
}  // namespace

Type result_dtype(const Type& a, const Type& b, Arith arith) {
  if (!a.is_tensor() && !b.is_tensor()) {
    if (arith == Arith::TrueDiv || a.kind == K::Float || b.kind == K::Float)
      return Type::of(K::Float);
    return Type::of(K::Int);
  }
  DType d;
  int pa = priority(a), pb = priority(b);
  if (pa == pb) {
    d = types::promote(a.dtype, b.dtype);
  } else {
    const Type& hi = pa > pb ? a : b;
    const Type& lo = pa > pb ? b : a;
    if (category(lo) > category(hi))
      d = lo.is_tensor() ? lo.dtype : default_dtype(category(lo));
    else
      d = hi.dtype;
  }
  if (arith == Arith::TrueDiv && !types::is_float(d)) d = DType::F32;
  return Type::scalar(d);
}

std::optional<Axes> broadcast_shapes(const Axes& a,
                                     const Axes& b,
                                     const Axis** bad_a,
                                     const Axis** bad_b) {
  size_t n = std::max(a.size(), b.size());
  Axes out(n);
  for (size_t k = 0; k < n; ++k) {
    // k counts from the right.
    const Axis* x = k < a.size() ? &a[a.size() - 1 - k] : nullptr;
    const Axis* y = k < b.size() ? &b[b.size() - 1 - k] : nullptr;
    Axis& r = out[n - 1 - k];
    if (!x) {
      r = *y;
    } else if (!y) {
      r = *x;
    } else if (*x == *y) {
      r = *x;
    } else if (x->is_one()) {
      r = *y;
    } else if (y->is_one()) {
      r = *x;
    } else {
      if (bad_a) *bad_a = x;
      if (bad_b) *bad_b = y;
      return std::nullopt;
    }
  }
  return out;
}

Axes remove_axes(const Axes& shape, const std::vector<size_t>& positions) {
  Axes out;
  for (size_t i = 0; i < shape.size(); ++i)
    if (std::find(positions.begin(), positions.end(), i) == positions.end())
      out.push_back(shape[i]);
  return out;
}

bool same_axis_base(const Axis& a, const Axis& b) {
  Axis x = a, y = b;
  x.split.clear();
  y.split.clear();
  return x == y;
}

std::optional<int64_t> static_numel(const Axes& shape) {
  int64_t n = 1;
  for (const Axis& a : shape) {
    auto s = a.static_size();
    if (!s) return std::nullopt;
    n *= *s;
  }
  return n;
}

Type as_tensor(const Type& t) {
  if (t.is_tensor()) return t;
  return Type::scalar(tensor_dtype(t));
}

}  // namespace ss::ops
