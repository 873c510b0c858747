// The differentiable API, part 3: reductions.
//
// [axes] empty means every axis (the backend's empty means none). sum of
// ints and bools gives i64 (as torch); mean of them gives f32.

#include <string>

#include "ops/api.h"
#include "ops/api_detail.h"

namespace ss::ops {

using namespace detail;

namespace {

Tensor reduce_prim(ReduceOp op,
                   const Tensor& x,
                   const std::vector<int>& ax,
                   bool keepdims) {
  return backend_of(x).reduce(op, x, ax, keepdims);
}

void check_nonempty(const char* op,
                    const Tensor& x,
                    const std::vector<int>& ax) {
  for (int a : ax)
    if (x.shape()[a] == 0)
      value_error(op,
                  "reduction over an empty axis (axis " + std::to_string(a) +
                      " of " + shape_string(x.shape()) + ")");
}

// max and min: the cotangent goes to the elements equal to the extreme,
// split evenly among them (torch.amax's rule).
Tensor extreme(const char* name,
               ReduceOp op,
               const Tensor& x,
               const std::vector<int>& axes,
               bool keepdims) {
  check_defined(name, x);
  std::vector<int> ax = reduce_axes(name, axes, x.rank());
  check_nonempty(name, x, ax);
  Tensor y = reduce_prim(op, x, ax, keepdims);
  if (!types::is_float(x.dtype())) return y;
  Tensor xd = x.detach();
  return record(name, y, {x}, [xd, y, ax, keepdims](const Tensor& g) {
    Tensor hit =
        cast(eq(xd, expand_back(y, xd.shape(), ax, keepdims)), g.dtype());
    Tensor count = sum(hit, ax, true);
    Tensor w = div(hit, count);
    return std::vector<Tensor>{
        mul(w, expand_back(g, xd.shape(), ax, keepdims))};
  });
}

}  // namespace

Tensor sum(const Tensor& x0, const std::vector<int>& axes, bool keepdims) {
  const char* name = "sum";
  check_defined(name, x0);
  std::vector<int> ax = reduce_axes(name, axes, x0.rank());
  Tensor x = types::is_float(x0.dtype()) || x0.dtype() == DType::I64
                 ? x0
                 : cast(x0, DType::I64);
  Tensor y = reduce_prim(ReduceOp::Sum, x, ax, keepdims);
  if (!types::is_float(x.dtype())) return y;
  Shape xs = x.shape();
  return record(name, y, {x}, [xs, ax, keepdims](const Tensor& g) {
    return std::vector<Tensor>{expand_back(g, xs, ax, keepdims)};
  });
}

Tensor mean(const Tensor& x0, const std::vector<int>& axes, bool keepdims) {
  const char* name = "mean";
  check_defined(name, x0);
  std::vector<int> ax = reduce_axes(name, axes, x0.rank());
  Tensor x = types::is_float(x0.dtype()) ? x0 : cast(x0, DType::F32);
  int64_t count = 1;
  for (int a : ax) count *= x.shape()[a];
  // A composite: sum records its VJP, div by a constant records its own.
  // An empty reduction gives NaN (0/0), as torch.
  Tensor s = sum(x, ax, keepdims);
  return div(s, scalar_like(static_cast<double>(count), s));
}

Tensor max(const Tensor& x, const std::vector<int>& axes, bool keepdims) {
  return extreme("max", ReduceOp::Max, x, axes, keepdims);
}

Tensor min(const Tensor& x, const std::vector<int>& axes, bool keepdims) {
  return extreme("min", ReduceOp::Min, x, axes, keepdims);
}

Tensor prod(const Tensor& x0, const std::vector<int>& axes, bool keepdims) {
  const char* name = "prod";
  check_defined(name, x0);
  std::vector<int> ax = reduce_axes(name, axes, x0.rank());
  Tensor x = types::is_float(x0.dtype()) || x0.dtype() == DType::I64
                 ? x0
                 : cast(x0, DType::I64);
  Tensor y = reduce_prim(ReduceOp::Prod, x, ax, keepdims);
  if (!types::is_float(x.dtype())) return y;
  Tensor xd = x.detach();
  // The derivative w.r.t. x_i is the product of the others, computed
  // without dividing by a zero: with p = the product of the nonzero
  // elements of x_i's group and z = their number of zeros,
  //   x_i != 0: p / x_i if z == 0, else 0;
  //   x_i == 0: p if z == 1, else 0.
  return record(name, y, {x}, [xd, ax, keepdims](const Tensor& g) {
    Tensor zero = eq(xd, scalar_like(0, xd));
    Tensor one = scalar_like(1, xd), nil = scalar_like(0, xd);
    Tensor safe = where(zero, one, xd);
    Tensor p = broadcast_to(prod(safe, ax, true), xd.shape());
    Tensor z = broadcast_to(sum(cast(zero, xd.dtype()), ax, true), xd.shape());
    Tensor d = where(
        zero, where(eq(z, one), p, nil), where(eq(z, nil), div(p, safe), nil));
    return std::vector<Tensor>{
        mul(d, expand_back(g, xd.shape(), ax, keepdims))};
  });
}

Tensor any(const Tensor& x0, const std::vector<int>& axes, bool keepdims) {
  check_defined("any", x0);
  std::vector<int> ax = reduce_axes("any", axes, x0.rank());
  Tensor x = x0.dtype() == DType::Bool ? x0 : cast(x0, DType::Bool);
  return reduce_prim(ReduceOp::Any, x, ax, keepdims);
}

Tensor all(const Tensor& x0, const std::vector<int>& axes, bool keepdims) {
  check_defined("all", x0);
  std::vector<int> ax = reduce_axes("all", axes, x0.rank());
  Tensor x = x0.dtype() == DType::Bool ? x0 : cast(x0, DType::Bool);
  return reduce_prim(ReduceOp::All, x, ax, keepdims);
}

static Tensor arg_extreme(
    const char* name, ReduceOp op, const Tensor& x, int axis, bool keepdims) {
  check_defined(name, x);
  int a = axis_of(name, axis, x.rank());
  check_nonempty(name, x, {a});
  return reduce_prim(op, x, {a}, keepdims);
}

Tensor argmax(const Tensor& x, int axis, bool keepdims) {
  return arg_extreme("argmax", ReduceOp::ArgMax, x, axis, keepdims);
}

Tensor argmin(const Tensor& x, int axis, bool keepdims) {
  return arg_extreme("argmin", ReduceOp::ArgMin, x, axis, keepdims);
}

}  // namespace ss::ops
