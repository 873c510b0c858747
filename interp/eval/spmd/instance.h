#pragma once
// One instance's run of an spmd fn called from ordinary code, the same in
// both modes: the simulated mode runs one on a thread per instance
// (spmd_call.cpp), a worker runs its own (interp/devices/worker/ and
// lower/rank_context.cpp). The instance gets its own Interpreter, so its
// control flow, host loops and autodiff tape are its own, with [comm] as
// its mesh (Note [Mesh collectives]) and its prints kept for the caller
// (Note [Prints of instances]).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "interp/eval/interpreter.h"
#include "interp/eval/spmd/instance_output.h"
#include "interp/eval/spmd/mesh_shape.h"
#include "ops/registry/mesh_comm.h"

namespace ss::eval::spmd {

struct InstanceRun {
  const check::Program* prog = nullptr;
  const diag::SourceMap* sm = nullptr;
  const check::FnInfo* fn = nullptr;
  std::vector<Value> args;  // this instance's blocks
  diag::Span site;
  std::vector<StackEntry> stack;  // the caller's
  bool grad = true;               // the caller's GradMode
  volatile int* interrupt = nullptr;

  EntryBuffer out;  // its prints, one entry per print
  Value result;
  std::unique_ptr<RuntimeError> error;  // the body's error
};

/// Runs [r]'s fn on its blocks as one instance whose collectives go to
/// [comm]; a RuntimeError is kept in r.error, anything else passes.
void run_instance(InstanceRun& r, ops::MeshComm& comm);

/// Note [Prints of instances]: [entries] (every instance's, in instance
/// order) merged by ordinal, each line prefixed with its mesh index.
std::string merged_prints(const MeshShape& mesh,
                          const std::vector<std::vector<std::string>>& entries);

/// The note an instance's error carries: "in the instance at x=1 of 4".
std::string instance_note(const MeshShape& mesh, int64_t n);

}  // namespace ss::eval::spmd
