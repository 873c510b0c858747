// The simulated mesh: rendezvous of the instances' threads, combined with
// ref/'s reference collectives (sim_mesh.h).
#include "interp/eval/spmd/sim_mesh.h"

#include <algorithm>
#include <stdexcept>

#include "ops/api.h"
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
  // By position in the group: a collective's block, or what each instance
  // hands meet_all().
  std::vector<std::vector<Tensor>> in, out;
  std::vector<bool> here;  // by position: arrived
  size_t arrived = 0, taken = 0;
  bool ready = false;
  std::string error;  // the blocks did not fit the collective
  const SimMesh::CombineAll* custom = nullptr;  // meet_all()'s
  const char* what = nullptr;                   // meet_all()'s
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
  // ref/ reads each block through to_doubles() and makes host tensors:
  // its results go back to each instance's device (`cuda[0]`).
  ref::Blocks xs;
  for (const std::vector<Tensor>& x : m.in) xs.push_back(x[0]);
  ref::Blocks ys;
  try {
    ys = ref::collective(m.op, xs);
    for (size_t i = 0; i < ys.size() && i < xs.size(); ++i)
      ys[i] = ys[i].to(xs[i].device());
  } catch (const std::invalid_argument& e) {
    std::string w = e.what();
    m.error =
        w.substr(w.find(": ") == std::string::npos ? 0 : w.find(": ") + 2);
    return;
  }
  const size_t n = xs.size();
  std::vector<std::vector<double>> masks;
  if (m.transpose.kind == MeshOpKind::SumToExtremum) masks = holders(xs, ys[0]);
  for (size_t i = 0; i < n; ++i) {
    // The VJP of output i alone: the transpose applied to the cotangents
    // with gy at i and zeros elsewhere. backward() sums what every
    // output's node gives each input, which is the transpose of the whole
    // collective (linear in the blocks).
    MeshOp tr = m.transpose;
    std::vector<ops::Shape> in_shapes;
    for (const Tensor& x : xs) in_shapes.push_back(x.shape());
    ops::Shape out_shape = ys[i].shape();
    auto vjp = [tr, i, n, in_shapes, out_shape, masks](const Tensor& gy) {
      std::vector<Tensor> cts;
      if (tr.kind == MeshOpKind::SumToExtremum) {
        std::vector<double> g = gy.to_doubles();
        for (size_t j = 0; j < n; ++j) {
          std::vector<double> c(g.size());
          for (size_t e = 0; e < g.size(); ++e) c[e] = g[e] * masks[j][e];
          cts.push_back(Tensor::from_doubles(in_shapes[j], c, gy.dtype())
                            .to(gy.device()));
        }
        return cts;
      }
      ref::Blocks one_hot(n, Tensor::zeros(out_shape, gy.dtype()));
      one_hot[i] = gy;
      ref::Blocks summed = ref::collective(tr, one_hot);
      for (Tensor& c : summed) c = c.to(gy.device());
      return summed;
    };
    ys[i] = ops::record(ops::mesh_op_name(m.op.kind), ys[i], xs, vjp);
  }
  for (Tensor& y : ys) m.out.push_back({std::move(y)});
}

Tensor SimMesh::collective(int64_t me,
                           const MeshOp& op,
                           const MeshOp& transpose,
                           const Tensor& x) {
  return rendezvous(
             me, group(me, op.axes), op, transpose, {x}, nullptr, nullptr)
      .at(0);
}

Tensor SimMesh::meet(int64_t me, const Tensor& x, const Combine& combine) {
  CombineAll each = [&combine](const std::vector<std::vector<Tensor>>& xs) {
    std::vector<Tensor> one;
    for (const std::vector<Tensor>& x : xs) one.push_back(x[0]);
    std::vector<std::vector<Tensor>> out;
    for (Tensor& y : combine(one)) out.push_back({std::move(y)});
    return out;
  };
  return meet_all(me, {x}, each, "a call through remat").at(0);
}

std::vector<Tensor> SimMesh::meet_all(int64_t me,
                                      std::vector<Tensor> xs,
                                      const CombineAll& combine,
                                      const char* what) {
  std::vector<int64_t> all;
  for (int64_t n = 0; n < instances(); ++n) all.push_back(n);
  return rendezvous(me, std::move(all), {}, {}, std::move(xs), &combine, what);
}

std::vector<Tensor> SimMesh::rendezvous(int64_t me,
                                        std::vector<int64_t> members,
                                        const MeshOp& op,
                                        const MeshOp& transpose,
                                        std::vector<Tensor> xs,
                                        const CombineAll* custom,
                                        const char* what) {
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
    slot->here.assign(members.size(), false);
    slot->custom = custom;
    slot->what = what;
  }
  std::shared_ptr<Meeting> m = slot;
  auto name = [](const MeshOp& o, const char* w) -> std::string {
    return w ? w : ops::mesh_op_name(o.kind);
  };
  if (m->op.kind != op.kind || m->op.axes != op.axes ||
      name(m->op, m->what) != name(op, what)) {
    throw ops::OpError(ops::OpError::Kind::Value,
                       "instance " + label(me) + " reached " + name(op, what) +
                           " where instance " + label(m->members[0]) +
                           " reached " + name(m->op, m->what) +
                           " (the instances took different paths)");
  }
  const size_t pos = static_cast<size_t>(
      std::find(members.begin(), members.end(), me) - members.begin());
  if (g_payload_log && !custom) g_payload_log(me, op, xs.at(0));
  m->in[pos] = std::move(xs);
  m->here[pos] = true;
  if (++m->arrived == members.size()) {
    try {
      combine(*m);
    } catch (...) {
      // The others stop with Abandoned, this instance with the error (a
      // recompute's, in value_and_grad's pass).
      failed_ = true;
      cv_.notify_all();
      throw;
    }
    m->ready = true;
    cv_.notify_all();
  }
  std::string missing;
  cv_.wait(lk, [&] {
    if (m->ready || failed_) return true;
    for (size_t j = 0; j < members.size(); ++j)
      if (!m->here[j] && done_[members[j]]) {
        missing = label(members[j]);
        return true;
      }
    return false;
  });
  if (!m->ready) {
    if (!missing.empty())
      throw ops::OpError(ops::OpError::Kind::Value,
                         "instance " + missing + " returned without reaching " +
                             (what ? std::string(what) : "this collective") +
                             " (the instances took different paths)");
    throw Abandoned{"another instance failed"};
  }
  if (++m->taken == members.size()) meetings_.erase({members[0], k});
  if (!m->error.empty())
    throw ops::OpError(ops::OpError::Kind::Shape, m->error);
  return m->out[pos];
}

std::vector<Tensor> InstanceComm::instance_gradients(
    const Tensor& loss,
    double seed,
    const std::vector<Tensor>& leaves,
    const std::vector<std::vector<std::string>>& tied) {
  std::vector<Tensor> xs{loss, Tensor::scalar(seed, types::DType::F64)};
  xs.insert(xs.end(), leaves.begin(), leaves.end());
  const MeshShape& shape = mesh_;
  SimMesh::CombineAll pass =
      [&shape, &tied](const std::vector<std::vector<Tensor>>& all) {
        // One pass from every seeded copy of the loss (their sum) to every
        // instance's leaves: the instances share one graph.
        Tensor root;
        std::vector<Tensor> every;
        {
          ops::GradMode::Guard on(true);
          for (const std::vector<Tensor>& x : all) {
            if (x[1].item() != 0)
              root = root.defined() ? ops::add(root, x[0]) : x[0];
            every.insert(every.end(), x.begin() + 2, x.end());
          }
        }
        const std::vector<Tensor> g = ops::backward(root, every);
        // Each leaf's gradient summed over its orbit, in instance order:
        // the same bits on every instance of it.
        const size_t count = tied.size();
        std::vector<std::vector<Tensor>> out(all.size());
        ops::GradMode::Guard off(false);
        for (size_t n = 0; n < all.size(); ++n)
          for (size_t i = 0; i < count; ++i) {
            Tensor sum;
            for (int64_t o : shape.group(int64_t(n), tied[i])) {
              const Tensor& part = g[size_t(o) * count + i];
              sum = sum.defined() ? ops::add(sum, part) : part;
            }
            out[n].push_back(sum);
          }
        return out;
      };
  return mesh_.meet_all(me_, std::move(xs), pass, "value_and_grad");
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
