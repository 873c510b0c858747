#pragma once
// Gloo's TCP pairs proven before Gloo reads a byte of them (Note [A proof
// before Gloo reads] in gloo_pair_auth.cpp). Private to dist/comm/.

#include <sys/socket.h>

#include <chrono>
#include <string>

#include "dist/net/auth.h"

namespace ss::dist::detail {

/// While alive: this process's Gloo listeners hand Gloo only connections
/// that open with a proof made with [key] for [label] (any armed scope's,
/// for tests that run several ranks in one process), waiting up to
/// [timeout] for one; and the Gloo connects that this thread makes to an
/// address given to expect_pair_address send that proof first. One per
/// attempt of a join, on the joining thread.
class PairProofScope {
 public:
  PairProofScope(const net::JobKey& key,
                 std::string label,
                 std::chrono::milliseconds timeout);
  ~PairProofScope();
  PairProofScope(const PairProofScope&) = delete;
  PairProofScope& operator=(const PairProofScope&) = delete;

 private:
  size_t slot_;
};

/// A pair of this rank's as Gloo will connect it, under the current
/// scope: [mine] is this rank's listening address for it (from this rank's
/// key in the store), [peers] the peer's (from the peer's key). Gloo's rule
/// picks the side that connects (the higher address). When it is this
/// rank, its connect to [peers] carries the proof, and its own listener,
/// to which no peer will connect, is let go (Note [A proof before Gloo
/// reads]).
void expect_pair(const sockaddr_storage& mine, const sockaddr_storage& peers);

/// Connects to [to] with the current scope's proof, and hangs up (a peer
/// waiting for us in accept goes on: release_peers in gloo_join.cpp).
void knock(const sockaddr_storage& to);

/// Whether this process's `accept` and `connect` are the ones below (the
/// executable defines them, so libgloo's calls come here): a test asks.
bool pair_proofs_in_effect();

}  // namespace ss::dist::detail
