#pragma once
// Joining a job's Gloo meshes so that only its peers' connections reach
// Gloo (Note [A stranger's connection] in gloo_join.cpp).
// Private to dist/comm/.

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "dist/comm/gloo_comm.h"  // gloo::Context, gloo::transport::Device

namespace ss::dist::detail {

struct JoinedMeshes {
  std::shared_ptr<gloo::Context> main;
  /// The sync lanes' meshes (empty when [lanes] was 0), still async: the
  /// caller makes their pairs sync.
  std::vector<std::shared_ptr<gloo::Context>> lanes;
  /// The store prefix of the attempt that connected (for keys of its own).
  std::string prefix;
};

/// Every try to connect the meshes failed (the message says why).
struct JoinError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Connects [rank]'s full mesh and [lanes] more through the FileStore in
/// [store_dir], letting only connections that prove they are a peer's
/// reach Gloo, and tries again (all ranks together) when a connect fails.
/// Throws
/// std::runtime_error with a full sentence when it cannot; a message that
/// starts "Wait timeout" is a rank that never came.
JoinedMeshes join_meshes(int rank,
                         int size,
                         const std::string& store_dir,
                         const std::string& prefix,
                         int lanes,
                         std::shared_ptr<gloo::transport::Device>& device,
                         std::chrono::milliseconds timeout);

}  // namespace ss::dist::detail
