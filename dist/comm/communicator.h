#pragma once
// The collective-communication interface of the several-devices runtime
// (devices.md; style.md items 10-11). One Communicator per rank; every call
// takes an Options with a mandatory timeout and a tag, and every failure is
// a CollectiveError (never std::terminate). Implementations: GlooComm
// (gloo_comm.h, TCP on loopback, one per process or per thread) and
// InprocComm (inproc_comm.h, thread ranks in one process).
//
// Semantics shared by every implementation:
//  - tensors are on the communicator's device() (the CPU but for NCCL's)
//    and of f32, f64, i32 or i64 (others: Other error);
//  - all_reduce reduces in place; every rank gets the result;
//  - all_gather: rank-major concatenation of equal parts along axis 0
//    (a 0-d input gives a 1-d output of size());
//  - all_gather_v: uneven parts along axis 0, rows[r] rows from rank r
//    (batch_split(n, size()) gives the 22/21/21 split);
//  - reduce_scatter: reduce (sum by default) the whole input, then each rank
//    keeps its equal block along axis 0 (axis 0 divisible by size());
//  - broadcast: in place from root; every rank passes a tensor of the same
//    shape and dtype;
//  - send/recv: point to point (ppermute); recv fills a preallocated tensor;
//    messages between one pair with one tag arrive in order;
//  - after any failure (timeout, a peer gone) a communicator is unusable:
//    every later call throws (Gloo: timeouts are fatal to a context). A
//    communicator that fails closes itself, so its peers fail fast too.
//
// Payload log: every call records {op, count, dtype, bytes}, where count is
// the number of values this rank hands to the collective and bytes is
// count × dtype size (devices.md item 10). For all_reduce, broadcast and
// reduce_scatter that is the whole input tensor; for all_gather and
// all_gather_v this rank's part; send counts what it sends, recv what it
// receives; barrier 0.

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "ops/core/batch_split.h"
#include "ops/core/tensor.h"

namespace ss::dist {

using ops::Tensor;

enum class ReduceOp { Sum, Max, Min, Prod };
const char* reduce_op_name(ReduceOp op);

enum class CollectiveOp {
  AllReduce,
  AllGather,
  AllGatherV,
  ReduceScatter,
  Broadcast,
  Send,
  Recv,
  Barrier,
  Connect,  // rendezvous and connecting the group
};
const char* collective_name(CollectiveOp op);  // "all-reduce", ...

/// The default collective timeout: $SHAPESCRIPT_COLLECTIVE_TIMEOUT seconds
/// (a positive number, fractions allowed), else 600 s. Read on every call.
std::chrono::milliseconds default_collective_timeout();
/// The one parser of $SHAPESCRIPT_COLLECTIVE_TIMEOUT: its seconds, or
/// nullopt when it is unset. A value that is not a number of seconds in
/// (0, ops::kMaxCollectiveTimeoutS] (366 days, ops/registry/device_rule.h)
/// sets [error] (`ss` refuses to start: exit 64) and gives nullopt.
std::optional<double> collective_timeout_from_env(std::string* error = nullptr);
/// What collective_timeout(seconds) sets: the default for every collective
/// started afterwards (over SHAPESCRIPT_COLLECTIVE_TIMEOUT and 600 s).
void set_default_collective_timeout(std::chrono::milliseconds t);
/// Forgets what a program's collective_timeout set, where one process runs
/// one program after another (a host language's runs, `ss conformance`,
/// the runtime fuzzer): a run's timeout is its own, and the next run
/// starts from SHAPESCRIPT_COLLECTIVE_TIMEOUT or 600 s (a fuzzed
/// collective_timeout(5e-324), 1 ms, failed every later run's start).
void reset_default_collective_timeout();

struct Options {
  std::chrono::milliseconds timeout = default_collective_timeout();
  /// Distinguishes concurrent collectives (Gloo setTag); point-to-point
  /// messages match on it. Only the low 24 bits are used.
  uint64_t tag = 0;
  /// The calling thread's lane: the collectives of one lane come from one
  /// thread of each rank, in the same order on every rank. Lane 0 is the
  /// evaluator's main thread, lane 1 its communication thread (gradient
  /// buckets). GlooComm gives each lane its own direct exchange
  /// (gloo_comm.cpp, Note [Direct exchange]).
  int lane = 0;

  static Options with_timeout(std::chrono::milliseconds t,
                              uint64_t tag = 0,
                              int lane = 0) {
    Options o;
    o.timeout = t;
    o.tag = tag;
    o.lane = lane;
    return o;
  }
};

class CollectiveError : public std::runtime_error {
 public:
  enum class Kind { Timeout, PeerGone, Other };
  CollectiveError(Kind kind, CollectiveOp op, int peer, const std::string& msg)
      : std::runtime_error(msg), kind_(kind), op_(op), peer_(peer) {}
  Kind kind() const { return kind_; }
  CollectiveOp op() const { return op_; }
  /// The peer rank involved, or -1 when unknown.
  int peer() const { return peer_; }

 private:
  Kind kind_;
  CollectiveOp op_;
  int peer_;
};
const char* error_kind_name(CollectiveError::Kind k);

struct CollectiveRecord {
  CollectiveOp op;
  int64_t count;  // values handed to the collective by this rank
  types::DType dtype;
  uint64_t bytes;  // count × dtype size
};

using ops::batch_split;  // ops/core/batch_split.h

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// Where the tensors it takes live: the CPU for Gloo and the in-process
  /// hub, its GPU for NCCL and a GPU rank's HostStagedComm (which take the
  /// CPU's too). An output it allocates is on its input's device.
  virtual ops::Device device() const { return {}; }

  virtual void all_reduce(Tensor& t, ReduceOp op, const Options& o) = 0;
  /// `out`: undefined (allocated [size*n0, ...]) or a tensor of that many
  /// elements and the same dtype (written in place).
  virtual void all_gather(const Tensor& in, Tensor& out, const Options& o) = 0;
  /// rows[r]: rank r's rows along axis 0 (in.shape[0] == rows[rank()]).
  virtual void all_gather_v(const Tensor& in,
                            Tensor& out,
                            const std::vector<int64_t>& rows,
                            const Options& o) = 0;
  virtual void reduce_scatter(const Tensor& in,
                              Tensor& out,
                              ReduceOp op,
                              const Options& o) = 0;
  virtual void broadcast(Tensor& t, int root, const Options& o) = 0;
  virtual void send(const Tensor& t, int dst, const Options& o) = 0;
  virtual void recv(Tensor& t, int src, const Options& o) = 0;
  /// Send `out` to dst and receive `in` from src at once (a ppermute step:
  /// a ring of plain send-then-recv can deadlock, since a Gloo send waits
  /// for its receiver). dst or src may be -1 to skip that half.
  virtual void send_recv(
      const Tensor& out, int dst, Tensor& in, int src, const Options& o) = 0;
  virtual void barrier(const Options& o) = 0;
  /// Leave the group (as if this rank died): peers waiting on it fail with
  /// PeerGone. Later calls on this communicator throw.
  virtual void close() = 0;

  // Collectives in a recorded step (Note [A recorded step's collectives]
  // in dist/comm/nccl/nccl_comm.cpp). Where every call has ended when it
  // returns (Gloo, the in-process hub, a host-staged GPU rank), neither
  // has anything to do.
  /// The device work queued after this waits for the collectives of every
  /// lane (inside a recording, a lane's but the main one's are queued
  /// without the device's next work waiting for them).
  virtual void join_lanes() {}
  /// Waits for the device work queued before it, which may hold this
  /// communicator's collectives (a replayed step), as a collective waits:
  /// within [o]'s timeout, a peer's failure ending it; either is a
  /// CollectiveError.
  virtual void await_device(const Options& o) { (void)o; }

  // Payload log (see the file comment).
  std::vector<CollectiveRecord> log() const;
  uint64_t bytes_sent(CollectiveOp op) const;
  void clear_log();

 protected:
  void record(CollectiveOp op, int64_t count, types::DType dtype);

  // What every transport checks of a collective's arguments before it moves
  // a byte, and the payload log's entry: one copy, with one set of
  // messages, for Gloo, the in-process hub and a transport to come (Note
  // [One set of collective checks] in collective_checks.cpp). Each begins
  // with check_usable.
  void begin_all_reduce(const Tensor& t);
  /// Also prepares [out] (allocated when undefined).
  void begin_all_gather(const Tensor& in, Tensor& out);
  void begin_all_gather_v(const Tensor& in,
                          Tensor& out,
                          const std::vector<int64_t>& rows);
  void begin_reduce_scatter(const Tensor& in, Tensor& out);
  void begin_broadcast(const Tensor& t, int root);
  void begin_barrier();
  /// A send's or a recv's tensor and peer. Its log entry is the
  /// transport's to make: a recv counts what arrived.
  void check_point_to_point(const Tensor& t, int peer, CollectiveOp op);
  /// Throws unless [peer] is a rank of the group.
  void check_peer(int peer, CollectiveOp op);
  /// Throws when this communicator failed or was closed: the transport's
  /// own state says so.
  virtual void check_usable(CollectiveOp op) = 0;

 private:
  mutable std::mutex log_mu_;
  std::vector<CollectiveRecord> log_;
};

namespace detail {
// Shared argument checks and helpers (communicator.cpp).
[[noreturn]] void fail(CollectiveError::Kind k,
                       CollectiveOp op,
                       int rank,
                       int peer,
                       const std::string& what);
/// [on]: the device the communicator takes tensors on (Communicator::device),
/// besides the CPU.
void check_tensor(const Tensor& t,
                  CollectiveOp op,
                  int rank,
                  const char* arg,
                  ops::Device on = {});
/// Output shape of all_gather: [size*n0, rest...] or [size] for 0-d.
ops::Shape gather_shape(const ops::Shape& in, int64_t total_rows);
/// Prepare `out` (allocate when undefined, else check numel and dtype).
void prepare_out(Tensor& out,
                 const ops::Shape& shape,
                 types::DType dtype,
                 CollectiveOp op,
                 int rank,
                 ops::Device on = {});
/// Elementwise dst = op(dst, src) for n values of dtype.
void reduce_into(
    void* dst, const void* src, int64_t n, types::DType dtype, ReduceOp op);
/// Row size (elements per index of axis 0; 1 for 0-d).
int64_t row_elems(const Tensor& t);
/// bf16 and f16 reduce through f32, rounded once (Note [Half-precision
/// reductions] in communicator.cpp): a half buffer as f32, and back.
bool is_half(types::DType dtype);
std::vector<float> widen_half(const void* p, int64_t n, types::DType dtype);
void narrow_half(const float* src, void* dst, int64_t n, types::DType dtype);
/// out = op over [parts] (n values each, in this order); halves in f32.
/// [out] may be parts[0].
void reduce_parts(const std::vector<const void*>& parts,
                  void* out,
                  int64_t n,
                  types::DType dtype,
                  ReduceOp op);
}  // namespace detail

}  // namespace ss::dist
