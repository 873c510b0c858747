// The simulated mesh: rendezvous of the instances' threads, combined with
// ref/'s reference collectives (sim_mesh.h).
#include "interp/eval/spmd/sim_mesh.h"

#include <algorithm>
#include <stdexcept>

#include "ops/autodiff/tape.h"
#include "ops/core/op_error.h"
#include "ref/ref_collectives.h"

namespace ss::eval::spmd {

using ops::MeshOp;
using ops::MeshOpKind;
using ops::Tensor;

struct SimMesh::Meeting {
  MeshOp op, transpose;
  std::vector<int64_t> members;
  std::vector<Tensor> in, out;  // by position in the group
  size_t arrived = 0, taken = 0;
  bool ready = false;
  std::string error;  // the blocks did not fit the collective
  const SimMesh::Combine* custom = nullptr;  // meet()'s
};

namespace {

PayloadLog g_payload_log;

// pmax/pmin: element e of instance j's mask is 1 when j is the lowest
// instance whose block holds the extremum there.
std::vector<std::vector<double>> holders(const ref::Blocks& xs,
                                         const Tensor& y) {
  std::vector<double> yv = y.to_doubles();
  std::vector<std::vector<double>> masks(xs.size(),
                                         std::vector<double>(yv.size(), 0.0));
  std::vector<bool> taken(yv.size(), false);
  for (size_t j = 0; j < xs.size(); ++j) {
    std::vector<double> v = xs[j].to_doubles();
    for (size_t e = 0; e < v.size(); ++e)
      if (!taken[e] && v[e] == yv[e]) {
        masks[j][e] = 1;
        taken[e] = true;
      }
  }
  return masks;
}

}  // namespace

SimMesh::SimMesh(std::vector<check::MeshAxis> axes)
    : MeshShape(std::move(axes)) {
  ordinal_.assign(static_cast<size_t>(instances()), 0);
  done_.assign(static_cast<size_t>(instances()), false);
}

void SimMesh::combine(Meeting& m) {
  if (m.custom) {
    m.out = (*m.custom)(m.in);
    return;
  }
  ref::Blocks ys;
  try {
    ys = ref::collective(m.op, m.in);
  } catch (const std::invalid_argument& e) {
    std::string w = e.what();
    m.error =
        w.substr(w.find(": ") == std::string::npos ? 0 : w.find(": ") + 2);
    return;
  }
  const size_t n = m.in.size();
  std::vector<std::vector<double>> masks;
  if (m.transpose.kind == MeshOpKind::SumToExtremum)
    masks = holders(m.in, ys[0]);
  for (size_t i = 0; i < n; ++i) {
    // The VJP of output i alone: the transpose applied to the cotangents
    // with gy at i and zeros elsewhere. backward() sums what every
    // output's node gives each input, which is the transpose of the whole
    // collective (linear in the blocks).
    MeshOp tr = m.transpose;
    std::vector<ops::Shape> in_shapes;
    for (const Tensor& x : m.in) in_shapes.push_back(x.shape());
    ops::Shape out_shape = ys[i].shape();
    auto vjp = [tr, i, n, in_shapes, out_shape, masks](const Tensor& gy) {
      std::vector<Tensor> cts;
      if (tr.kind == MeshOpKind::SumToExtremum) {
        std::vector<double> g = gy.to_doubles();
        for (size_t j = 0; j < n; ++j) {
          std::vector<double> c(g.size());
          for (size_t e = 0; e < g.size(); ++e) c[e] = g[e] * masks[j][e];
          cts.push_back(Tensor::from_doubles(in_shapes[j], c, gy.dtype()));
        }
        return cts;
      }
      ref::Blocks one_hot(n, Tensor::zeros(out_shape, gy.dtype()));
      one_hot[i] = gy;
      return ref::collective(tr, one_hot);
    };
    ys[i] = ops::record(ops::mesh_op_name(m.op.kind), ys[i], m.in, vjp);
  }
  m.out = std::move(ys);
}

Tensor SimMesh::collective(int64_t me,
                           const MeshOp& op,
                           const MeshOp& transpose,
                           const Tensor& x) {
  return rendezvous(me, group(me, op.axes), op, transpose, x, nullptr);
}

Tensor SimMesh::meet(int64_t me, const Tensor& x, const Combine& combine) {
  std::vector<int64_t> all;
  for (int64_t n = 0; n < instances(); ++n) all.push_back(n);
  return rendezvous(me, std::move(all), {}, {}, x, &combine);
}

Tensor SimMesh::rendezvous(int64_t me,
                           std::vector<int64_t> members,
                           const MeshOp& op,
                           const MeshOp& transpose,
                           const Tensor& x,
                           const Combine* custom) {
  std::unique_lock<std::mutex> lk(mu_);
  if (failed_) throw Abandoned{"another instance failed"};
  const int64_t k = ordinal_[me]++;
  auto& slot = meetings_[{members[0], k}];
  if (!slot) {
    slot = std::make_shared<Meeting>();
    slot->op = op;
    slot->transpose = transpose;
    slot->members = members;
    slot->in.resize(members.size());
    slot->custom = custom;
  }
  std::shared_ptr<Meeting> m = slot;
  if (m->op.kind != op.kind || m->op.axes != op.axes ||
      (m->custom == nullptr) != (custom == nullptr)) {
    auto name = [](const MeshOp& o, const Combine* c) -> std::string {
      return c ? "a call through remat" : ops::mesh_op_name(o.kind);
    };
    throw ops::OpError(
        ops::OpError::Kind::Value,
        "instance " + label(me) + " reached " + name(op, custom) +
            " where instance " + label(m->members[0]) + " reached " +
            name(m->op, m->custom) + " (the instances took different paths)");
  }
  const size_t pos = static_cast<size_t>(
      std::find(members.begin(), members.end(), me) - members.begin());
  m->in[pos] = x;
  if (g_payload_log && !custom) g_payload_log(me, op, x);
  if (++m->arrived == members.size()) {
    combine(*m);
    m->ready = true;
    cv_.notify_all();
  }
  std::string missing;
  cv_.wait(lk, [&] {
    if (m->ready || failed_) return true;
    for (size_t j = 0; j < members.size(); ++j)
      if (!m->in[j].defined() && done_[members[j]]) {
        missing = label(members[j]);
        return true;
      }
    return false;
  });
  if (!m->ready) {
    if (!missing.empty())
      throw ops::OpError(ops::OpError::Kind::Value,
                         "instance " + missing +
                             " returned without reaching "
                             "this collective (the instances took different "
                             "paths)");
    throw Abandoned{"another instance failed"};
  }
  if (++m->taken == members.size()) meetings_.erase({members[0], k});
  if (!m->error.empty())
    throw ops::OpError(ops::OpError::Kind::Shape, m->error);
  return m->out[pos];
}

void set_payload_log(PayloadLog log) {
  g_payload_log = std::move(log);
}

void SimMesh::finished(int64_t me, bool failed) {
  std::lock_guard<std::mutex> lk(mu_);
  done_[me] = true;
  if (failed) failed_ = true;
  cv_.notify_all();
}

int64_t InstanceComm::axis_index(const std::string& axis) {
  return mesh_.index_along(me_, axis);
}

int64_t InstanceComm::axis_size(const std::string& axis) {
  return mesh_.size_of(axis);
}

}  // namespace ss::eval::spmd
