#include "ops/backend/primitive_checks.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "ops/core/broadcast.h"

namespace ss::ops::backend {

Shape broadcast_shapes(const Shape& a,
                       const Shape& b,
                       const char* backend,
                       const char* op) {
  if (std::optional<Shape> s = broadcast_sizes(a, b)) return *std::move(s);
  fail(backend, op, broadcast_mismatch(a, b));
}

MatmulGeometry matmul_geometry(
    const Tensor& a, const Tensor& b, bool ta, bool tb, const char* backend) {
  const char* op = "matmul";
  if (a.rank() < 2 || b.rank() < 2)
    fail(backend, op, "operands need rank >= 2");
  if (a.dtype() != b.dtype()) fail(backend, op, "dtypes differ");
  if (a.dtype() == DType::Bool) fail(backend, op, "bool operands");
  MatmulGeometry g;
  int64_t ar = a.shape()[a.rank() - 2], ac = a.shape()[a.rank() - 1];
  int64_t br = b.shape()[b.rank() - 2], bc = b.shape()[b.rank() - 1];
  g.n = ta ? ac : ar;
  g.k = ta ? ar : ac;
  g.m = tb ? br : bc;
  if ((tb ? bc : br) != g.k)
    fail(backend,
         op,
         "inner dims differ: " + shape_string(a.shape()) + " @ " +
             shape_string(b.shape()));
  g.batch_a.assign(a.shape().begin(), a.shape().end() - 2);
  g.batch_b.assign(b.shape().begin(), b.shape().end() - 2);
  g.batch = broadcast_shapes(g.batch_a, g.batch_b, backend, op);
  g.out = g.batch;
  g.out.push_back(g.n);
  g.out.push_back(g.m);
  return g;
}

EpilogueGeometry epilogue_geometry(const Tensor& a,
                                   const Tensor& b,
                                   const Epilogue& e,
                                   const char* backend) {
  const char* op = "matmul_epilogue";
  if (a.rank() < 1 || b.rank() != 2)
    fail(backend, op, "needs a of rank >= 1 and b of rank 2");
  if (a.dtype() != b.dtype()) fail(backend, op, "dtypes differ");
  if (a.dtype() != DType::F32 && a.dtype() != DType::F64)
    fail(backend, op, "takes f32 or f64");
  EpilogueGeometry g;
  g.k = a.shape().back();
  g.m = b.shape()[1];
  if (b.shape()[0] != g.k)
    fail(backend,
         op,
         "inner dims differ: " + shape_string(a.shape()) + " @ " +
             shape_string(b.shape()));
  g.out.assign(a.shape().begin(), a.shape().end() - 1);
  g.rows = numel_of(g.out);
  g.out.push_back(g.m);
  if (e.bias.defined() &&
      (e.bias.dtype() != a.dtype() || e.bias.shape() != Shape{g.m}))
    fail(backend, op, "the bias needs shape [m] and the operands' dtype");
  if (e.residual.defined() &&
      (e.residual.dtype() != a.dtype() || e.residual.shape() != g.out))
    fail(backend, op, "the residual needs the output's shape and dtype");
  return g;
}

ConvGeometry conv_geometry(const Shape& x,
                           const Shape& k,
                           const ConvShape& cs,
                           const char* backend,
                           const char* op) {
  if (x.size() != 4 || k.size() != 4)
    fail(backend, op, "x and k must be 4-d (NCHW)");
  const std::string bad = cs.invalid();
  if (!bad.empty()) fail(backend, op, bad);
  ConvGeometry g{x[0],
                 x[1],
                 x[2],
                 x[3],
                 k[0],
                 k[2],
                 k[3],
                 0,
                 0,
                 cs.groups,
                 cs.stride[0],
                 cs.stride[1],
                 cs.padding[0],
                 cs.padding[1],
                 cs.dilation[0],
                 cs.dilation[1]};
  if (g.C % g.G != 0 || g.O % g.G != 0 || k[1] != g.C / g.G)
    fail(backend, op, "channels do not fit the groups");
  g.H2 = cs.out(0, g.H, g.kh);
  g.W2 = cs.out(1, g.W, g.kw);
  if (g.H2 < 1 || g.W2 < 1)
    fail(backend, op, "kernel larger than the padded input");
  return g;
}

AttentionDims attention_dims(const Tensor& q,
                             const Tensor& k,
                             const Tensor& v,
                             const char* backend) {
  const char* op = "attention";
  if (q.rank() < 2 || k.rank() != q.rank() || v.rank() != q.rank())
    fail(backend, op, "q, k and v need the same rank, at least 2");
  if (q.dtype() != k.dtype() || q.dtype() != v.dtype())
    fail(backend, op, "q, k and v need one dtype");
  if (q.dtype() != DType::F32 && q.dtype() != DType::F64)
    fail(backend, op, "the fused kernel takes f32 or f64");
  const Shape &qs = q.shape(), &ks = k.shape(), &vs = v.shape();
  size_t r = qs.size();
  for (size_t i = 0; i + 2 < r; ++i)
    if (ks[i] != qs[i] || vs[i] != qs[i])
      fail(backend, op, "q, k and v need the same leading axes");
  AttentionDims m{1, qs[r - 2], ks[r - 2], qs[r - 1], vs[r - 1]};
  for (size_t i = 0; i + 2 < r; ++i) m.B *= qs[i];
  if (ks[r - 1] != m.d || vs[r - 2] != m.t)
    fail(backend,
         op,
         "k needs q's last axis and v k's rows: " + shape_string(qs) + ", " +
             shape_string(ks) + ", " + shape_string(vs));
  return m;
}

AttentionShapes attention_shapes(const Tensor& q, const AttentionDims& m) {
  AttentionShapes s;
  s.out = q.shape();
  s.out.back() = m.e;
  s.lse.assign(q.shape().begin(), q.shape().end() - 1);
  return s;
}

void check_attention_cotangent(const Tensor& go,
                               const Tensor& o,
                               const Tensor& q,
                               const char* backend) {
  if (go.shape() != o.shape() || go.dtype() != q.dtype())
    fail(backend,
         "attention",
         "the cotangent needs the output's shape and dtype");
}

Tensor optim_gradient(const Tensor& p,
                      const Tensor& g,
                      const char* backend,
                      const char* op,
                      CastFn cast) {
  if (p.shape() != g.shape())
    fail(backend,
         op,
         "param " + shape_string(p.shape()) + " and gradient " +
             shape_string(g.shape()) + " differ");
  if (!types::is_float(p.dtype())) fail(backend, op, "params must be floats");
  return g.dtype() == p.dtype() ? g : cast(g, p.dtype());
}

SliceGeometry slice_geometry(const Shape& x,
                             int axis,
                             int64_t start,
                             int64_t stop,
                             int64_t step,
                             const char* backend) {
  if (step < 1) fail(backend, "slice", "step must be >= 1");
  SliceGeometry g;
  g.split = split_at(x, axis);
  g.start = std::clamp<int64_t>(start, 0, g.split.n);
  stop = std::clamp<int64_t>(stop, g.start, g.split.n);
  g.len = (stop - g.start + step - 1) / step;
  g.out = x;
  g.out[axis] = g.len;
  return g;
}

void check_reduce_axes(ReduceOp op,
                       const std::vector<int>& axes,
                       const char* backend) {
  bool arg = op == ReduceOp::ArgMax || op == ReduceOp::ArgMin;
  if (arg && axes.size() != 1)
    fail(backend, "reduce", "argmax/argmin take one axis");
}

DType reduce_dtype(ReduceOp op, DType in) {
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Prod:
      return in == DType::Bool ? DType::I64 : in;
    case ReduceOp::ArgMax:
    case ReduceOp::ArgMin:
      return DType::I64;
    case ReduceOp::Any:
    case ReduceOp::All:
      return DType::Bool;
    default:
      return in;
  }
}

Shape reduce_shape(const Shape& x,
                   const std::vector<int>& axes,
                   bool keepdims) {
  Shape os;
  for (size_t d = 0; d < x.size(); ++d) {
    bool reduced =
        std::find(axes.begin(), axes.end(), static_cast<int>(d)) != axes.end();
    if (!reduced)
      os.push_back(x[d]);
    else if (keepdims)
      os.push_back(1);
  }
  return os;
}

void check_random_dtype(DType dtype, const char* backend) {
  if (!types::is_float(dtype))
    fail(backend,
         "random",
         std::string("needs a float dtype, got ") + types::dtype_name(dtype));
}

HalfUniformCap half_uniform_cap(DType half) {
  if (half == DType::BF16) return {0x3F80, 0x3F7F};
  return {0x3C00, 0x3BFF};
}

NormChunks norm_chunks(const Tensor& x) {
  NormChunks c;
  c.n = x.rank() == 0 ? 1 : x.shape().back();
  c.rows = c.n == 0 ? 0 : x.numel() / c.n;
  c.chunks = (c.rows + kNormChunk - 1) / kNormChunk;
  return c;
}

Tensor index_as_i64(const Tensor& idx,
                    const char* backend,
                    const char* op,
                    CastFn cast) {
  if (idx.dtype() == DType::I64) return idx;
  if (idx.dtype() == DType::I32) return cast(idx, DType::I64);
  fail(backend, op, "indices must be i64");
}

void check_scatter_add_operands(const Tensor& idx,
                                const Tensor& v,
                                const char* backend) {
  if (idx.shape() != v.shape())
    fail(backend, "scatter_add", "idx and v shapes differ");
}

void check_binary_dtypes(const Tensor& a,
                         const Tensor& b,
                         const char* backend) {
  if (a.dtype() != b.dtype())
    fail(backend,
         "binary",
         std::string("dtypes differ: ") + types::dtype_name(a.dtype()) +
             " and " + types::dtype_name(b.dtype()));
}

}  // namespace ss::ops::backend
