// Note [Remat in instances]
// remat(f) called inside an spmd fn (the FSDP example: gathered params
// gathered again in the backward pass) cannot recompute f per instance as
// Note [Remat] does: f's collectives need every instance to meet again,
// and the simulated backward pass runs on one thread, after the call's
// instances have returned. So the instances recompute together:
//  - forward: each instance runs f with recording off (its collectives
//    meet as usual), then all of them meet (SimMesh::meet), and the last to
//    arrive records ONE node whose output packs every instance's result
//    (flattened, in instance order) and whose inputs are every instance's
//    tensors that need gradients; each instance takes its result as a
//    slice of that output. The node is made before any instance uses its
//    result, so the backward pass reaches it once, with every instance's
//    cotangent summed into its slot.
//  - backward: its VJP runs f again for every instance, on threads of its
//    own over a fresh SimMesh, recording, from fresh leaves; then one
//    backward pass of sum_i <f_i, cotangent_i> gives every input's
//    gradient, across the instances through the recomputed collectives.
// f's intermediates so exist only inside the backward pass, and what f
// prints there prints again (prefixed and merged as the call's prints,
// Note [Prints of instances]), which is how the tests count the
// recompute. Every instance must reach the remat call, as a collective
// (a remat call under a varying condition is an error naming it).
//
// A value_and_grad inside the spmd fn runs one backward pass for the whole
// mesh (Note [A gradient inside an instance] in ops/registry/mesh_comm.h),
// on the thread of the instance that met the others last, while they
// wait: it reaches the packed node once and recomputes f for every
// instance, as main's pass does, and the recompute's prints join each
// instance's own, where its value_and_grad is, so the call merges them in
// order with the rest. f runs twice per instance, as on workers (Note
// [Spmd fns on workers]).
#include "interp/eval/spmd/remat_instances.h"

#include <atomic>

#include "interp/eval/grad_inputs.h"
#include "interp/eval/spmd/instance.h"
#include "interp/eval/spmd/instance_threads.h"
#include "ops/api.h"
#include "ops/autodiff/tape.h"

namespace ss::eval::spmd {

// What the recompute needs, kept by the packed node's VJP; one for each
// remat call, shared by its instances.
struct Recompute {
  const check::Program* prog = nullptr;
  const diag::SourceMap* sm = nullptr;
  std::ostream* out = nullptr;
  std::shared_ptr<std::mutex> out_mu;
  std::vector<StackEntry> stack;
  std::vector<check::MeshAxis> axes;
  const check::FnInfo* fn = nullptr;
  diag::Span site;
  std::vector<std::vector<Value>> args;  // per instance
  std::vector<ops::Shape> shapes;        // each instance's result
  // A backward pass inside the instances (the Note): their print buffers.
  std::vector<EntryBuffer*> outs;
  uint64_t call = 0;  // RematShared::id
};

namespace {

using VK = Value::Kind;

// The instance whose thread this is (its RematComm's), or -1, and its
// call's RematShared::id: a backward pass on an instance's thread is
// inside that call only (another call's instance may backpropagate into
// this call's nodes, after its buffers are gone).
thread_local int64_t t_instance = -1;
thread_local uint64_t t_call = 0;
std::atomic<uint64_t> g_next_call{1};

int64_t numel_of(const ops::Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// Instance [n]'s result: its slot of the packed output.
ops::Tensor unpack(const ops::Tensor& packed,
                   const std::vector<ops::Shape>& shapes,
                   size_t n) {
  int64_t at = 0;
  for (size_t k = 0; k < n; ++k) at += numel_of(shapes[k]);
  return ops::reshape(ops::slice(packed, 0, at, at + numel_of(shapes[n])),
                      shapes[n]);
}

// Every instance runs [rc.fn] again on [fresh], recording, over a fresh
// mesh; their results in instance order. Their prints are printed, or kept
// in [entries] when it is given.
std::vector<ops::Tensor> rerun(
    const Recompute& rc,
    std::vector<std::vector<Value>> fresh,
    std::vector<std::vector<std::string>>* entries_out = nullptr) {
  SimMesh mesh(rc.axes);
  RematShared shared;
  shared.prog = rc.prog;
  shared.sm = rc.sm;
  shared.out = rc.out;
  shared.out_mu = rc.out_mu;
  shared.stack = rc.stack;
  shared.calls.resize(size_t(mesh.instances()));
  const size_t count = size_t(mesh.instances());
  std::vector<InstanceRun> runs(count);
  std::vector<std::string> abandoned(count);
  run_instance_threads(
      mesh,
      [&](int64_t n) {
        InstanceRun& r = runs[n];
        r.prog = rc.prog;
        r.sm = rc.sm;
        r.fn = rc.fn;
        r.site = rc.site;
        r.stack = rc.stack;
        r.grad = true;
        r.args = std::move(fresh[n]);
        RematComm comm(mesh, n, shared);
        try {
          run_instance(r, comm);
        } catch (const Abandoned& a) {
          abandoned[n] = a.why;
        }
        mesh.finished(n, !abandoned[n].empty() || r.error);
      },
      [&](int64_t n) {
        abandoned[n] = "could not start a thread for this instance";
      });
  if (entries_out) {
    for (InstanceRun& r : runs) entries_out->push_back(r.out.entries());
  } else {
    std::vector<std::vector<std::string>> entries;
    for (InstanceRun& r : runs) entries.push_back(r.out.entries());
    std::lock_guard<std::mutex> lk(*rc.out_mu);
    *rc.out << merged_prints(mesh, entries) << std::flush;
  }
  std::vector<ops::Tensor> ys(count);
  for (size_t n = 0; n < count; ++n) {
    if (runs[n].error) {
      RuntimeError e = *runs[n].error;
      e.notes().push_back("in the instance at " + mesh.label(int64_t(n)) +
                          ", recomputing `" + rc.fn->name +
                          "` (remat) in the backward pass");
      throw e;
    }
    if (runs[n].result.kind == VK::Tensor) ys[n] = runs[n].result.t;
  }
  for (size_t n = 0; n < count; ++n)
    if (!abandoned[n].empty() || !ys[n].defined())
      throw RuntimeError("ValueError",
                         "instance " + mesh.label(int64_t(n)) +
                             " stopped while recomputing `" + rc.fn->name +
                             "` (remat): " + abandoned[n],
                         rc.site);
  return ys;
}

}  // namespace

uint64_t next_remat_call() {
  return g_next_call.fetch_add(1);
}

RematComm::RematComm(SimMesh& mesh, int64_t me, RematShared& shared)
    : InstanceComm(mesh, me), mesh_(mesh), me_(me), shared_(shared) {
  was_ = t_instance;
  was_call_ = t_call;
  t_instance = me;
  t_call = shared.id;
}

RematComm::~RematComm() {
  t_instance = was_;
  t_call = was_call_;
}

Value RematComm::call_remat(Interpreter& in,
                            const check::FnInfo& fn,
                            std::vector<Value> args,
                            diag::Span site) {
  if (!ops::GradMode::enabled() || fn.result.kind != types::Type::Kind::Tensor)
    return in.call(fn, std::move(args), site);
  const size_t k = next_++;
  RematShared::Call mine;
  mine.args = args;
  swap_grad_inputs(args, mine.inputs, [](const ops::Tensor& t) { return t; });
  Value r;
  {
    ops::GradMode::Guard off(false);
    r = in.call(fn, std::move(args), site);
  }
  if (r.kind != VK::Tensor) return r;
  std::shared_ptr<Recompute> rc;
  {
    std::lock_guard<std::mutex> lk(shared_.mu);
    auto& mine_all = shared_.calls[size_t(me_)];
    if (mine_all.size() <= k) mine_all.resize(k + 1);
    mine_all[k] = std::move(mine);
    std::shared_ptr<Recompute>& slot = shared_.recomputes[k];
    if (!slot) {
      slot = std::make_shared<Recompute>();
      slot->prog = shared_.prog;
      slot->sm = shared_.sm;
      slot->out = shared_.out;
      slot->out_mu = shared_.out_mu;
      slot->stack = shared_.stack;
      slot->axes = mesh_.axes();
      slot->fn = &fn;
      slot->site = site;
      slot->outs = shared_.outs;
      slot->call = shared_.id;
    }
    rc = slot;
  }
  // The last instance to arrive records the packed node (the Note); its
  // shapes are read after the meeting, which orders them.
  SimMesh::Combine pack = [this, k, rc](const std::vector<ops::Tensor>& ys) {
    std::vector<ops::Tensor> flat, inputs;
    std::lock_guard<std::mutex> lk(shared_.mu);
    for (size_t n = 0; n < ys.size(); ++n) {
      flat.push_back(ops::reshape(ys[n].detach(), {ys[n].numel()}));
      rc->shapes.push_back(ys[n].shape());
      RematShared::Call& c = shared_.calls[n][k];
      rc->args.push_back(c.args);
      inputs.insert(inputs.end(), c.inputs.begin(), c.inputs.end());
    }
    ops::Tensor packed;
    {
      ops::GradMode::Guard off(false);
      packed = ops::concat(flat, 0);
    }
    auto vjp = [rc](const ops::Tensor& gy) {
      // On an instance's thread: value_and_grad's pass inside the call.
      const bool inside = t_call == rc->call && t_instance >= 0;
      std::vector<std::vector<Value>> fresh;
      std::vector<ops::Tensor> again, leaves;
      for (const std::vector<Value>& a : rc->args)
        fresh.push_back(swap_grad_inputs(a, again, [&](const ops::Tensor& t) {
          leaves.push_back(ops::requires_grad(t.detach()));
          return leaves.back();
        }));
      std::vector<std::vector<std::string>> entries;
      ops::Tensor root;
      {
        ops::GradMode::Guard on(true);
        std::vector<ops::Tensor> ys =
            rerun(*rc, std::move(fresh), inside ? &entries : nullptr);
        for (size_t n = 0; n < ys.size(); ++n) {
          ops::Tensor part = ops::sum(
              ops::mul(ys[n], unpack(gy.detach(), rc->shapes, n).detach()));
          root = root.defined() ? ops::add(root, part) : part;
        }
      }
      for (size_t n = 0; n < entries.size() && n < rc->outs.size(); ++n) {
        std::ostream os(rc->outs[n]);
        for (const std::string& e : entries[n]) os << e << std::flush;
      }
      return ops::backward(root, leaves);
    };
    ops::Tensor node = ops::record("remat", packed, inputs, vjp);
    return std::vector<ops::Tensor>(ys.size(), node);
  };
  ops::Tensor packed = mesh_.meet(me_, r.t, pack);
  if (!ops::needs_grad(packed)) return r;
  return Value::tensor(unpack(packed, rc->shapes, size_t(me_)));
}

}  // namespace ss::eval::spmd
