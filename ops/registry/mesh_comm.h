#pragma once
// Note [Mesh collectives]
// An spmd fn's collectives (spmd.md's table) reach the instances of the
// mesh through one interface, MeshComm, which a collective's forward finds
// in its ForwardCtx (ForwardCtx::mesh(): null outside an instance). The
// ops layer knows nothing of how instances meet:
//  - the simulated mode (`devices cpu`, interp/eval/spmd/) runs every
//    instance on a thread of one process and combines the group's blocks
//    with the reference collectives of ref/ref_collectives.h;
//  - the distributed mode (cpu[N], next) runs one instance per worker and
//    implements the same calls over Gloo, a group per mesh axis.
// Each forward names its collective and the collective's transpose (its
// row in collectives.cpp, spmd.md's table), and the implementation records
// the transpose as the result's VJP, so value_and_grad differentiates
// through spmd fns in either mode.
//
// Note [Cotangents of invariant values]
// The transposes here are the exact linear transposes of each collective
// as a map of all instances' blocks: a value the caller takes one copy of
// sends its cotangent to that copy's instance (instance 0 along the axes
// it is invariant over), and a whole argument replicated over a mesh axis
// gets the sum of its instances' cotangents (the transpose of the copy).
// In that convention psum's transpose is psum and pvary's is the identity;
// spmd.md's table (psum -> pvary, pvary -> psum) is the same map written
// for cotangents that every instance holds whole, which needs each op's
// varying set at run time (JAX's implicit pvary). Both give the same
// gradients; the first needs no types on the tape.
//
// Note [A gradient inside an instance]
// value_and_grad inside an spmd fn gives what JAX's does (check_vma): the
// gradient of the loss with the replicated copies of each leaf tied. In
// the convention above that is two steps, the same in both modes:
//  1. Seeds. A loss varying over mesh axes V (the checker's loss_varying)
//     is one value per V-coordinate, and its copies along the other axes
//     are the same value: the pass is seeded 1 on the representative copy
//     (index 0 along every axis not in V) and 0 on the others. Every
//     instance still runs its whole pass (a zero seed skips no transpose:
//     the transposes pair up across the instances).
//  2. Leaves. A leaf invariant over mesh axes T (the mesh's axes its type
//     does not split: a tensor's varying set, a model's spec) is one value
//     tied over T; its gradient is the sum of its copies' over T (the
//     transpose of the tie, JAX's psum of the implicit pvary), the same on
//     every instance of the orbit.
// By hand, on mesh x=2 with w replicated and v split over x:
// L = psum(sum(v w), x) + sum(w²). Seed 1 on instance 0 only; psum's
// transpose hands both instances cotangent 1 on their sum(v_i w), and
// instance 0 alone adds 2w; the sum over x gives v's column sums + 2w on
// both instances, JAX's [17 18] (conformance/spmd/grad_local_term*.ss). A
// varying loss L_i = f(w, a_i) seeds every instance: a_i gets dL_i/da_i,
// w the sum over i of dL_i/dw (JAX's, psummed).
// The distributed mode runs each instance's pass with its seed on its
// worker and all-reduces each leaf's gradient over T's group (WorkerMesh);
// the simulated mode, whose instances share one whole-mesh graph, meets
// once at the call and runs one pass from every instance's seeded loss to
// every instance's leaves, then sums each leaf over its orbits (SimMesh).
// An ordinary fn's body carries no varying sets (the checker types it
// without them), so a value_and_grad there, called per instance, is a
// ValueError (interp/builtins/autodiff.cpp, loss_varying_or_refuse):
// each instance's own gradient would differ from JAX's for a replicated
// leaf (conformance/spmd/grad_in_ordinary_fn.ss).

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ops/core/tensor.h"

namespace ss::ops {

enum class MeshOpKind : uint8_t {
  Sum,          // psum
  Mean,         // pmean
  Max,          // pmax
  Min,          // pmin
  Vary,         // pvary: no data moves
  AllGather,    // all_gather
  PsumScatter,  // psum_scatter
  Ppermute,     // ppermute
  AllToAll,     // all_to_all
  /// pmax's and pmin's transpose: the cotangents summed, kept by the
  /// instance that held the extremum of each element (the lowest index on
  /// a tie), zero elsewhere.
  SumToExtremum,
};

/// One collective as a forward asks for it.
struct MeshOp {
  MeshOpKind kind = MeshOpKind::Sum;
  /// The mesh axes it runs over, as written (`(x, y)`: x major). The
  /// instances that share every other mesh axis form one group.
  std::vector<std::string> axes;
  int axis = 0;    // all_gather, psum_scatter: over=; all_to_all: split=
  int concat = 0;  // all_to_all: concat=
  bool tiled = true;
  /// ppermute: (source, destination) indices along axes[0].
  std::vector<std::pair<int64_t, int64_t>> perm;
};

/// "psum", "all_gather", ... (messages).
inline const char* mesh_op_name(MeshOpKind k) {
  switch (k) {
    case MeshOpKind::Sum:
      return "psum";
    case MeshOpKind::Mean:
      return "pmean";
    case MeshOpKind::Max:
      return "pmax";
    case MeshOpKind::Min:
      return "pmin";
    case MeshOpKind::Vary:
      return "pvary";
    case MeshOpKind::AllGather:
      return "all_gather";
    case MeshOpKind::PsumScatter:
      return "psum_scatter";
    case MeshOpKind::Ppermute:
      return "ppermute";
    case MeshOpKind::AllToAll:
      return "all_to_all";
    case MeshOpKind::SumToExtremum:
      return "the transpose of pmax";
  }
  return "a collective";
}

class MeshComm {
 public:
  virtual ~MeshComm() = default;
  /// This instance's index along mesh axis [axis], and the axis's size.
  virtual int64_t axis_index(const std::string& axis) = 0;
  virtual int64_t axis_size(const std::string& axis) = 0;
  /// This instance's result of [op] on its block [x]. Every instance of
  /// the group calls it, in the same order; when [x] needs a gradient the
  /// result's VJP is [transpose] (Note [Cotangents of invariant values]).
  virtual Tensor collective(const MeshOp& op,
                            const MeshOp& transpose,
                            const Tensor& x) = 0;
  /// value_and_grad inside the instance (Note [A gradient inside an
  /// instance]): this instance's gradients of [loss], its copy of the loss
  /// seeded [seed] (1 on a representative copy, 0 on the others), w.r.t.
  /// [leaves], leaf i's summed over the mesh axes [tied][i]. Every
  /// instance calls it, in the same order as its collectives.
  virtual std::vector<Tensor> instance_gradients(
      const Tensor& loss,
      double seed,
      const std::vector<Tensor>& leaves,
      const std::vector<std::vector<std::string>>& tied) = 0;
};

}  // namespace ss::ops
