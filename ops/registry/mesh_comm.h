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
// value_and_grad inside an spmd fn seeds its loss's backward pass on every
// instance. The simulated mode's pass on an instance's thread walks the
// whole mesh's graph from that instance's seed alone: each instance gets
// the gradient of its own copy of the loss. In the distributed mode every
// instance's pass runs its transposes with the others', so the seeds are
// summed: a loss made invariant over mesh axes S by collectives over them
// (psum of a local term: every copy depends on every instance's inputs)
// had |S| seeds summed into each gradient, |S| times the simulated one.
// There each instance seeds such a loss with 1/|S| (copies_summed); a loss
// that ran no collective depends on this instance's inputs only and keeps
// the seed 1. An invariant loss that adds a local invariant term to a
// psum is between the two: the exact gradient would need the varying sets
// on the tape (JAX's implicit pvary), which are not there, so it is a
// ValueError at the call (Note [Local terms of an invariant loss] in
// ops/autodiff/tape.cpp) rather than a wrong gradient.

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
  /// How many instances' seeds of a loss invariant over mesh axes [axes]
  /// a backward pass sums into each gradient (Note [A gradient inside an
  /// instance]).
  virtual double copies_summed(const std::vector<std::string>& axes) {
    (void)axes;
    return 1.0;
  }
  /// How many collectives this instance has run so far.
  virtual uint64_t collectives_run() const { return 0; }
};

}  // namespace ss::ops
