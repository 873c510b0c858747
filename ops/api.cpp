// The differentiable API (ops/api.h), part 1: argument checks shared by
// every op (api_detail.h) and the makers. Elementwise ops are in
// api_elementwise.cpp, reductions in api_reduce.cpp, shape, indexing,
// matmul and conv2d in api_shape.cpp.

#include "ops/api.h"

#include <algorithm>
#include <optional>
#include <string>

#include "ops/api_detail.h"
#include "ops/backend/device_errors.h"
#include "ops/backend/recorded_step.h"
#include "ops/core/broadcast.h"

namespace ss::ops {

namespace detail {

void shape_error(const char* op, const std::string& msg) {
  throw OpError(OpError::Kind::Shape, msg, op);
}
void value_error(const char* op, const std::string& msg) {
  throw OpError(OpError::Kind::Value, msg, op);
}

void check_defined(const char* op, const Tensor& t) {
  if (!t.defined()) value_error(op, "an argument is an undefined tensor");
}

void check_same_device(const char* op, const std::vector<Tensor>& ts) {
  for (const Tensor& t : ts) check_defined(op, t);
  for (size_t i = 1; i < ts.size(); ++i)
    if (!(ts[i].device() == ts[0].device()))
      value_error(op,
                  "arguments are on different devices (" +
                      ts[0].device().str() + " and " + ts[i].device().str() +
                      ")");
}

// Note [CPU scalars]
// torch lets a 0-d CPU tensor meet a tensor on a GPU: it is a number,
// copied to where the other operand is (TensorIterator's "CPU scalar"
// rule). ShapeScript's host numbers become 0-d CPU tensors where they
// meet a tensor (interp/eval/tensor_values.cpp), and so do a loss's counts,
// so the same rule places them in the elementwise ops (binary, where). A
// 0-d CPU value that needs a gradient stays where it is and the op refuses
// ("arguments are on different devices"): its copy would carry no
// gradient back (Tensor::to drops autodiff state).
void place_cpu_scalars(std::initializer_list<Tensor*> operands) {
  const Tensor* on = nullptr;
  for (Tensor* t : operands)
    if (t->defined() && t->device().kind != Device::Kind::Cpu) {
      on = t;
      break;
    }
  if (!on) return;
  const Device d = on->device();
  for (Tensor* t : operands)
    if (t->defined() && t->device().kind == Device::Kind::Cpu &&
        t->rank() == 0 && !needs_grad(*t))
      *t = t->to(d);
}

Backend& backend_of(const Tensor& t) {
  return backend_for(t.device());
}

int axis_of(const char* op, int axis, size_t rank) {
  int r = static_cast<int>(rank);
  if (axis < -r || axis >= r)
    shape_error(op,
                "axis " + std::to_string(axis) +
                    " is out of range for a rank-" + std::to_string(r) +
                    " tensor");
  return axis < 0 ? axis + r : axis;
}

std::vector<int> reduce_axes(const char* op,
                             const std::vector<int>& axes,
                             size_t rank) {
  std::vector<int> out;
  if (axes.empty()) {
    for (size_t i = 0; i < rank; ++i) out.push_back(static_cast<int>(i));
    return out;
  }
  for (int a : axes) out.push_back(axis_of(op, a, rank));
  std::sort(out.begin(), out.end());
  for (size_t i = 1; i < out.size(); ++i)
    if (out[i] == out[i - 1])
      shape_error(op, "axis " + std::to_string(out[i]) + " is given twice");
  return out;
}

Shape broadcast_shapes(const char* op, const Shape& a, const Shape& b) {
  if (std::optional<Shape> s = broadcast_sizes(a, b)) return *std::move(s);
  shape_error(op, broadcast_mismatch(a, b));
}

Shape kept_shape(const Shape& x, const std::vector<int>& axes) {
  Shape s = x;
  for (int a : axes) s[a] = 1;
  return s;
}

Tensor expand_back(const Tensor& g,
                   const Shape& x_shape,
                   const std::vector<int>& axes,
                   bool keepdims) {
  Tensor k = keepdims ? g : reshape(g, kept_shape(x_shape, axes));
  return broadcast_to(k, x_shape);
}

Tensor index_tensor(const char* op, const Tensor& idx) {
  check_defined(op, idx);
  if (!types::is_int(idx.dtype()))
    value_error(op,
                std::string("indices must be an integer tensor (i64), "
                            "got ") +
                    types::dtype_name(idx.dtype()));
  return idx.dtype() == DType::I64 ? idx.detach() : cast(idx, DType::I64);
}

void check_index_range(const char* op, const Tensor& idx, int64_t n) {
  if (idx.numel() == 0) return;
  auto fail = [&](int64_t v) {
    value_error(op,
                "index " + std::to_string(v) +
                    " is out of range for an axis of size " +
                    std::to_string(n));
  };
  if (idx.device().kind == Device::Kind::Cpu) {
    const int64_t* p = idx.data<int64_t>();
    for (int64_t i = 0, e = idx.numel(); i < e; ++i)
      if (p[i] < 0 || p[i] >= n) fail(p[i]);
    return;
  }
  Backend& be = backend_of(idx);
  std::vector<int> all;
  for (size_t i = 0; i < idx.rank(); ++i) all.push_back(static_cast<int>(i));
  Tensor zero = Tensor::zeros({}, idx.dtype()).to(idx.device());
  Tensor size = Tensor::integer_scalar(n, idx.dtype()).to(idx.device());
  Tensor bad = be.binary(BinaryOp::Or,
                         be.binary(BinaryOp::Lt, idx, zero),
                         be.binary(BinaryOp::Ge, idx, size));
  check_none(bad, backend::kIndexOutOfRange, [&] {
    int64_t lo =
        static_cast<int64_t>(be.reduce(ReduceOp::Min, idx, all, false).item());
    int64_t hi =
        static_cast<int64_t>(be.reduce(ReduceOp::Max, idx, all, false).item());
    if (lo < 0) fail(lo);
    if (hi >= n) fail(hi);
  });
}

}  // namespace detail

// Note [Checks a recording defers]
// Some ops check a program's values: a label or index in range, a
// probability between 0 and 1. On the host the check reads the values and
// the error names the bad one at the op's `.ss` line. A recorded step
// cannot read (its work has not run yet, and a CUDA capture breaks on a
// copy to the host: Note [Recorded steps] in
// interp/devices/recorded_calls.cpp), so inside one the check runs on the
// device: the device's error word takes the check's bit, and the error is
// raised at the next copy to the host (the loss read at the step's end),
// without the value or the line (ops/backend/device_errors.h). A probe of a
// step reads as usual, and that read does not count against recording it.
bool checks_deferred(const Tensor& t) {
  if (t.device().kind == Device::Kind::Cpu) return false;
  StepRecorder* r = step_recorder(t.device().kind);
  return r && r->recording();
}

void check_none(const Tensor& bad,
                unsigned code,
                void (*fail)(const void*),
                const void* ctx) {
  if (bad.numel() == 0) return;
  Tensor hit = any(bad);
  if (checks_deferred(hit)) {
    detail::backend_of(hit).flag_if(hit, code);
    return;
  }
  bool found = false;
  {
    RecordableRead counted_elsewhere;
    found = hit.item() != 0;
  }
  if (found) fail(ctx);
}

int normalize_axis(int axis, size_t rank) {
  return detail::axis_of("normalize_axis", axis, rank);
}

// ---------------------------------------------------------------- make

Tensor scalar_like(double value, const Tensor& like) {
  detail::check_defined("scalar_like", like);
  return Tensor::full({}, value, like.dtype(), like.device());
}

Tensor zeros_like(const Tensor& x) {
  detail::check_defined("zeros_like", x);
  return Tensor::zeros(x.shape(), x.dtype(), x.device());
}

Tensor ones_like(const Tensor& x) {
  detail::check_defined("ones_like", x);
  return Tensor::full(x.shape(), 1.0, x.dtype(), x.device());
}

Tensor arange(int64_t n, Device device) {
  if (n < 0)
    detail::value_error("arange",
                        "the length must be >= 0, got " + std::to_string(n));
  if (device.kind == Device::Kind::Cpu) {
    Tensor t = Tensor::empty({n}, DType::I64, device);
    int64_t* p = t.data<int64_t>();
    for (int64_t i = 0; i < n; ++i) p[i] = i;
    return t;
  }
  // Elsewhere: an exclusive cumsum of ones, with primitives only.
  Tensor ones = Tensor::full({n}, 1.0, DType::I64, device);
  Backend& be = backend_for(device);
  return be.binary(BinaryOp::Sub, be.cumsum(ones, 0, false), ones);
}

static Tensor random_impl(const char* op,
                          const Shape& shape,
                          DType dtype,
                          uint64_t key,
                          uint64_t stream,
                          uint64_t offset,
                          bool normal,
                          Device device) {
  if (!types::is_float(dtype))
    detail::value_error(op,
                        std::string("the dtype must be a float, got ") +
                            types::dtype_name(dtype));
  for (int64_t d : shape)
    if (d < 0)
      detail::shape_error(op, "negative size in " + shape_string(shape));
  return backend_for(device).random(shape, dtype, key, stream, offset, normal);
}

Tensor random_uniform(const Shape& shape,
                      DType dtype,
                      uint64_t key,
                      uint64_t stream,
                      uint64_t offset,
                      Device device) {
  return random_impl(
      "random_uniform", shape, dtype, key, stream, offset, false, device);
}

Tensor random_normal(const Shape& shape,
                     DType dtype,
                     uint64_t key,
                     uint64_t stream,
                     uint64_t offset,
                     Device device) {
  return random_impl(
      "random_normal", shape, dtype, key, stream, offset, true, device);
}

}  // namespace ss::ops
