#pragma once
// GlooComm's direct exchange through shared memory, for a group whose ranks
// are processes (or threads) of one host (Note [Direct exchange in shared
// memory] in shm_exchange.cpp). Private to dist/comm/.

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "dist/comm/communicator.h"

namespace ss::dist::detail {

/// An exchange that failed: a peer gone or the timeout, and which peer.
struct ShmFailure : std::runtime_error {
  ShmFailure(CollectiveError::Kind k, int who, const std::string& what)
      : std::runtime_error(what), kind(k), peer(who) {}
  CollectiveError::Kind kind;
  int peer;
};

class ShmExchange {
 public:
  /// Whether the group at [store] may try: its store is a directory of
  /// this host (a `cpu[...]` job's), and SHAPESCRIPT_DIRECT_EXCHANGE is not
  /// `tcp` (the benches' switch back to the sockets).
  static bool wanted(const std::string& store);
  /// Every rank of the group calls it once, after its meshes are joined:
  /// rank 0 makes the segment, the others map it and prove they see the
  /// same memory. The exchange, or nullptr on every rank when any rank
  /// cannot map it (another /dev/shm, no room): they keep the sockets.
  static std::unique_ptr<ShmExchange> join(int rank,
                                           int size,
                                           const std::string& store,
                                           const std::string& prefix,
                                           int lanes,
                                           std::chrono::milliseconds timeout);
  ~ShmExchange();
  ShmExchange(const ShmExchange&) = delete;
  ShmExchange& operator=(const ShmExchange&) = delete;

  /// GlooComm::direct_exchange's contract: [bytes] from send[r] to each
  /// peer r, into recv[r] from it, on [lane] (one thread of each rank, in
  /// the same order on every rank). Throws ShmFailure.
  void exchange(const std::vector<const void*>& send,
                const std::vector<void*>& recv,
                size_t bytes,
                int lane,
                std::chrono::milliseconds timeout);
  /// Leaves the group: peers waiting on this rank fail with PeerGone.
  void close();

 private:
  ShmExchange(int rank, int size, int lanes, int fd, void* base, size_t len);
  int rank_, size_, lanes_;
  std::atomic<int> fd_;  // holds this rank's lock; -1 once closed
  void* base_;
  size_t len_;
  std::vector<uint32_t> chunks_;  // chunks sent so far, by lane
};

}  // namespace ss::dist::detail
