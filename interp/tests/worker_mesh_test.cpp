// The distributed mode's collectives (interp/devices/lower/worker_mesh.h) on
// four thread ranks over real Gloo, each forward and each VJP against ref/'s
// reference collectives (the tutorial's *_ref functions as naive loops),
// on mesh x=2 y=2: instance 2i + j, groups written out by hand below. The
// blocks hold small integers, so every sum is exact in f32 and the checks
// are exact too.
#include "interp/devices/lower/worker_mesh.h"

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <functional>
#include <string>
#include <vector>

#include "dist/comm/gloo_comm.h"
#include "dist/rendezvous/job_dir.h"
#include "dist/tests/comm_test_util.h"
#include "interp/devices/lower/lowering.h"
#include "ops/api.h"
#include "ops/autodiff/tape.h"
#include "ref/ref_collectives.h"

namespace {

using ss::ops::MeshOp;
using ss::ops::MeshOpKind;
using ss::ops::Tensor;
using ss::types::DType;

const int kWorld = 4;

// Each instance's block: integers in [-5, 5], different per instance.
Tensor block(int r, const ss::ops::Shape& s, int salt) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  std::vector<double> v;
  for (int64_t k = 0; k < n; ++k)
    v.push_back(double((r * 7 + k * 3 + salt) % 11) - 5);
  return Tensor::from_doubles(s, v, DType::F32);
}

// The group of instance r for the mesh axes [axes] of `mesh x=2 y=2`, in
// group order (the first axis major), by hand.
std::vector<int> group_of(int r, const std::vector<std::string>& axes) {
  const int i = r / 2, j = r % 2;
  if (axes == std::vector<std::string>{"x"}) return {j, 2 + j};
  if (axes == std::vector<std::string>{"y"}) return {2 * i, 2 * i + 1};
  if (axes == std::vector<std::string>{"x", "y"}) return {0, 1, 2, 3};
  return {0, 2, 1, 3};  // (y, x)
}

struct Case {
  std::string what;
  MeshOp op, transpose;
  ss::ops::Shape shape;
};

MeshOp make(MeshOpKind k,
            std::vector<std::string> axes,
            int axis = 0,
            bool tiled = true,
            int concat = 0,
            std::vector<std::pair<int64_t, int64_t>> perm = {}) {
  MeshOp op;
  op.kind = k;
  op.axes = std::move(axes);
  op.axis = axis;
  op.tiled = tiled;
  op.concat = concat;
  op.perm = std::move(perm);
  return op;
}

// The collectives.cpp rows' transposes, written out.
std::vector<Case> cases() {
  using K = MeshOpKind;
  std::vector<Case> c;
  auto add = [&](std::string w, MeshOp op, MeshOp tr, ss::ops::Shape s) {
    c.push_back({std::move(w), std::move(op), std::move(tr), std::move(s)});
  };
  add("psum over x", make(K::Sum, {"x"}), make(K::Sum, {"x"}), {4, 2});
  add("psum over (y, x)",
      make(K::Sum, {"y", "x"}),
      make(K::Sum, {"y", "x"}),
      {3});
  add("pmean over y", make(K::Mean, {"y"}), make(K::Mean, {"y"}), {4, 2});
  add("pmax over (x, y)",
      make(K::Max, {"x", "y"}),
      make(K::SumToExtremum, {"x", "y"}),
      {5});
  add("pmin over y", make(K::Min, {"y"}), make(K::SumToExtremum, {"y"}), {5});
  add("pvary over x", make(K::Vary, {"x"}), make(K::Vary, {"x"}), {2, 2});
  add("all_gather over x along axis 1",
      make(K::AllGather, {"x"}, 1),
      make(K::PsumScatter, {"x"}, 1),
      {3, 2});
  add("all_gather over y, stacked",
      make(K::AllGather, {"y"}, 0, false),
      make(K::PsumScatter, {"y"}, 0, false),
      {3, 2});
  add("psum_scatter over y along axis 0",
      make(K::PsumScatter, {"y"}, 0),
      make(K::AllGather, {"y"}, 0),
      {4, 3});
  add("psum_scatter over (x, y), untiled",
      make(K::PsumScatter, {"x", "y"}, 0, false),
      make(K::AllGather, {"x", "y"}, 0, false),
      {4, 3});
  add("ppermute over y, (0, 1)",
      make(K::Ppermute, {"y"}, 0, true, 0, {{0, 1}}),
      make(K::Ppermute, {"y"}, 0, true, 0, {{1, 0}}),
      {2, 3});
  add("ppermute over (x, y), shift 1",
      make(K::Ppermute,
           {"x", "y"},
           0,
           true,
           0,
           {{0, 1}, {1, 2}, {2, 3}, {3, 0}}),
      make(K::Ppermute,
           {"x", "y"},
           0,
           true,
           0,
           {{1, 0}, {2, 1}, {3, 2}, {0, 3}}),
      {3});
  add("all_to_all over x, split 0 concat 1",
      make(K::AllToAll, {"x"}, 0, true, 1),
      make(K::AllToAll, {"x"}, 1, true, 0),
      {4, 2});
  add("all_to_all over (x, y), untiled, split 1 concat 0",
      make(K::AllToAll, {"x", "y"}, 1, false, 0),
      make(K::AllToAll, {"x", "y"}, 0, false, 1),
      {3, 4});
  return c;
}

// What ref says instance r's cotangent of x is, from every instance's
// cotangent of its result [cts] (the transpose applied to the group's).
std::vector<double> ref_grad(const Case& c,
                             int r,
                             const std::vector<Tensor>& xs,
                             const std::vector<Tensor>& cts) {
  std::vector<int> g = group_of(r, c.op.axes);
  const size_t pos = std::find(g.begin(), g.end(), r) - g.begin();
  ss::ref::Blocks gx, gc;
  for (int m : g) {
    gx.push_back(xs[m]);
    gc.push_back(cts[m]);
  }
  if (c.transpose.kind != MeshOpKind::SumToExtremum)
    return ss::ref::collective(c.transpose, gc)[pos].to_doubles();
  // pmax/pmin by hand: the group's cotangents summed, kept by the lowest
  // member holding the extremum.
  std::vector<double> y = ss::ref::collective(c.op, gx)[0].to_doubles();
  std::vector<double> out(y.size(), 0.0);
  for (size_t e = 0; e < y.size(); ++e) {
    size_t holder = 0;
    while (gx[holder].to_doubles()[e] != y[e]) ++holder;
    if (holder != pos) continue;
    for (const Tensor& t : gc) out[e] += t.to_doubles()[e];
  }
  return out;
}

}  // namespace

TEST_CASE("worker mesh: every collective and its VJP equal ref's on 2x2",
          "[devices][spmd][gloo]") {
  const std::vector<Case> all = cases();
  ss::dist::JobDir dir = ss::dist::make_job_dir("ss-worker-mesh-test");
  std::atomic<int> checked{0};
  std::vector<std::string> errs = run_ranks(kWorld, [&](int r) {
    ss::dist::GlooComm world(
        r, kWorld, dir.path(), "world", std::chrono::milliseconds(20000));
    ss::devices::lower::DeviceContext d;
    d.rank = r;
    d.world = kWorld;
    d.comm = &world;
    ss::devices::lower::WorkerMesh mesh(
        ss::eval::spmd::MeshShape({{"x", 2}, {"y", 2}}), d, dir.path());
    EXPECT(mesh.axis_index("x") == r / 2 && mesh.axis_index("y") == r % 2);
    EXPECT(mesh.axis_size("y") == 2);
    for (size_t k = 0; k < all.size(); ++k) {
      const Case& c = all[k];
      std::vector<Tensor> xs;
      for (int m = 0; m < kWorld; ++m) xs.push_back(block(m, c.shape, int(k)));
      std::vector<int> g = group_of(r, c.op.axes);
      const size_t pos = std::find(g.begin(), g.end(), r) - g.begin();
      ss::ref::Blocks gx;
      for (int m : g) gx.push_back(xs[m]);
      Tensor want = ss::ref::collective(c.op, gx)[pos];

      Tensor x = ss::ops::requires_grad(xs[r]);
      Tensor y = mesh.collective(c.op, c.transpose, x);
      if (y.shape() != want.shape() || y.to_doubles() != want.to_doubles())
        throw RankFailure(c.what + ": the forward is not ref's");
      // Each instance's cotangent of its result: other small integers.
      std::vector<Tensor> cts;
      for (int m = 0; m < kWorld; ++m)
        cts.push_back(block(m, want.shape(), 5 + int(k)));
      Tensor loss = ss::ops::sum(ss::ops::mul(y, cts[r]));
      std::vector<Tensor> grads = ss::ops::backward(loss, {x});
      if (grads[0].to_doubles() != ref_grad(c, r, xs, cts))
        throw RankFailure(c.what + ": the VJP is not ref's transpose");
      ++checked;
    }
  });
  require_ok(errs);
  CHECK(checked == kWorld * static_cast<int>(all.size()));
}
