#pragma once
// Gloo over TCP on loopback (deps.md §5). Each GlooComm owns its own TCP
// device and context, so thread ranks in one process work as well as one
// rank per process. Rendezvous goes through a FileStore in a fresh
// directory (make_job_dir(), dist/rendezvous/job_dir.h) under a
// PrefixStore. Only Gloo's new-style API is used (AllreduceOptions, ...):
// mixing in old-style algorithms slows later all-reduces on the same
// context ~300x, so reduce_scatter is an all-reduce plus a slice.
// Point-to-point uses unbound buffers on slots (0x20 << 56) | tag << 32 |
// seq, away from the collectives' slots.
//
// Up to kSyncRanks ranks also connect one mesh per lane (Options::lane)
// whose pairs are in Gloo's sync mode: that lane's all-reduces exchange
// buffers on it, the calling thread reading and writing the sockets
// itself (Note [Direct exchange]).
//
// Every Gloo failure (gloo::Exception, EnforceNotMet, any std::exception)
// becomes a CollectiveError; a communicator that fails closes its context
// at once (a Gloo context is dead after a timeout anyway), so its peers
// fail fast with PeerGone instead of waiting out their timeouts.

#include <array>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "dist/comm/communicator.h"
#include "dist/comm/shm_exchange.h"

namespace gloo {
class Context;
namespace transport {
class Device;
}
}  // namespace gloo

namespace ss::dist {

/// The address this process's Gloo pairs listen on: 127.0.0.1 (the
/// workers of one host), or a remote worker's own (its assignment's
/// `--bind`: the hostfile's addr=, or where its control connection comes
/// from; issue 26).
void set_gloo_host(const std::string& host);
std::string gloo_host();

class GlooComm final : public Communicator {
 public:
  /// Joins the group `size` ranks form through the rendezvous store at
  /// `store_dir` (a directory that exists and is fresh for the job, or
  /// the controller's "tcp:HOST:PORT": dist/rendezvous/store.h), under
  /// `prefix`. Throws CollectiveError (op Connect; Timeout when a rank does
  /// not show up within connect_timeout).
  GlooComm(
      int rank,
      int size,
      const std::string& store_dir,
      const std::string& prefix = "ss",
      std::chrono::milliseconds connect_timeout = default_collective_timeout());
  ~GlooComm() override;
  GlooComm(const GlooComm&) = delete;
  GlooComm& operator=(const GlooComm&) = delete;

  /// For a rank that will never join the group [prefix] in [store_dir]
  /// (its call failed first): the members waiting to join it stop at once
  /// with a CollectiveError (Note [A peer that left before joining] in
  /// gloo_join.cpp).
  static void leave_unjoined(const std::string& store_dir,
                             const std::string& prefix);

  /// The most ranks whose all-reduces exchange whole buffers directly.
  static constexpr int kSyncRanks = 3;
  /// Lanes 0..kLanes-1 have a direct exchange.
  static constexpr int kLanes = 2;

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void all_reduce(Tensor& t, ReduceOp op, const Options& o) override;
  void all_gather(const Tensor& in, Tensor& out, const Options& o) override;
  void all_gather_v(const Tensor& in,
                    Tensor& out,
                    const std::vector<int64_t>& rows,
                    const Options& o) override;
  void reduce_scatter(const Tensor& in,
                      Tensor& out,
                      ReduceOp op,
                      const Options& o) override;
  void broadcast(Tensor& t, int root, const Options& o) override;
  void send(const Tensor& t, int dst, const Options& o) override;
  void recv(Tensor& t, int src, const Options& o) override;
  void send_recv(const Tensor& out,
                 int dst,
                 Tensor& in,
                 int src,
                 const Options& o) override;
  void barrier(const Options& o) override;
  void close() override;

  /// All-reduces that took the direct exchange so far (tests).
  uint64_t direct_all_reduces() const { return direct_calls_; }
  /// Whether the lanes exchange through shared memory (tests).
  bool shared_memory() const { return shm_ != nullptr; }

 private:
  void check_usable(CollectiveOp op) override;
  /// Called inside a catch block: turns the active exception into a
  /// CollectiveError, closing the context first.
  [[noreturn]] void translate(CollectiveOp op, int peer);
  int peer_of_message(const std::string& msg) const;
  void raw_all_reduce(
      void* p, int64_t n, types::DType dt, ReduceOp op, const Options& o);
  /// Two ranks: each sends its whole buffer to the other and reduces the
  /// pair locally (see the note at its definition).
  template <class T>
  void pair_all_reduce(T* p, int64_t n, ReduceOp op, const Options& o);
  /// Every rank sends its whole buffer to every other over the sync mesh
  /// and reduces all of them in rank order (Note [Direct exchange]).
  template <class T>
  void direct_all_reduce(T* p, int64_t n, ReduceOp op, int lane);
  bool use_direct(const Options& o) const;
  /// [bytes] from send[r] to each peer r, into recv[r] from it, in chunks
  /// on [lane]'s sync mesh (Note [Direct exchange]).
  void direct_exchange(const std::vector<const void*>& send,
                       const std::vector<void*>& recv,
                       size_t bytes,
                       int lane);
  /// Block r of every rank's buffer to rank r, reduced in rank order (Note
  /// [Direct reduce-scatter]); [n]: the values of one block.
  template <class T>
  void direct_reduce_scatter(
      const T* in, T* out, int64_t n, ReduceOp op, int lane);
  bool try_direct_reduce_scatter(const Tensor& in,
                                 Tensor& out,
                                 ReduceOp op,
                                 const Options& o);
  template <class T>
  void typed_all_reduce(T* p, int64_t n, ReduceOp op, const Options& o);

  int rank_;
  int size_;
  std::shared_ptr<gloo::transport::Device> device_;
  std::shared_ptr<gloo::Context> ctx_;
  // Each lane's sync-mode mesh (2..kSyncRanks ranks) and next bound-buffer
  // slot, and the pairs' fixed timeout.
  std::array<std::shared_ptr<gloo::Context>, kLanes> sync_ctx_;
  std::array<int, kLanes> sync_slot_{};
  std::chrono::milliseconds sync_timeout_{0};
  std::atomic<uint64_t> direct_calls_{0};
  // The lanes' exchange through shared memory, when the group's ranks
  // share this host (Note [Direct exchange in shared memory]); null: the
  // sync meshes' sockets.
  std::unique_ptr<detail::ShmExchange> shm_;
  bool broken_ = false;
  std::string broken_why_;
  std::map<int, int> port_rank_;  // peers' listening ports, for messages
  std::map<std::pair<int, uint64_t>, uint32_t> send_seq_, recv_seq_;
  // pair_all_reduce's sequence per tag (its calls may come from several
  // threads, one per tag).
  std::mutex pair_mu_;
  std::map<uint64_t, uint32_t> pair_seq_;
};

}  // namespace ss::dist
