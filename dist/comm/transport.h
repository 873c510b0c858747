#pragma once
// What a rank's communicators are made of: the world's and each group an
// spmd fn's mesh joins on first use (interp/devices/lower/worker_mesh.cpp).
// A CPU rank talks Gloo; a GPU rank NCCL, one GPU per rank, or, where the
// ranks share one GPU, Gloo through the host (Note [Collectives through
// the host] in host_staged_comm.cpp).

#include <chrono>
#include <memory>
#include <string>

#include "dist/comm/communicator.h"

namespace ss::dist {

struct Transport {
  enum class Kind { Gloo, Nccl, GlooThroughHost };
  Kind kind = Kind::Gloo;
  /// A GPU rank's device (Nccl, GlooThroughHost).
  ops::Device device;

  /// The transport of a rank whose values live on [device]; [shared_gpu]:
  /// the ranks share one GPU (NCCL refuses them).
  static Transport of(ops::Device device, bool shared_gpu = false);

  /// Joins [rank] of [size] to the group [prefix] through the job's
  /// rendezvous store at [store] (dist/rendezvous/store.h). Throws
  /// CollectiveError (op Connect) when it cannot: a rank that does not
  /// come within [timeout] is a Timeout; a GPU rank of an ss built without
  /// the CUDA module, an Other error saying so.
  std::unique_ptr<Communicator> join(
      int rank,
      int size,
      const std::string& store,
      const std::string& prefix = "ss",
      std::chrono::milliseconds timeout = default_collective_timeout()) const;

  /// For a rank that will never join the group [prefix]: the members
  /// waiting to join it stop at once (Note [A peer that left before
  /// joining] in gloo_join.cpp), whatever the transport.
  static void leave_unjoined(const std::string& store,
                             const std::string& prefix);
};

}  // namespace ss::dist
