// Every collective's VJP in the simulated mesh (interp/eval/spmd/
// sim_mesh.cpp) against the derivative of the same loss computed from the
// reference collectives alone. Four instance threads each call the
// collective on a leaf block; the loss is sum over instances of
// <c_n, y_n>. The collectives are linear (pmax/pmin piecewise linear, with
// distinct values), so the oracle's derivative along each basis element is
// exact: for the linear ones the loss of the basis block itself, for
// pmax/pmin a central difference of step 0.25 between distinct integers.
// Compared to 1e-12 (f64 sums of a few small products).
#include <catch2/catch.hpp>
#include <thread>

#include "interp/eval/spmd/sim_mesh.h"
#include "ops/api.h"
#include "ops/autodiff/tape.h"
#include "ref/ref_collectives.h"

using ss::ops::MeshOp;
using ss::ops::MeshOpKind;
using ss::ops::Shape;
using ss::ops::Tensor;
using ss::types::DType;
namespace ref = ss::ref;

namespace {

double loss_of(const MeshOp& op, const ref::Blocks& xs, const ref::Blocks& cs) {
  ref::Blocks ys = ref::collective(op, xs);
  double l = 0;
  for (size_t n = 0; n < ys.size(); ++n) {
    std::vector<double> y = ys[n].to_doubles(), c = cs[n].to_doubles();
    for (size_t e = 0; e < y.size(); ++e) l += y[e] * c[e];
  }
  return l;
}

// Distinct integers 1, 2, ... (no ties for pmax), block n after block n-1.
ref::Blocks distinct(size_t n, const Shape& s, double start, double step) {
  ref::Blocks xs;
  double v = start;
  for (size_t k = 0; k < n; ++k) {
    std::vector<double> d(static_cast<size_t>(ss::ops::numel_of(s)));
    for (double& e : d) {
      e = v;
      v += step;
    }
    xs.push_back(Tensor::from_doubles(s, d, DType::F64));
  }
  return xs;
}

void check_transpose(const MeshOp& op, const MeshOp& tr, const Shape& in) {
  std::vector<ss::check::MeshAxis> axes{{"i", 4}};
  ss::eval::spmd::SimMesh mesh(axes);
  // Interleaved so that each element's maximum moves between instances.
  ref::Blocks xs = distinct(4, in, 1, 1);
  std::swap(xs[1], xs[3]);
  std::vector<Tensor> leaves, ys(4);
  for (const Tensor& x : xs) leaves.push_back(ss::ops::requires_grad(x));
  std::vector<std::thread> ts;
  for (int64_t n = 0; n < 4; ++n)
    ts.emplace_back([&, n] { ys[n] = mesh.collective(n, op, tr, leaves[n]); });
  for (auto& t : ts) t.join();
  ref::Blocks cs = distinct(4, ys[0].shape(), 0.5, 0.75);
  Tensor loss;
  for (int64_t n = 0; n < 4; ++n) {
    Tensor term = ss::ops::sum(ss::ops::mul(ys[n], cs[n]));
    loss = loss.defined() ? ss::ops::add(loss, term) : term;
  }
  std::vector<Tensor> g = ss::ops::backward(loss, leaves);
  const bool linear = op.kind != MeshOpKind::Max && op.kind != MeshOpKind::Min;
  for (size_t n = 0; n < 4; ++n) {
    std::vector<double> got = g[n].to_doubles();
    for (size_t e = 0; e < got.size(); ++e) {
      double want;
      if (linear) {
        ref::Blocks basis = xs;
        for (auto& b : basis) b = Tensor::zeros(in, DType::F64);
        basis[n].set(static_cast<int64_t>(e), 1.0);
        want = loss_of(op, basis, cs);
      } else {
        ref::Blocks up = xs, down = xs;
        up[n] = xs[n].clone();
        down[n] = xs[n].clone();
        up[n].set(static_cast<int64_t>(e), xs[n].at(e) + 0.25);
        down[n].set(static_cast<int64_t>(e), xs[n].at(e) - 0.25);
        want = (loss_of(op, up, cs) - loss_of(op, down, cs)) / 0.5;
      }
      INFO(ss::ops::mesh_op_name(op.kind)
           << " instance " << n << " element " << e);
      CHECK(got[e] == Approx(want).margin(1e-12));
    }
  }
}

MeshOp make(MeshOpKind k, int axis = 0, int concat = 0, bool tiled = true) {
  MeshOp op;
  op.kind = k;
  op.axes = {"i"};
  op.axis = axis;
  op.concat = concat;
  op.tiled = tiled;
  return op;
}

}  // namespace

TEST_CASE("spmd transposes: psum, pmean, pvary, pmax, pmin",
          "[spmd][autodiff]") {
  check_transpose(make(MeshOpKind::Sum), make(MeshOpKind::Sum), {2, 3});
  check_transpose(make(MeshOpKind::Mean), make(MeshOpKind::Mean), {2, 3});
  check_transpose(make(MeshOpKind::Vary), make(MeshOpKind::Vary), {3});
  check_transpose(
      make(MeshOpKind::Max), make(MeshOpKind::SumToExtremum), {2, 3});
  check_transpose(
      make(MeshOpKind::Min), make(MeshOpKind::SumToExtremum), {2, 3});
}

TEST_CASE("spmd transposes: all_gather and psum_scatter, tiled or not",
          "[spmd][autodiff]") {
  check_transpose(
      make(MeshOpKind::AllGather, 1), make(MeshOpKind::PsumScatter, 1), {2, 3});
  check_transpose(make(MeshOpKind::AllGather, 0, 0, false),
                  make(MeshOpKind::PsumScatter, 0, 0, false),
                  {2, 3});
  check_transpose(
      make(MeshOpKind::PsumScatter, 1), make(MeshOpKind::AllGather, 1), {2, 8});
  check_transpose(make(MeshOpKind::PsumScatter, 0, 0, false),
                  make(MeshOpKind::AllGather, 0, 0, false),
                  {4, 3});
}

TEST_CASE("spmd transposes: ppermute and all_to_all", "[spmd][autodiff]") {
  MeshOp ring = make(MeshOpKind::Ppermute), back = ring;
  ring.perm = {{0, 1}, {1, 2}, {2, 3}, {3, 0}};
  back.perm = {{1, 0}, {2, 1}, {3, 2}, {0, 3}};
  check_transpose(ring, back, {2});
  MeshOp one = make(MeshOpKind::Ppermute), one_back = one;
  one.perm = {{0, 2}};
  one_back.perm = {{2, 0}};
  check_transpose(one, one_back, {3});
  check_transpose(make(MeshOpKind::AllToAll, 1, 0),
                  make(MeshOpKind::AllToAll, 0, 1),
                  {2, 4});
  check_transpose(make(MeshOpKind::AllToAll, 0, 1, false),
                  make(MeshOpKind::AllToAll, 1, 0, false),
                  {4, 3});
}
