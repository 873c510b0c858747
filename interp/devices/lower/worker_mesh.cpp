// The distributed mode's mesh: collectives over Gloo groups (worker_mesh.h,
// Note [Spmd fns on workers]).
#include "interp/devices/lower/worker_mesh.h"

#include <algorithm>
#include <ostream>
#include <streambuf>

#include "dist/comm/transport.h"
#include "interp/devices/lower/lowering.h"
#include "interp/devices/null_buf.h"
#include "ops/api.h"
#include "ops/autodiff/tape.h"
#include "ops/core/op_error.h"

namespace ss::devices::lower {

// The evaluator's values and objects, which the ranks' code works on.
using namespace ss::eval;

using ops::MeshOp;
using ops::MeshOpKind;
using ops::Tensor;
using types::DType;

namespace {

// The dtypes a Communicator carries; others travel as f64 (exact for the
// integers and halves a block holds).
bool carried(DType d) {
  return d == DType::F32 || d == DType::F64 || d == DType::I32 ||
         d == DType::I64;
}

// A fresh contiguous copy of [x] in a dtype the communicator carries.
Tensor sendable(const Tensor& x) {
  return carried(x.dtype()) ? x.clone() : ops::cast(x, DType::F64).clone();
}

Tensor back_to(const Tensor& y, DType d) {
  return y.dtype() == d ? y : ops::cast(y, d);
}

void all_reduce(Tensor& t,
                dist::ReduceOp op,
                dist::Communicator& c,
                DeviceContext& d) {
  Waiting w(d);
  c.all_reduce(t, op, dist::Options{});
}

[[noreturn]] void shape_error(const std::string& what) {
  throw ops::OpError(ops::OpError::Kind::Shape, what);
}

}  // namespace

WorkerMesh::WorkerMesh(spmd::MeshShape shape,
                       DeviceContext& d,
                       std::string store)
    : shape_(std::move(shape)), d_(d), store_(std::move(store)) {}

WorkerMesh::~WorkerMesh() = default;

int64_t WorkerMesh::me() const {
  return d_.rank;
}

void WorkerMesh::close() {
  for (auto& [members, g] : groups_)
    if (g.own) g.own->close();
  // The groups of its own not joined yet: their members may be waiting to
  // join (Note [A peer that left before joining] in dist/comm/).
  const int64_t axes = static_cast<int64_t>(shape_.axes().size());
  for (int64_t set = 1; set < (int64_t{1} << axes); ++set) {
    std::vector<std::string> names;
    for (int64_t a = 0; a < axes; ++a)
      if (set & (int64_t{1} << a))
        names.push_back(shape_.axes()[size_t(a)].name);
    std::vector<int64_t> members = shape_.group(me(), names);
    if (members.size() > 1 && !is_world(members) && !groups_.count(members))
      dist::Transport::leave_unjoined(store_, group_name(members));
  }
}

void WorkerMesh::run(spmd::InstanceRun& r) {
  struct Restore {
    std::streambuf*& p;
    std::streambuf* was;
    ~Restore() { p = was; }
  } restore{prints_, prints_};
  prints_ = &r.out;
  spmd::run_instance(r, *this);
}

Value WorkerMesh::call_remat(Interpreter& in,
                             const check::FnInfo& fn,
                             std::vector<Value> args,
                             diag::Span site) {
  const check::Program* prog = &in.program();
  const diag::SourceMap* sm = &in.sources();
  const check::FnInfo* f = &fn;
  std::vector<StackEntry> stack = in.stack();
  auto again = [this, prog, sm, f, site, stack](std::vector<Value> a) {
    devices::NullBuf none;
    std::ostream os(prints_ ? prints_ : &none);
    Interpreter it(*prog, *sm, os);
    it.set_mesh(this);
    it.exchange_stack(stack);
    Value y = it.call(*f, std::move(a), site);
    os.flush();
    return y;
  };
  return call_remat_here(in, fn, std::move(args), site, again);
}

std::vector<Tensor> WorkerMesh::instance_gradients(
    const Tensor& loss,
    double seed,
    const std::vector<Tensor>& leaves,
    const std::vector<std::vector<std::string>>& tied) {
  std::vector<Tensor> g = ops::backward(loss, leaves, {}, 1.0, seed);
  MeshOp sum;
  for (size_t i = 0; i < g.size(); ++i) {
    if (tied[i].empty()) continue;
    sum.axes = tied[i];
    g[i] = run(sum, g[i], group(tied[i]));
  }
  return g;
}

int64_t WorkerMesh::axis_index(const std::string& axis) {
  return shape_.index_along(me(), axis);
}

int64_t WorkerMesh::axis_size(const std::string& axis) {
  return shape_.size_of(axis);
}

bool WorkerMesh::is_world(const std::vector<int64_t>& members) const {
  bool world = static_cast<int>(members.size()) == d_.world;
  for (size_t k = 0; world && k < members.size(); ++k)
    world = members[k] == static_cast<int64_t>(k);
  return world;
}

// The group's name is its members: every member joins the same one.
std::string WorkerMesh::group_name(const std::vector<int64_t>& members) {
  std::string name = "mesh";
  for (int64_t m : members) name += "-" + std::to_string(m);
  return name;
}

WorkerMesh::Group& WorkerMesh::group(const std::vector<std::string>& axes) {
  std::vector<int64_t> members = shape_.group(me(), axes);
  auto it = groups_.find(members);
  if (it != groups_.end()) return it->second;
  Group g;
  g.size = static_cast<int>(members.size());
  g.pos = static_cast<int>(std::find(members.begin(), members.end(), me()) -
                           members.begin());
  if (is_world(members)) {
    g.comm = d_.comm;
  } else if (g.size > 1) {
    Waiting w(d_);
    g.own = d_.transport.join(g.pos, g.size, store_, group_name(members));
    g.comm = g.own.get();
  }
  return groups_.emplace(members, std::move(g)).first->second;
}

Tensor WorkerMesh::run(const MeshOp& op, const Tensor& x, Group& g) {
  ops::GradMode::Guard off(false);
  const int64_t n = g.size;
  const DType dt = x.dtype();
  auto reduced = [&](dist::ReduceOp r) {
    Tensor t = sendable(x);
    if (g.comm) all_reduce(t, r, *g.comm, d_);
    return t;
  };
  switch (op.kind) {
    case MeshOpKind::Sum:
      return back_to(reduced(dist::ReduceOp::Sum), dt);
    case MeshOpKind::Max:
      return back_to(reduced(dist::ReduceOp::Max), dt);
    case MeshOpKind::Min:
      return back_to(reduced(dist::ReduceOp::Min), dt);
    case MeshOpKind::Mean: {
      // ref::pmean: the dtype kept, ints to f32.
      DType out = types::is_float(dt) ? dt : DType::F32;
      Tensor s = reduced(dist::ReduceOp::Sum);
      Tensor m = ops::div(back_to(s, out),
                          Tensor::scalar(static_cast<double>(n), out));
      return m;
    }
    case MeshOpKind::Vary:
      return x.clone();
    case MeshOpKind::AllGather: {
      Tensor t = sendable(x), all;
      if (g.comm) {
        Waiting w(d_);
        g.comm->all_gather(t, all, dist::Options{});
      } else {
        all = t;
      }
      ops::Shape s = x.shape();
      ops::Shape stacked = s;
      stacked.insert(stacked.begin(), n);
      Tensor y = back_to(all.reshape(stacked), dt);
      if (!op.tiled) return y;
      if (s.empty()) shape_error("all_gather: a 0-d block");
      const int a =
          op.axis < 0 ? op.axis + static_cast<int>(s.size()) : op.axis;
      if (a < 0 || a >= static_cast<int>(s.size()))
        shape_error("all_gather: axis out of range");
      // [n, s0 .. sa ..] -> [s0 .. n sa ..]: the blocks in order along a.
      std::vector<int> perm;
      for (int k = 1; k <= a; ++k) perm.push_back(k);
      perm.push_back(0);
      for (int k = a + 1; k <= static_cast<int>(s.size()); ++k)
        perm.push_back(k);
      ops::Shape out = s;
      out[a] *= n;
      return ops::permute(y, perm).clone().reshape(out);
    }
    case MeshOpKind::PsumScatter: {
      Tensor sum = back_to(reduced(dist::ReduceOp::Sum), dt);
      const ops::Shape& s = x.shape();
      if (s.empty()) shape_error("psum_scatter: a 0-d block");
      int a = op.tiled ? op.axis : 0;
      if (a < 0) a += static_cast<int>(s.size());
      if (a < 0 || a >= static_cast<int>(s.size()))
        shape_error("psum_scatter: axis out of range");
      if (op.tiled ? s[a] % n != 0 : s[a] != n)
        shape_error("psum_scatter: the axis does not split into the instances");
      if (!op.tiled) return ops::take_one(sum, g.pos, 0);
      const int64_t w = s[a] / n;
      return ops::slice(sum, a, g.pos * w, (g.pos + 1) * w);
    }
    case MeshOpKind::Ppermute: {
      int dst = -1, src = -1;
      for (const auto& [from, to] : op.perm) {
        if (from == g.pos) dst = static_cast<int>(to);
        if (to == g.pos) src = static_cast<int>(from);
      }
      if (dst == g.pos) return x.clone();  // (i, i): stays
      Tensor out = sendable(x);
      Tensor in = Tensor::zeros(x.shape(), out.dtype(), x.device());
      if (g.comm && (dst >= 0 || src >= 0)) {
        Waiting w(d_);
        g.comm->send_recv(out, dst, in, src, dist::Options{});
      }
      return back_to(in, dt);
    }
    case MeshOpKind::AllToAll: {
      const ops::Shape& s = x.shape();
      int split = op.axis < 0 ? op.axis + static_cast<int>(s.size()) : op.axis;
      if (split < 0 || split >= static_cast<int>(s.size()))
        shape_error("all_to_all: axis out of range");
      if (op.tiled ? s[split] % n != 0 : s[split] != n)
        shape_error("all_to_all: split= does not split into the instances");
      const int64_t w = s[split] / n;
      auto piece = [&](int64_t j) {
        return sendable(op.tiled ? ops::slice(x, split, j * w, (j + 1) * w)
                                 : ops::take_one(x, j, split));
      };
      std::vector<Tensor> got(static_cast<size_t>(n));
      got[g.pos] = piece(g.pos);
      // Round k: send piece (pos + k) to that instance, receive from
      // (pos - k); every pair meets in the same round.
      for (int64_t k = 1; k < n; ++k) {
        int64_t to = (g.pos + k) % n, from = (g.pos - k + n) % n;
        Tensor out = piece(to);
        Tensor in = Tensor::zeros(out.shape(), out.dtype(), out.device());
        Waiting wt(d_);
        g.comm->send_recv(out,
                          static_cast<int>(to),
                          in,
                          static_cast<int>(from),
                          dist::Options{});
        got[from] = in;
      }
      for (Tensor& t : got) t = back_to(t, dt);
      return op.tiled ? ops::concat(got, op.concat)
                      : ops::stack(got, op.concat);
    }
    case MeshOpKind::SumToExtremum:
      break;  // a transpose only: collective() runs it
  }
  throw ops::OpError(
      ops::OpError::Kind::Value,
      std::string(ops::mesh_op_name(op.kind)) + " has no distributed form");
}

Tensor WorkerMesh::collective(const MeshOp& op,
                              const MeshOp& transpose,
                              const Tensor& x) {
  Group& g = group(op.axes);
  Tensor y = run(op, x, g);
  Group* gp = &g;
  if (transpose.kind != MeshOpKind::SumToExtremum)
    return ops::record(ops::mesh_op_name(op.kind),
                       y,
                       {x},
                       [this, transpose, gp](const Tensor& gy) {
                         return std::vector<Tensor>{run(transpose, gy, *gp)};
                       });
  // pmax/pmin: the summed cotangent goes to the lowest instance whose
  // block holds the extremum there (ref's holders).
  const ops::Shape xs = x.shape();
  std::vector<double> xv = x.to_doubles(), yv = y.to_doubles();
  return ops::record(
      ops::mesh_op_name(op.kind),
      y,
      {x},
      [this, gp, xs, xv, yv](const Tensor& gy) {
        std::vector<double> first(xv.size());
        for (size_t e = 0; e < xv.size(); ++e)
          first[e] = xv[e] == yv[e] ? gp->pos : gp->size;
        Tensor holder = Tensor::from_doubles(xs, first, DType::F64);
        Tensor sum = sendable(gy);
        if (gp->comm) {
          all_reduce(holder, dist::ReduceOp::Min, *gp->comm, d_);
          all_reduce(sum, dist::ReduceOp::Sum, *gp->comm, d_);
        }
        std::vector<double> h = holder.to_doubles(), s = sum.to_doubles();
        for (size_t e = 0; e < s.size(); ++e)
          if (h[e] != gp->pos) s[e] = 0;
        return std::vector<Tensor>{
            Tensor::from_doubles(xs, s, gy.dtype()).to(gy.device())};
      });
}

Tensor sum_on_backward(const Tensor& x, WorkerMesh& mesh) {
  if (!types::is_float(x.dtype())) return x;
  WorkerMesh* m = &mesh;
  return ops::record("spmd_cut", x.clone(), {x}, [m](const Tensor& g) {
    Tensor t = sendable(g);
    DeviceContext& d = m->device();
    if (d.comm) all_reduce(t, dist::ReduceOp::Sum, *d.comm, d);
    return std::vector<Tensor>{back_to(t, g.dtype())};
  });
}

Tensor gathered_blocks(const Tensor& block, WorkerMesh& mesh) {
  DeviceContext& d = mesh.device();
  Tensor t = sendable(block), all;
  {
    ops::GradMode::Guard off(false);
    Waiting w(d);
    d.comm->all_gather(t, all, dist::Options{});
  }
  ops::Shape s = block.shape();
  s.insert(s.begin(), mesh.shape().instances());
  Tensor y = back_to(all.reshape(s), block.dtype());
  const int64_t me = mesh.me();
  return ops::record("spmd_join", y, {block}, [me](const Tensor& gy) {
    return std::vector<Tensor>{ops::take_one(gy, me, 0)};
  });
}

}  // namespace ss::devices::lower
