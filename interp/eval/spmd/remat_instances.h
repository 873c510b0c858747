#pragma once
// remat(f) inside an instance of a simulated spmd call (Note [Remat in
// instances] in remat_instances.cpp): the instance's mesh, which also
// knows how every instance recomputes f in the backward pass.

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <ostream>
#include <vector>

#include "interp/eval/remat.h"
#include "interp/eval/spmd/instance_output.h"
#include "interp/eval/spmd/sim_mesh.h"

namespace ss::eval::spmd {

struct Recompute;

/// What the instances of one spmd call share for remat: the program, where
/// the instances of a recompute print, and each remat call's arguments.
/// A fresh number for each spmd call's RematShared.
uint64_t next_remat_call();

struct RematShared {
  const uint64_t id = next_remat_call();
  const check::Program* prog = nullptr;
  const diag::SourceMap* sm = nullptr;
  std::ostream* out = nullptr;  // the caller's
  std::shared_ptr<std::mutex> out_mu = std::make_shared<std::mutex>();
  std::vector<StackEntry> stack;  // the caller's
  /// Each instance's prints, where a backward pass inside the instances
  /// prints f's recompute (Note [Remat in instances]); none in a recompute.
  std::vector<EntryBuffer*> outs;
  struct Call {
    std::vector<Value> args;
    std::vector<ops::Tensor> inputs;  // the args' tensors needing gradients
  };
  std::mutex mu;
  /// Per instance, by its remat calls' ordinal.
  std::vector<std::vector<Call>> calls;
  /// By ordinal: what the call's packed node recomputes (remat_instances.cpp).
  std::map<size_t, std::shared_ptr<Recompute>> recomputes;
};

/// One instance's mesh: its collectives (InstanceComm) and its remat.
class RematComm final : public InstanceComm, public InstanceRemat {
 public:
  RematComm(SimMesh& mesh, int64_t me, RematShared& shared);
  ~RematComm() override;
  Value call_remat(Interpreter& in,
                   const check::FnInfo& fn,
                   std::vector<Value> args,
                   diag::Span site) override;

 private:
  SimMesh& mesh_;
  int64_t me_;
  RematShared& shared_;
  size_t next_ = 0;   // this instance's remat calls so far
  int64_t was_ = -1;  // the thread's instance before this one
  uint64_t was_call_ = 0;
};

}  // namespace ss::eval::spmd
