// The differentiable API, part 4: shape ops, indexing, sort, cumsum, matmul
// and conv2d, and the differentiable internals of api_detail.h (take_add,
// scatter, cumsum_dir) that the VJPs of take, gather, sort and cumsum use.

#include <numeric>
#include <string>

#include "ops/api.h"
#include "ops/api_detail.h"
#include "ops/backend/device_errors.h"

namespace ss::ops {

using namespace detail;

namespace {

std::string ints_string(const std::vector<int>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s += ' ';
    s += std::to_string(v[i]);
  }
  return s + "]";
}

// [x] with a fresh shape, sharing storage, without autodiff state.
Tensor view(const Tensor& x, const Shape& shape) {
  return x.detach().reshape(shape);
}

// start, start + step, ... (count elements) as i64 on [device].
Tensor strided_index(int64_t start,
                     int64_t step,
                     int64_t count,
                     Device device) {
  Tensor i = arange(count, device);
  return add(mul(i, scalar_like(static_cast<double>(step), i)),
             scalar_like(static_cast<double>(start), i));
}

}  // namespace

// ---------------------------------------------------------------- internals

namespace detail {

Tensor take_add(const Tensor& v, const Tensor& idx, int axis, int64_t n) {
  Tensor y = backend_of(v).take_add(v, idx, axis, n);
  if (!types::is_float(v.dtype())) return y;
  return record("take_add", y, {v}, [idx, axis](const Tensor& g) {
    return std::vector<Tensor>{take(g, idx, axis)};
  });
}

Tensor scatter(const Shape& shape,
               const Tensor& idx,
               const Tensor& v,
               int axis) {
  Tensor y = backend_of(v).scatter_add(shape, idx, v, axis);
  if (!types::is_float(v.dtype())) return y;
  return record("scatter", y, {v}, [idx, axis](const Tensor& g) {
    return std::vector<Tensor>{gather(g, idx, axis)};
  });
}

Tensor cumsum_dir(const Tensor& x, int axis, bool reverse) {
  Tensor y = backend_of(x).cumsum(x, axis, reverse);
  if (!types::is_float(x.dtype())) return y;
  return record(reverse ? "cumsum_reverse" : "cumsum",
                y,
                {x},
                [axis, reverse](const Tensor& g) {
                  return std::vector<Tensor>{cumsum_dir(g, axis, !reverse)};
                });
}

}  // namespace detail

// ---------------------------------------------------------------- shape

Tensor reshape(const Tensor& x, const Shape& shape0) {
  const char* name = "reshape";
  check_defined(name, x);
  Shape shape = shape0;
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (infer >= 0) shape_error(name, "more than one size is -1");
      infer = static_cast<int>(i);
    } else if (shape[i] < 0) {
      shape_error(name, "negative size in " + shape_string(shape0));
    } else {
      known *= shape[i];
    }
  }
  if (infer >= 0) {
    if (known == 0 || x.numel() % known != 0)
      shape_error(name,
                  "cannot reshape " + shape_string(x.shape()) + " to " +
                      shape_string(shape0));
    shape[infer] = x.numel() / known;
  }
  if (numel_of(shape) != x.numel())
    shape_error(name,
                "cannot reshape " + shape_string(x.shape()) + " (" +
                    std::to_string(x.numel()) + " elements) to " +
                    shape_string(shape0));
  Tensor y = view(x, shape);
  Shape xs = x.shape();
  return record(name, y, {x}, [xs](const Tensor& g) {
    return std::vector<Tensor>{reshape(g, xs)};
  });
}

Tensor permute(const Tensor& x, const std::vector<int>& perm0) {
  const char* name = "permute";
  check_defined(name, x);
  if (perm0.size() != x.rank())
    shape_error(name,
                "the permutation " + ints_string(perm0) +
                    " does not have the rank of " + shape_string(x.shape()));
  std::vector<int> perm, inv(x.rank(), -1);
  for (size_t i = 0; i < perm0.size(); ++i) {
    int a = axis_of(name, perm0[i], x.rank());
    if (inv[a] >= 0)
      shape_error(name, ints_string(perm0) + " is not a permutation");
    inv[a] = static_cast<int>(i);
    perm.push_back(a);
  }
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i)
    identity = identity && perm[i] == static_cast<int>(i);
  if (identity) return x;
  Tensor y = backend_of(x).permute(x, perm);
  return record(name, y, {x}, [inv](const Tensor& g) {
    return std::vector<Tensor>{permute(g, inv)};
  });
}

Tensor transpose_last(const Tensor& x) {
  check_defined("transpose_last", x);
  if (x.rank() < 2)
    shape_error("transpose_last",
                "needs a tensor of rank >= 2, got " + shape_string(x.shape()));
  std::vector<int> perm(x.rank());
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[x.rank() - 1], perm[x.rank() - 2]);
  return permute(x, perm);
}

Tensor broadcast_to(const Tensor& x, const Shape& shape) {
  const char* name = "broadcast_to";
  check_defined(name, x);
  if (x.shape() == shape) return x;
  bool ok = x.rank() <= shape.size();
  for (size_t i = 0; ok && i < x.rank(); ++i) {
    int64_t d = x.shape()[i], t = shape[shape.size() - x.rank() + i];
    ok = d == t || d == 1;
  }
  if (!ok)
    shape_error(name,
                "cannot broadcast " + shape_string(x.shape()) + " to " +
                    shape_string(shape));
  Tensor y = backend_of(x).broadcast_to(x, shape);
  Shape xs = x.shape();
  return record(name, y, {x}, [xs](const Tensor& g) {
    return std::vector<Tensor>{sum_to(g, xs)};
  });
}

Tensor sum_to(const Tensor& x, const Shape& shape) {
  const char* name = "sum_to";
  check_defined(name, x);
  if (x.shape() == shape) return x;
  size_t r = x.rank();
  bool ok = shape.size() <= r;
  std::vector<int> axes;
  size_t lead = ok ? r - shape.size() : 0;
  for (size_t i = 0; ok && i < r; ++i) {
    if (i < lead) {
      axes.push_back(static_cast<int>(i));
      continue;
    }
    int64_t d = x.shape()[i], t = shape[i - lead];
    if (t == 1 && d != 1)
      axes.push_back(static_cast<int>(i));
    else
      ok = d == t;
  }
  if (!ok)
    shape_error(name,
                "cannot sum " + shape_string(x.shape()) + " down to " +
                    shape_string(shape));
  // A composite of sum and reshape: their VJPs give sum_to's.
  return reshape(sum(x, axes, true), shape);
}

Tensor unsqueeze(const Tensor& x, int axis) {
  check_defined("unsqueeze", x);
  int a = axis_of("unsqueeze", axis, x.rank() + 1);
  Shape s = x.shape();
  s.insert(s.begin() + a, 1);
  return reshape(x, s);
}

Tensor squeeze(const Tensor& x, int axis) {
  check_defined("squeeze", x);
  int a = axis_of("squeeze", axis, x.rank());
  if (x.shape()[a] != 1)
    shape_error("squeeze",
                "axis " + std::to_string(a) + " of " + shape_string(x.shape()) +
                    " is not of size 1");
  Shape s = x.shape();
  s.erase(s.begin() + a);
  return reshape(x, s);
}

Tensor slice(
    const Tensor& x, int axis, int64_t start, int64_t stop, int64_t step) {
  const char* name = "slice";
  check_defined(name, x);
  int a = axis_of(name, axis, x.rank());
  if (step < 1)
    value_error(name, "the step must be >= 1, got " + std::to_string(step));
  int64_t n = x.shape()[a];
  // Python's rules: negative bounds count from the end; both are clamped.
  auto clamp = [n](int64_t i) {
    if (i < 0) i += n;
    return i < 0 ? 0 : i > n ? n : i;
  };
  start = clamp(start);
  stop = std::max(clamp(stop), start);
  if (start == 0 && stop == n && step == 1) return x;
  Tensor y = backend_of(x).slice(x, a, start, stop, step);
  int64_t m = y.shape()[a];
  return record(name, y, {x}, [=](const Tensor& g) {
    if (step == 1) return std::vector<Tensor>{pad(g, a, start, n - stop)};
    Tensor idx = strided_index(start, step, m, g.device());
    return std::vector<Tensor>{detail::take_add(g, idx, a, n)};
  });
}

Tensor concat(const std::vector<Tensor>& xs0, int axis) {
  const char* name = "concat";
  if (xs0.empty()) value_error(name, "needs at least one tensor");
  check_same_device(name, xs0);
  size_t r = xs0[0].rank();
  if (r == 0) shape_error(name, "cannot concatenate 0-d tensors");
  int a = axis_of(name, axis, r);
  DType dt = xs0[0].dtype();
  for (const Tensor& t : xs0) {
    dt = types::promote(dt, t.dtype());
    bool ok = t.rank() == r;
    for (size_t i = 0; ok && i < r; ++i)
      ok = static_cast<int>(i) == a || t.shape()[i] == xs0[0].shape()[i];
    if (!ok)
      shape_error(name,
                  "shapes " + shape_string(xs0[0].shape()) + " and " +
                      shape_string(t.shape()) + " differ outside axis " +
                      std::to_string(a));
  }
  if (xs0.size() == 1) return xs0[0];
  std::vector<Tensor> xs;
  std::vector<int64_t> sizes;
  for (const Tensor& t : xs0) {
    xs.push_back(t.dtype() == dt ? t : cast(t, dt));
    sizes.push_back(t.shape()[a]);
  }
  Tensor y = backend_of(xs[0]).concat(xs, a);
  if (!types::is_float(dt)) return y;
  return record(name, y, xs, [a, sizes](const Tensor& g) {
    std::vector<Tensor> out;
    int64_t at = 0;
    for (int64_t s : sizes) {
      out.push_back(slice(g, a, at, at + s));
      at += s;
    }
    return out;
  });
}

Tensor stack(const std::vector<Tensor>& xs, int axis) {
  const char* name = "stack";
  if (xs.empty()) value_error(name, "needs at least one tensor");
  check_same_device(name, xs);
  for (const Tensor& t : xs)
    if (t.shape() != xs[0].shape())
      shape_error(name,
                  "shapes " + shape_string(xs[0].shape()) + " and " +
                      shape_string(t.shape()) + " differ");
  int a = axis_of(name, axis, xs[0].rank() + 1);
  std::vector<Tensor> us;
  for (const Tensor& t : xs) us.push_back(unsqueeze(t, a));
  return concat(us, a);
}

Tensor pad(
    const Tensor& x, int axis, int64_t before, int64_t after, double value) {
  const char* name = "pad";
  check_defined(name, x);
  int a = axis_of(name, axis, x.rank());
  if (before < 0 || after < 0)
    value_error(name,
                "pad widths must be >= 0, got " + std::to_string(before) +
                    " and " + std::to_string(after));
  if (before == 0 && after == 0) return x;
  Tensor y = backend_of(x).pad(x, a, before, after, value);
  int64_t n = x.shape()[a];
  return record(name, y, {x}, [a, before, n](const Tensor& g) {
    return std::vector<Tensor>{slice(g, a, before, before + n)};
  });
}

// ---------------------------------------------------------------- indexing

Tensor take(const Tensor& x, const Tensor& idx0, int axis) {
  const char* name = "take";
  check_same_device(name, {x, idx0});
  if (x.rank() == 0) shape_error(name, "cannot index a 0-d tensor");
  int a = axis_of(name, axis, x.rank());
  Tensor idx = index_tensor(name, idx0);
  int64_t n = x.shape()[a];
  // Negative indices count from the end, as an int index does.
  Tensor neg = lt(idx, scalar_like(0, idx));
  if (checks_deferred(idx)) {
    // Note [Checks a recording defers]: every index wrapped, unread.
    check_none(logical_or(lt(idx, scalar_like(double(-n), idx)),
                          ge(idx, scalar_like(double(n), idx))),
               backend::kIndexOutOfRange,
               [] {});
    idx = where(neg, add(idx, scalar_like(n, idx)), idx);
  } else if (RecordableRead read; any(neg).item() != 0) {
    int64_t lowest = static_cast<int64_t>(min(idx).item());
    if (lowest < -n)
      value_error(name,
                  "index " + std::to_string(lowest) +
                      " is out of range for an axis of size " +
                      std::to_string(n));
    idx = where(neg, add(idx, scalar_like(n, idx)), idx);
    check_index_range(name, idx, n);
  } else {
    check_index_range(name, idx, n);
  }
  Tensor y = backend_of(x).take(x, idx, a);
  if (!types::is_float(x.dtype())) return y;
  return record(name, y, {x}, [idx, a, n](const Tensor& g) {
    return std::vector<Tensor>{detail::take_add(g, idx, a, n)};
  });
}

Tensor take_one(const Tensor& x, int64_t index, int axis) {
  const char* name = "take_one";
  check_defined(name, x);
  if (x.rank() == 0) shape_error(name, "cannot index a 0-d tensor");
  int a = axis_of(name, axis, x.rank());
  int64_t n = x.shape()[a];
  if (index < -n || index >= n)
    value_error(name,
                "index " + std::to_string(index) +
                    " is out of range for an axis of size " +
                    std::to_string(n));
  if (index < 0) index += n;
  // A composite of slice and squeeze, which record their VJPs.
  return squeeze(slice(x, a, index, index + 1), a);
}

// Checks gather / scatter_add's index against [x]: same rank, the same
// sizes off [a].
static void check_gather_index(const char* name,
                               const Tensor& x,
                               const Tensor& idx,
                               int a) {
  // torch's rule: same rank, and no larger than x off [a].
  bool ok = idx.rank() == x.rank();
  for (size_t i = 0; ok && i < x.rank(); ++i)
    ok = static_cast<int>(i) == a || idx.shape()[i] <= x.shape()[i];
  if (!ok)
    shape_error(name,
                "the indices " + shape_string(idx.shape()) + " must fit in " +
                    shape_string(x.shape()) + " off axis " + std::to_string(a));
  check_index_range(name, idx, x.shape()[a]);
}

Tensor gather(const Tensor& x, const Tensor& idx0, int axis) {
  const char* name = "gather";
  check_same_device(name, {x, idx0});
  if (x.rank() == 0) shape_error(name, "cannot index a 0-d tensor");
  int a = axis_of(name, axis, x.rank());
  Tensor idx = index_tensor(name, idx0);
  check_gather_index(name, x, idx, a);
  Tensor y = backend_of(x).gather(x, idx, a);
  if (!types::is_float(x.dtype())) return y;
  Shape xs = x.shape();
  return record(name, y, {x}, [xs, idx, a](const Tensor& g) {
    return std::vector<Tensor>{detail::scatter(xs, idx, g, a)};
  });
}

Tensor scatter_add(const Tensor& x,
                   const Tensor& idx0,
                   const Tensor& v0,
                   int axis) {
  const char* name = "scatter_add";
  check_same_device(name, {x, idx0, v0});
  if (x.rank() == 0) shape_error(name, "cannot index a 0-d tensor");
  int a = axis_of(name, axis, x.rank());
  Tensor idx = index_tensor(name, idx0);
  if (v0.shape() != idx.shape())
    shape_error(name,
                "the values " + shape_string(v0.shape()) +
                    " must have the indices' shape " +
                    shape_string(idx.shape()));
  check_gather_index(name, x, idx, a);
  DType dt = types::promote(x.dtype(), v0.dtype());
  Tensor v = v0.dtype() == dt ? v0 : cast(v0, dt);
  // x + scatter(v): add passes g to x, scatter's VJP gathers it for v.
  return add(x, detail::scatter(x.shape(), idx, v, a));
}

Tensor cumsum(const Tensor& x0, int axis) {
  const char* name = "cumsum";
  check_defined(name, x0);
  int a = axis_of(name, axis, x0.rank());
  Tensor x = types::is_float(x0.dtype()) || x0.dtype() == DType::I64
                 ? x0
                 : cast(x0, DType::I64);
  return detail::cumsum_dir(x, a, false);
}

std::pair<Tensor, Tensor> sort(const Tensor& x, int axis, bool descending) {
  const char* name = "sort";
  check_defined(name, x);
  int a = axis_of(name, axis, x.rank());
  auto [values, indices] = backend_of(x).sort(x, a, descending);
  if (types::is_float(x.dtype())) {
    Shape xs = x.shape();
    Tensor ind = indices;
    // values = gather(x, indices): the cotangent is scattered back.
    values = record(name, values, {x}, [xs, ind, a](const Tensor& g) {
      return std::vector<Tensor>{detail::scatter(xs, ind, g, a)};
    });
  }
  return {values, indices};
}

// ---------------------------------------------------------------- matmul

// op(a) @ op(b) on the backend, transposes read in place (BLAS flags).
static Tensor matmul_t(const Tensor& a, const Tensor& b, bool ta, bool tb) {
  return backend_of(a).matmul(a, b, ta, tb);
}

// Note [Transposes read in place]
// op(a) @ op(b), op a transpose of the last two axes when its flag is set:
// BLAS reads a transposed operand in place, so a product of a matrix and
// another's transpose (attention's q kᵀ, every matmul VJP) copies nothing.
// Each VJP is again such a product of the other operand and the cotangent,
// with the flags that make it one: for C = op(A) op(B),
//   dA = g op(B)ᵀ        (or, when A is read transposed, op(B) gᵀ),
//   dB = op(A)ᵀ g        (or, when B is read transposed, gᵀ op(A)).
// Batch axes broadcast, so each cotangent is summed back to its operand.
// VJPs run with recording off, so the backend products are enough here.
static Tensor matmul_nd(const Tensor& a, const Tensor& b, bool ta, bool tb) {
  Tensor y = matmul_t(a, b, ta, tb);
  if (!types::is_float(y.dtype())) return y;
  Tensor ad = a.detach(), bd = b.detach();
  bool na = needs_grad(a), nb = needs_grad(b);
  return record("matmul", y, {a, b}, [=](const Tensor& g) {
    std::vector<Tensor> out(2);
    if (na)
      out[0] =
          sum_to(ta ? matmul_t(bd, g, tb, true) : matmul_t(g, bd, false, !tb),
                 ad.shape());
    if (nb) {
      if (bd.rank() == 2 && ad.rank() > 2 && !ta) {
        // [.., n, k] @ [k, m]: the batch folds into one product aᵀ·g
        // (gᵀ·a when b is read transposed).
        int64_t k = ad.shape().back(), m = g.shape().back();
        Tensor a2 = reshape(ad, {-1, k}), g2 = reshape(g, {-1, m});
        out[1] =
            tb ? matmul_t(g2, a2, true, false) : matmul_t(a2, g2, true, false);
      } else {
        out[1] =
            sum_to(tb ? matmul_t(g, ad, true, ta) : matmul_t(ad, g, !ta, false),
                   bd.shape());
      }
    }
    return out;
  });
}

// The checks and dtype promotion shared by matmul and matmul_transposed.
static Tensor matmul_checked(
    const char* name, const Tensor& a0, const Tensor& b0, bool ta, bool tb) {
  check_same_device(name, {a0, b0});
  DType dt = types::promote(a0.dtype(), b0.dtype());
  if (dt == DType::Bool) dt = DType::I64;
  if (types::is_int(dt)) dt = DType::I64;
  Tensor a = a0.dtype() == dt ? a0 : cast(a0, dt);
  Tensor b = b0.dtype() == dt ? b0 : cast(b0, dt);
  size_t ra = a.rank(), rb = b.rank();
  int64_t ka = a.shape()[ta ? ra - 2 : ra - 1];
  int64_t kb = b.shape()[tb ? rb - 1 : rb - 2];
  if (ka != kb)
    shape_error(name,
                "inner dims differ: " + shape_string(a0.shape()) + " vs " +
                    shape_string(b0.shape()));
  Shape ba(a.shape().begin(), a.shape().end() - 2);
  Shape bb(b.shape().begin(), b.shape().end() - 2);
  broadcast_shapes(name, ba, bb);
  return matmul_nd(a, b, ta, tb);
}

Tensor matmul(const Tensor& a0, const Tensor& b0) {
  const char* name = "matmul";
  check_same_device(name, {a0, b0});
  if (a0.rank() == 0 || b0.rank() == 0)
    shape_error(name,
                "operands must have rank >= 1, got " +
                    shape_string(a0.shape()) + " and " +
                    shape_string(b0.shape()));
  bool a1 = a0.rank() == 1, b1 = b0.rank() == 1;
  Tensor a = a1 ? unsqueeze(a0, 0) : a0;
  Tensor b = b1 ? unsqueeze(b0, -1) : b0;
  Tensor y = matmul_checked(name, a, b, false, false);
  if (a1) y = squeeze(y, -2);
  if (b1) y = squeeze(y, -1);
  return y;
}

Tensor matmul_transposed(const Tensor& a, const Tensor& b, bool ta, bool tb) {
  const char* name = "matmul_transposed";
  check_same_device(name, {a, b});
  if (a.rank() < 2 || b.rank() < 2)
    shape_error(name,
                "operands must have rank >= 2, got " + shape_string(a.shape()) +
                    " and " + shape_string(b.shape()));
  return matmul_checked(name, a, b, ta, tb);
}

namespace {

// conv2d's and conv_transpose2d's operands in one float dtype, checked:
// x [b C h w] and k 4-d, the geometry valid.
std::pair<Tensor, Tensor> conv_operands(const char* name,
                                        const Tensor& x0,
                                        const Tensor& k0,
                                        const ConvShape& cs) {
  check_same_device(name, {x0, k0});
  if (x0.rank() != 4 || k0.rank() != 4)
    shape_error(name,
                "needs x [b C h w] and a 4-d k, got " +
                    shape_string(x0.shape()) + " and " +
                    shape_string(k0.shape()));
  const std::string bad = cs.invalid();
  if (!bad.empty()) value_error(name, bad);
  // An empty window or image has no product to make (the backend's sgemm
  // refused a K of 0: the runtime fuzzer's); torch refuses both ("kernel
  // size should be greater than zero", "only zero batch or zero channel
  // inputs are supported").
  for (int a = 2; a < 4; ++a)
    if (x0.shape()[a] < 1 || k0.shape()[a] < 1)
      shape_error(name,
                  "the image and the kernel need a size of at least 1 on "
                  "each spatial axis, got " +
                      shape_string(x0.shape()) + " and " +
                      shape_string(k0.shape()));
  DType dt = types::promote(x0.dtype(), k0.dtype());
  if (!types::is_float(dt)) dt = DType::F32;
  return {x0.dtype() == dt ? x0 : cast(x0, dt),
          k0.dtype() == dt ? k0 : cast(k0, dt)};
}

}  // namespace

Tensor conv2d(const Tensor& x0, const Tensor& k0, const ConvShape& cs) {
  const char* name = "conv2d";
  auto [x, k] = conv_operands(name, x0, k0, cs);
  const int64_t C = x.shape()[1], O = k.shape()[0];
  if (C % cs.groups != 0 || O % cs.groups != 0 || k.shape()[1] != C / cs.groups)
    shape_error(name,
                "channels differ: x " + shape_string(x.shape()) + " vs k " +
                    shape_string(k.shape()) + " in " +
                    std::to_string(cs.groups) + " group(s)");
  for (int a = 0; a < 2; ++a)
    if (cs.out(a, x.shape()[2 + a], k.shape()[2 + a]) < 1)
      shape_error(name,
                  "the kernel " + shape_string(k.shape()) +
                      " is larger than the padded input " +
                      shape_string(x.shape()));
  Tensor y = backend_of(x).conv2d(x, k, cs);
  Tensor xd = x.detach(), kd = k.detach();
  bool nx = needs_grad(x), nk = needs_grad(k);
  // The backend's gradient kernels: not themselves recorded, so conv2d has
  // no second derivative.
  return record(name, y, {x, k}, [=](const Tensor& g) {
    Backend& be = backend_of(g);
    std::vector<Tensor> out(2);
    if (nx) out[0] = be.conv2d_grad_input(g, kd, xd.shape(), cs);
    if (nk) out[1] = be.conv2d_grad_kernel(g, xd, kd.shape(), cs);
    return out;
  });
}

Tensor conv_transpose2d(const Tensor& x0,
                        const Tensor& k0,
                        const ConvShape& cs,
                        const int64_t output_padding[2]) {
  const char* name = "conv_transpose2d";
  auto [x, k] = conv_operands(name, x0, k0, cs);
  const int64_t Cin = x.shape()[1];
  if (k.shape()[0] != Cin || Cin % cs.groups != 0)
    shape_error(name,
                "channels differ: x " + shape_string(x.shape()) + " vs k " +
                    shape_string(k.shape()) + " in " +
                    std::to_string(cs.groups) + " group(s)");
  Shape out = {x.shape()[0], k.shape()[1] * cs.groups, 0, 0};
  for (int a = 0; a < 2; ++a) {
    const int64_t op = output_padding[a];
    if (op < 0 || (op >= cs.stride[a] && op >= cs.dilation[a]))
      value_error(name,
                  "output_padding must be >= 0 and below the stride or the "
                  "dilation, not " +
                      std::to_string(op));
    out[2 + a] = (x.shape()[2 + a] - 1) * cs.stride[a] - 2 * cs.padding[a] +
                 cs.dilation[a] * (k.shape()[2 + a] - 1) + op + 1;
    if (out[2 + a] < 1)
      shape_error(name,
                  "the output would be empty: " + shape_string(x.shape()) +
                      " with " + shape_string(k.shape()));
  }
  Tensor y = backend_of(x).conv2d_grad_input(x, k, out, cs);
  Tensor xd = x.detach(), kd = k.detach();
  bool nx = needs_grad(x), nk = needs_grad(k);
  return record(name, y, {x, k}, [=](const Tensor& g) {
    Backend& be = backend_of(g);
    std::vector<Tensor> grads(2);
    if (nx) grads[0] = be.conv2d(g, kd, cs);
    if (nk) grads[1] = be.conv2d_grad_kernel(xd, g, kd.shape(), cs);
    return grads;
  });
}

}  // namespace ss::ops
