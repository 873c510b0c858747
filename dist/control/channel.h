#pragma once
// Private to dist/control: the wire format, shared-memory blocks for large
// payloads, the status board, and /dev/shm naming and cleanup.
//
// Every TU that includes Boost.Interprocess in this folder includes it
// through this header, so all of them see the same configuration: a lock on
// an interprocess mutex times out (throws) after 200 ms instead of hanging
// forever when its owner died holding it (Boost 1.74's message_queue locks
// its mutex without a timeout even in timed_receive; deps.md §6).
#define BOOST_INTERPROCESS_ENABLE_TIMEOUT_WHEN_LOCKING
#define BOOST_INTERPROCESS_TIMEOUT_WHEN_LOCKING_DURATION_MS 200
#include <atomic>
#include <boost/date_time/posix_time/posix_time_types.hpp>
#include <boost/interprocess/ipc/message_queue.hpp>
#include <boost/interprocess/mapped_region.hpp>
#include <boost/interprocess/shared_memory_object.hpp>
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <vector>

#include "dist/control/control.h"

namespace ss::dist::detail {

namespace bip = boost::interprocess;

// Channel kinds (>= kReservedKinds).
constexpr uint32_t kHello =
    kReservedKinds + 1;  // worker → controller, payload: pid
constexpr uint32_t kShutdown = kReservedKinds + 2;  // controller → worker
constexpr uint32_t kErrorReply = kReservedKinds + 3;
// Over TCP only (Note [A remote worker's connection] in
// worker_tcp_link.cpp): the controller's reply to a remote worker's hello,
// its arguments ('\0'-separated), and the worker's heartbeat, "WAITING
// WAITED_MS STATUS".
constexpr uint32_t kAssign = kReservedKinds + 4;
constexpr uint32_t kStatusBeat = kReservedKinds + 5;
// Controller → remote worker: what SIGINT is to a local one (Note
// [Interrupting the workers] in pool.cpp).
constexpr uint32_t kInterrupt = kReservedKinds + 6;
// A remote worker's supervisor → controller, after the worker ended
// (Note [A remote worker's supervisor] in worker_tcp_link.cpp): "K HOW",
// K 1 when it was killed by a signal, HOW as describe_wait_status says it.
constexpr uint32_t kWorkerExit = kReservedKinds + 7;

// Wire flags.
constexpr uint32_t kFlagShm =
    1;  // payload in a block; the name follows the header
constexpr uint32_t kFlagNoReply = 2;  // request: don't reply
constexpr uint32_t kFlagError =
    4;  // reply: the handler threw; payload is its what()

constexpr size_t kInlineMax =
    32 * 1024;  // payloads up to this go inside the queue message
constexpr size_t kQueueDepth = 16;

struct WireHeader {
  uint32_t kind;
  uint32_t flags;
  uint64_t id;
  uint64_t size;  // payload bytes
};
constexpr size_t kWireMax = sizeof(WireHeader) + kInlineMax;

/// "ssdist.<controller pid>.<8 hex>": every name of a job starts with it.
std::string make_job_name();
/// The controller pid a job name carries (0 if it doesn't parse).
int job_controller_pid(const std::string& job);
std::string queue_name(const std::string& job, bool to_worker, int rank);
std::string status_name(const std::string& job);

/// Removes every /dev/shm entry of `job`.
void remove_job_objects(const std::string& job);

/// Note [A job's life is a lock]: the controller holds an exclusive flock
/// on /dev/shm/<job>.alive for as long as it runs; the kernel drops it when
/// the process ends, however it ends. Returns the lock's descriptor (close
/// it to release), or -1 when it cannot be made.
int hold_job_lock(const std::string& job);
/// Removes the lock's file and releases it (the job's end).
void release_job_lock(const std::string& job, int fd);
/// The job's controller is running: its lock is held, or (a job of a build
/// before the lock, or none made) its pid answers.
bool job_alive(const std::string& job);
/// The job a name of its objects belongs to ("ssdist.<pid>.<hex>" of
/// "ssdist.<pid>.<hex>.c2w.0" or of a rendezvous dir's name), or "".
std::string job_of(const std::string& name);

/// Removes the entries of jobs whose controller no longer exists (left by a
/// controller that was SIGKILLed or crashed).
void sweep_stale_jobs();

/// Large payloads: blocks owned by the sender, reused once every reader has
/// copied the bytes out (the header's reader count is back to 0).
struct BlockHeader {
  std::atomic<uint32_t> readers;
  uint32_t pad;
  uint64_t capacity;
};
constexpr size_t kBlockData = 64;  // payload offset in a block

class BlockSender {
 public:
  explicit BlockSender(std::string prefix) : prefix_(std::move(prefix)) {}
  ~BlockSender();
  /// Copies `bytes` into a free block for `readers` readers; returns its name.
  std::string put(const std::string& bytes, uint32_t readers);

 private:
  struct Block {
    std::string name;
    bip::mapped_region region;
    BlockHeader* hdr() {
      return static_cast<BlockHeader*>(region.get_address());
    }
  };
  std::string prefix_;
  std::vector<std::unique_ptr<Block>> blocks_;
  uint64_t next_ = 0;
};

class BlockReceiver {
 public:
  /// Copies the payload out of block `name` and releases it.
  std::string take(const std::string& name, uint64_t size);

 private:
  struct Mapping {
    std::string name;
    bip::mapped_region region;
  };
  std::list<Mapping> cache_;  // most recent first
};

/// Encodes `m` into `buf` (kWireMax bytes); returns the byte count.
size_t encode(const Message& m,
              uint64_t id,
              uint32_t flags,
              BlockSender& blocks,
              uint32_t readers,
              char* buf);
/// Decodes a queue message; `flags` receives its flags.
Message decode(const char* buf,
               size_t n,
               BlockReceiver& blocks,
               uint32_t* flags);

/// One slot per worker: a seqlock-protected status line.
struct StatusSlot {
  std::atomic<uint32_t> seq;
  std::atomic<uint32_t> waiting;
  /// When the worker started waiting (CLOCK_MONOTONIC ms, the same clock
  /// in every process): the collective timeout counts from here.
  std::atomic<int64_t> since_ms;
  uint32_t len;
  char text[500];
};

/// CLOCK_MONOTONIC in milliseconds.
int64_t monotonic_ms();

class StatusBoard {
 public:
  static std::unique_ptr<StatusBoard> create(const std::string& job, int world);
  static std::unique_ptr<StatusBoard> open(const std::string& job, int world);
  void set(int rank, std::string_view text, bool waiting);
  std::string get(int rank,
                  bool* waiting = nullptr,
                  int64_t* since_ms = nullptr) const;

 private:
  StatusSlot* slot(int rank) const;
  bip::mapped_region region_;
  int world_ = 0;
};

/// Queue operations that never hang on a mutex whose owner died: a lock
/// that times out reports LockTimeout, and the caller checks the peer.
enum class QResult { Ok, Again, LockTimeout };
QResult q_try_send(bip::message_queue& q, const void* buf, size_t n);
QResult q_try_receive(bip::message_queue& q, void* buf, size_t cap, size_t* n);
QResult q_timed_receive(
    bip::message_queue& q, void* buf, size_t cap, size_t* n, int ms);
QResult q_timed_send(bip::message_queue& q, const void* buf, size_t n, int ms);

}  // namespace ss::dist::detail
