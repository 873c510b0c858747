#pragma once
// Note [Spmd fns on workers]
// On cpu[N], N the mesh's instance count (E2005 refuses any other), each
// instance of an spmd fn runs on the worker of its number's rank (x major:
// instance (i, j) of `mesh x=4 y=2` on rank i·2 + j; spmd.md, Mesh), and
// its collectives go to this rank's WorkerMesh, the distributed mode's
// ops::MeshComm (Note [Mesh collectives]). A collective runs over the
// Gloo group of the instances that share every mesh axis it does not
// name: the whole world for all of them, else a group of its own (a Gloo
// context joined through the job's rendezvous directory the first time
// it is used; its members reach that collective together, in lockstep).
// psum, pmean, pmax and pmin are all-reduces; all_gather an all-gather;
// psum_scatter an all-reduce and this instance's piece; ppermute and
// all_to_all send/recv pairs. Each result records its transpose as its
// VJP, run over the same group in the backward pass, which every instance
// walks in the same order, so value_and_grad works through spmd fns.
//
// An spmd fn called from ordinary code enters the mesh one of two ways:
// from the controller (main, a controller fn), which cuts the whole
// arguments into each rank's blocks (eval::spmd::block_of), sends each worker
// its own, and joins the blocks that come back (eval::spmd::join); or from a
// worker fn, where every rank holds the whole arguments and the call runs
// in place (RankContext::call_spmd): each rank takes its block, and the
// result's blocks are gathered over the world and joined on every rank.
// There the cut and the join are differentiable across the ranks
// (sum_on_backward, gathered_blocks), so each rank's gradient of a whole
// argument is the whole gradient, as one device's.
//
// remat(f) in an instance (Note [Remat]) recomputes f in this worker's own
// backward pass: every worker walks its tape in the same order (by each
// node's creation), so the instances reach f's recompute, and its
// collectives, together, as they reach any other transpose. f runs again
// in a fresh eval::Interpreter on this mesh (the instance's own is gone when
// the backward pass runs in the worker fn that called the spmd fn); its prints
// go to the instance's that runs now (a value_and_grad inside the spmd fn),
// which the controller merges as the forward's.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "dist/comm/communicator.h"
#include "interp/eval/remat.h"
#include "interp/eval/spmd/instance.h"
#include "interp/eval/spmd/mesh_shape.h"
#include "ops/registry/mesh_comm.h"

namespace ss::devices::lower {

struct DeviceContext;

class WorkerMesh final : public ops::MeshComm, public eval::InstanceRemat {
 public:
  /// Rank [d.rank]'s instance of the mesh [shape] over [d]'s communicator
  /// (the world: one rank per instance); groups of fewer instances join
  /// through the rendezvous directory [store].
  WorkerMesh(eval::spmd::MeshShape shape, DeviceContext& d, std::string store);
  ~WorkerMesh() override;

  const eval::spmd::MeshShape& shape() const { return shape_; }
  /// This rank's instance number.
  int64_t me() const;
  DeviceContext& device() { return d_; }

  /// Runs [r] as this rank's instance (eval::spmd::run_instance), its prints
  /// where a remat's recompute during it prints too.
  void run(eval::spmd::InstanceRun& r);

  /// Leaves every group of its own (a call that failed here: the others
  /// waiting in one fail at once, as the world's close() makes them).
  void close();

  int64_t axis_index(const std::string& axis) override;
  int64_t axis_size(const std::string& axis) override;
  ops::Tensor collective(const ops::MeshOp& op,
                         const ops::MeshOp& transpose,
                         const ops::Tensor& x) override;
  /// This instance's pass from its seed, the transposes running with the
  /// other workers', then each leaf's gradient all-reduced over its tied
  /// axes' group (Note [A gradient inside an instance]).
  std::vector<ops::Tensor> instance_gradients(
      const ops::Tensor& loss,
      double seed,
      const std::vector<ops::Tensor>& leaves,
      const std::vector<std::vector<std::string>>& tied) override;
  eval::Value call_remat(eval::Interpreter& in,
                         const check::FnInfo& fn,
                         std::vector<eval::Value> args,
                         diag::Span site) override;

 private:
  struct Group {
    dist::Communicator* comm = nullptr;
    int pos = 0, size = 1;  // this instance's place in it, its members
    std::unique_ptr<dist::Communicator> own;
  };
  Group& group(const std::vector<std::string>& axes);
  bool is_world(const std::vector<int64_t>& members) const;
  static std::string group_name(const std::vector<int64_t>& members);
  /// [op]'s result for this instance, not recorded.
  ops::Tensor run(const ops::MeshOp& op, const ops::Tensor& x, Group& g);

  eval::spmd::MeshShape shape_;
  DeviceContext& d_;
  std::string store_;
  std::map<std::vector<int64_t>, Group> groups_;  // by members, in order
  std::streambuf* prints_ = nullptr;  // the running instance's (run())
};

/// [x] as it is; in the backward pass its cotangent is summed over every
/// rank (the transpose of handing one whole value to every instance).
ops::Tensor sum_on_backward(const ops::Tensor& x, WorkerMesh& mesh);

/// Every instance's [block] (of one shape), stacked along a new leading
/// axis in instance order. Its VJP keeps this instance's entry of the
/// cotangent: every rank joins the same whole result from the stack and
/// backpropagates the same cotangent, so no message is needed.
ops::Tensor gathered_blocks(const ops::Tensor& block, WorkerMesh& mesh);

}  // namespace ss::devices::lower
