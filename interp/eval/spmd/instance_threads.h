#pragma once
// The threads an spmd call's instances run on, for a call (spmd_call.cpp) and
// for remat's recompute in the backward pass (remat_instances.cpp) alike.

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "interp/eval/spmd/sim_mesh.h"

namespace ss::eval::spmd {

/// Runs [body](n) for every instance n of [mesh], each on a thread of its
/// own with a deep stack (Note [A deep stack] in interp/cli/main.cpp: the
/// body may recurse as deeply as a command), and waits for them all. An
/// instance whose thread cannot start gets [failed](n), and the mesh is
/// told it finished.
void run_instance_threads(SimMesh& mesh,
                          const std::function<void(int64_t)>& body,
                          const std::function<void(int64_t)>& failed);

}  // namespace ss::eval::spmd
