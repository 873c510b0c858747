// The tutorial's reference collectives as loops over doubles
// (ref_collectives.h). Every block is read with to_doubles() and every
// result written with from_doubles(), like the rest of ref/.
#include "ref/ref_collectives.h"

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <string>

namespace ss::ref {

using ops::Shape;
using ops::Tensor;
using types::DType;

namespace {

// A block seen as [outer, len, inner] around one axis.
struct Around {
  int64_t outer = 1, len = 1, inner = 1;
};

int norm_axis(int axis, size_t rank, const char* what) {
  int r = static_cast<int>(rank);
  if (axis < 0) axis += r;
  if (axis < 0 || axis >= r)
    throw std::invalid_argument(std::string(what) + ": axis out of range");
  return axis;
}

Around around(const Shape& s, int axis) {
  Around a;
  for (int k = 0; k < static_cast<int>(s.size()); ++k) {
    if (k < axis) a.outer *= s[k];
    if (k == axis) a.len = s[k];
    if (k > axis) a.inner *= s[k];
  }
  return a;
}

const Shape& common_shape(const Blocks& xs, const char* what) {
  if (xs.empty())
    throw std::invalid_argument(std::string(what) + ": no blocks");
  for (const Tensor& x : xs)
    if (x.shape() != xs[0].shape() || x.dtype() != xs[0].dtype())
      throw std::invalid_argument(std::string(what) +
                                  ": the blocks differ in shape or dtype");
  return xs[0].shape();
}

std::vector<double> total(const Blocks& xs) {
  std::vector<double> t = xs[0].to_doubles();
  for (size_t j = 1; j < xs.size(); ++j) {
    std::vector<double> v = xs[j].to_doubles();
    for (size_t k = 0; k < t.size(); ++k) t[k] += v[k];
  }
  return t;
}

Blocks copies(const Shape& s, const std::vector<double>& v, DType d, size_t n) {
  return Blocks(n, Tensor::from_doubles(s, v, d));
}

Blocks extremum(const Blocks& xs,
                const std::function<bool(double, double)>& better) {
  const Shape& s = common_shape(xs, "pmax");
  std::vector<double> t = xs[0].to_doubles();
  for (size_t j = 1; j < xs.size(); ++j) {
    std::vector<double> v = xs[j].to_doubles();
    for (size_t k = 0; k < t.size(); ++k)
      if (better(v[k], t[k])) t[k] = v[k];
  }
  return copies(s, t, xs[0].dtype(), xs.size());
}

// Piece [p] of [n] along the axis of [a]: [outer, len / n, inner].
std::vector<double> piece(const std::vector<double>& v,
                          Around a,
                          int64_t n,
                          int64_t p) {
  int64_t w = a.len / n;
  std::vector<double> out;
  out.reserve(static_cast<size_t>(a.outer * w * a.inner));
  for (int64_t o = 0; o < a.outer; ++o)
    for (int64_t k = p * w; k < (p + 1) * w; ++k)
      for (int64_t i = 0; i < a.inner; ++i)
        out.push_back(v[(o * a.len + k) * a.inner + i]);
  return out;
}

// Concatenates [parts], each [outer, len, inner], along the middle axis.
std::vector<double> join(const std::vector<std::vector<double>>& parts,
                         Around a) {
  std::vector<double> out;
  for (int64_t o = 0; o < a.outer; ++o)
    for (const std::vector<double>& p : parts)
      for (int64_t k = 0; k < a.len * a.inner; ++k)
        out.push_back(p[o * a.len * a.inner + k]);
  return out;
}

}  // namespace

Blocks psum(const Blocks& xs) {
  const Shape& s = common_shape(xs, "psum");
  return copies(s, total(xs), xs[0].dtype(), xs.size());
}

Blocks pmean(const Blocks& xs) {
  const Shape& s = common_shape(xs, "pmean");
  std::vector<double> t = total(xs);
  for (double& v : t) v /= static_cast<double>(xs.size());
  DType d = types::is_float(xs[0].dtype()) ? xs[0].dtype() : DType::F32;
  return copies(s, t, d, xs.size());
}

Blocks pmax(const Blocks& xs) {
  return extremum(xs, [](double a, double b) { return a > b; });
}

Blocks pmin(const Blocks& xs) {
  return extremum(xs, [](double a, double b) { return a < b; });
}

Blocks pvary(const Blocks& xs) {
  common_shape(xs, "pvary");
  Blocks out;
  for (const Tensor& x : xs)
    out.push_back(Tensor::from_doubles(x.shape(), x.to_doubles(), x.dtype()));
  return out;
}

Blocks all_gather(const Blocks& xs, int axis, bool tiled) {
  Shape s = common_shape(xs, "all_gather");
  const int64_t n = static_cast<int64_t>(xs.size());
  std::vector<std::vector<double>> parts;
  for (const Tensor& x : xs) parts.push_back(x.to_doubles());
  if (!tiled) {  // jnp.stack: a new leading axis
    std::vector<double> out;
    for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
    s.insert(s.begin(), n);
    return copies(s, out, xs[0].dtype(), xs.size());
  }
  axis = norm_axis(axis, s.size(), "all_gather");
  std::vector<double> out = join(parts, around(s, axis));
  s[axis] *= n;
  return copies(s, out, xs[0].dtype(), xs.size());
}

Blocks psum_scatter(const Blocks& xs, int axis, bool tiled) {
  Shape s = common_shape(xs, "psum_scatter");
  const int64_t n = static_cast<int64_t>(xs.size());
  std::vector<double> tot = total(xs);
  if (!tiled) axis = 0;
  if (s.empty()) throw std::invalid_argument("psum_scatter: a 0-d block");
  axis = norm_axis(axis, s.size(), "psum_scatter");
  Around a = around(s, axis);
  if (tiled ? a.len % n != 0 : a.len != n)
    throw std::invalid_argument(
        "psum_scatter: the axis does not split into the instances");
  Shape ps = s;
  if (tiled)
    ps[axis] /= n;
  else
    ps.erase(ps.begin());
  Blocks out;
  for (int64_t i = 0; i < n; ++i)
    out.push_back(Tensor::from_doubles(ps, piece(tot, a, n, i), xs[0].dtype()));
  return out;
}

Blocks ppermute(const Blocks& xs, const Perm& perm) {
  const Shape& s = common_shape(xs, "ppermute");
  const int64_t n = static_cast<int64_t>(xs.size());
  Blocks out(xs.size(), Tensor::zeros(s, xs[0].dtype()));
  for (const auto& [src, dst] : perm) {
    if (src < 0 || src >= n || dst < 0 || dst >= n)
      throw std::invalid_argument("ppermute: an instance out of range");
    out[dst] = Tensor::from_doubles(s, xs[src].to_doubles(), xs[src].dtype());
  }
  return out;
}

Blocks all_to_all(const Blocks& xs, int split, int concat, bool tiled) {
  const Shape& s = common_shape(xs, "all_to_all");
  const int64_t n = static_cast<int64_t>(xs.size());
  split = norm_axis(split, s.size(), "all_to_all");
  Around sa = around(s, split);
  if (tiled ? sa.len % n != 0 : sa.len != n)
    throw std::invalid_argument(
        "all_to_all: split= does not split into the instances");
  std::vector<std::vector<double>> vals;
  for (const Tensor& x : xs) vals.push_back(x.to_doubles());
  Blocks out;
  for (int64_t i = 0; i < n; ++i) {
    // Piece i of every block (the tutorial's zip(*splits)).
    std::vector<std::vector<double>> got;
    for (const auto& v : vals) got.push_back(piece(v, sa, n, i));
    Shape ps = s;
    ps[split] /= n;
    if (tiled) {
      concat = norm_axis(concat, ps.size(), "all_to_all");
      std::vector<double> r = join(got, around(ps, concat));
      ps[concat] *= n;
      out.push_back(Tensor::from_doubles(ps, r, xs[0].dtype()));
    } else {
      ps.erase(ps.begin() + split);  // each piece is one entry of split
      concat = norm_axis(concat, ps.size() + 1, "all_to_all");
      // jnp.stack(pieces, axis=concat): [outer, 1, inner] pieces joined.
      Around ca = around(ps, concat);
      ca.len = 1;
      ca.inner = 1;
      for (int k = concat; k < static_cast<int>(ps.size()); ++k)
        ca.inner *= ps[k];
      std::vector<double> r = join(got, ca);
      ps.insert(ps.begin() + concat, n);
      out.push_back(Tensor::from_doubles(ps, r, xs[0].dtype()));
    }
  }
  return out;
}

Blocks collective(const ops::MeshOp& op, const Blocks& xs) {
  using ops::MeshOpKind;
  switch (op.kind) {
    case MeshOpKind::Sum:
      return psum(xs);
    case MeshOpKind::Mean:
      return pmean(xs);
    case MeshOpKind::Max:
      return pmax(xs);
    case MeshOpKind::Min:
      return pmin(xs);
    case MeshOpKind::Vary:
      return pvary(xs);
    case MeshOpKind::AllGather:
      return all_gather(xs, op.axis, op.tiled);
    case MeshOpKind::PsumScatter:
      return psum_scatter(xs, op.axis, op.tiled);
    case MeshOpKind::Ppermute:
      return ppermute(xs, op.perm);
    case MeshOpKind::AllToAll:
      return all_to_all(xs, op.axis, op.concat, op.tiled);
    case MeshOpKind::SumToExtremum:
      break;
  }
  throw std::invalid_argument(std::string(ops::mesh_op_name(op.kind)) +
                              ": no reference collective");
}

}  // namespace ss::ref
