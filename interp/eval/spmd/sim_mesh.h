#pragma once
// The simulated mode's mesh (spmd.md, Mesh: `devices cpu`): every instance
// of an spmd call runs on a thread of this process, and a collective is a
// rendezvous of its group's threads. The last instance to arrive combines
// the group's blocks with ref/'s reference collectives and records, on each
// result, the transpose as its VJP (Note [Mesh collectives]). Lockstep
// follows: every instance waits at each collective for its whole group.

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "interp/eval/spmd/mesh_shape.h"
#include "ops/registry/mesh_comm.h"

namespace ss::eval::spmd {

/// Raised in an instance waiting at a collective when another instance
/// failed or returned without it: the run reports the other's error.
struct Abandoned {
  std::string why;
};

class SimMesh : public MeshShape {
 public:
  explicit SimMesh(std::vector<check::MeshAxis> axes);

  /// Instance [me]'s result of [op] on [x] (MeshComm::collective).
  ops::Tensor collective(int64_t me,
                         const ops::MeshOp& op,
                         const ops::MeshOp& transpose,
                         const ops::Tensor& x);
  /// A meeting of every instance that is not a collective (remat's: Note
  /// [Remat in instances] in remat_instances.cpp): each hands [x], the last
  /// to arrive runs [combine] on them all, in instance order, under the
  /// mesh's lock, and each gets its entry of the result. It counts in the
  /// instances' order of collectives, as a collective does.
  using Combine =
      std::function<std::vector<ops::Tensor>(const std::vector<ops::Tensor>&)>;
  ops::Tensor meet(int64_t me, const ops::Tensor& x, const Combine& combine);
  /// meet() with several tensors from each instance and for each, [what]
  /// naming the meeting in messages ("value_and_grad").
  using CombineAll = std::function<std::vector<std::vector<ops::Tensor>>(
      const std::vector<std::vector<ops::Tensor>>&)>;
  std::vector<ops::Tensor> meet_all(int64_t me,
                                    std::vector<ops::Tensor> xs,
                                    const CombineAll& combine,
                                    const char* what);
  /// Instance [me] is done (returned or failed): instances waiting for it
  /// at a collective stop with Abandoned.
  void finished(int64_t me, bool failed);

 private:
  struct Meeting;
  void combine(Meeting& m);
  std::vector<ops::Tensor> rendezvous(int64_t me,
                                      std::vector<int64_t> members,
                                      const ops::MeshOp& op,
                                      const ops::MeshOp& transpose,
                                      std::vector<ops::Tensor> xs,
                                      const CombineAll* custom,
                                      const char* what);

  std::mutex mu_;
  std::condition_variable cv_;
  /// Keyed by (the group's first member, the members' collective ordinal).
  std::map<std::pair<int64_t, int64_t>, std::shared_ptr<Meeting>> meetings_;
  std::vector<int64_t> ordinal_;  // per instance: collectives called so far
  std::vector<bool> done_;
  bool failed_ = false;
};

/// Tests: told each block an instance hands a collective (`ss explain`'s
/// figures are these: Note [Mesh figures]), under the mesh's lock. Empty:
/// none. Set it while no spmd call runs.
using PayloadLog = std::function<void(
    int64_t instance, const ops::MeshOp& op, const ops::Tensor& block)>;
void set_payload_log(PayloadLog log);

/// One instance's view of the mesh, handed to its Interpreter.
class InstanceComm : public ops::MeshComm {
 public:
  InstanceComm(SimMesh& mesh, int64_t me) : mesh_(mesh), me_(me) {}
  int64_t axis_index(const std::string& axis) override;
  int64_t axis_size(const std::string& axis) override;
  ops::Tensor collective(const ops::MeshOp& op,
                         const ops::MeshOp& transpose,
                         const ops::Tensor& x) override {
    return mesh_.collective(me_, op, transpose, x);
  }
  /// Every instance meets here with its loss and leaves; the last to
  /// arrive runs one backward pass of the whole mesh's graph (Note [A
  /// gradient inside an instance] in ops/registry/mesh_comm.h).
  std::vector<ops::Tensor> instance_gradients(
      const ops::Tensor& loss,
      double seed,
      const std::vector<ops::Tensor>& leaves,
      const std::vector<std::vector<std::string>>& tied) override;

 private:
  SimMesh& mesh_;
  int64_t me_;
};

}  // namespace ss::eval::spmd
