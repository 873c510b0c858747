#pragma once
// Private to dist/control: what WorkerPool (pool.cpp) talks to. The pool's
// calls, waits, timeouts and error messages are written once, against
// `Workers`: the controller's ends of its workers, whatever carries them.
// Two kinds: the shared-memory queues to children on this host
// (pool_shm.cpp), and authenticated TCP connections to workers on any host
// (pool_tcp.cpp; issue 26). Both start local processes through `Children`
// (pool_children.cpp): the workers themselves, or their launchers (ssh).

#include <poll.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dist/control/control.h"
#include "dist/control/pool_impl.h"

namespace ss::dist::pool_detail {

/// A message on its way to one or more workers, encoded once for all.
struct Outgoing {
  const Message* m = nullptr;
  uint64_t id = 0;
  uint32_t flags = 0;
  std::vector<char> wire;  // the shared-memory queue's bytes
};

struct Incoming {
  Message m;
  uint32_t flags = 0;
};

/// A worker that stopped, as WorkerError says it.
struct Loss {
  /// "killed by signal 9 (SIGKILL)", "exited with code 3", "lost its
  /// connection", "unreachable: nothing heard from it for 10 s".
  std::string how;
  bool killed = false;  // reads "was killed by ..."
};

/// The controller's ends of its workers.
class Workers {
 public:
  virtual ~Workers();
  virtual int world() const = 0;

  /// Encodes [out] for [readers] receivers.
  virtual void prepare(Outgoing& out, uint32_t readers) = 0;
  /// Hands [out] to rank r; false when its channel is full for now (the
  /// pool looks at the workers, waits a little and tries again).
  virtual bool try_send(int r, const Outgoing& out) = 0;
  /// The next message from rank r, if one is there.
  virtual std::optional<Incoming> try_receive(int r) = 0;
  /// Sleeps until something may have happened (a message, a stopped
  /// worker, a signal), at most [ms].
  virtual void wait_event(int ms) = 0;

  /// Notices workers that stopped; the first newly stopped rank, or -1.
  virtual int reap() = 0;
  virtual bool any_alive() const = 0;
  /// Stops every live worker: [sig] first (0: none, they were told to shut
  /// down), up to [grace] for them to end, then SIGKILL.
  virtual void stop_all(int sig, std::chrono::milliseconds grace) = 0;
  /// Passes an interrupt on to rank r (Note [Interrupting the workers]).
  virtual void interrupt(int r) = 0;
  /// Releases everything: processes, names, sockets. Idempotent.
  virtual void cleanup() = 0;

  /// How a stopped rank stopped.
  virtual Loss loss(int r) const = 0;
  /// Its status line, whether it waits in a collective, and since when
  /// (CLOCK_MONOTONIC ms of this host).
  virtual std::string status(int r,
                             bool* waiting = nullptr,
                             int64_t* since_ms = nullptr) const = 0;
  /// Whether its process is stopped by a signal or a tracer.
  virtual bool stopped(int r) const = 0;
  virtual int pid(int r) const = 0;
  /// Its host, for messages: empty when it runs here as our child.
  virtual std::string host(int r) const = 0;
  /// The last of its output, after waiting up to [wait] for its end.
  virtual std::string output_tail(int r, std::chrono::milliseconds wait) = 0;
  /// The rendezvous store's address, for `--store`.
  virtual const std::string& store() const = 0;
};

std::unique_ptr<Workers> start_shm_workers(const LaunchOptions& opts,
                                           const std::string& job,
                                           int registry_slot);
std::unique_ptr<Workers> start_tcp_workers(const LaunchOptions& opts,
                                           const std::string& job,
                                           int registry_slot);

/// Local processes the pool starts: the workers, or their launchers. Each
/// dies with the thread that started it (PR_SET_PDEATHSIG) and is in the
/// pool's process group, which the signal handlers kill; its stdout and
/// stderr are forwarded (OutputForwarder).
class Children {
 public:
  Children(int count, int registry_slot, bool forward_output);
  ~Children();  // kills and reaps what is left
  Children(const Children&) = delete;
  Children& operator=(const Children&) = delete;

  /// Forks and execs [argv] as child [i] with [envp], stdin [stdin_fd]
  /// (-1: /dev/null) and, when [fd3] >= 0, that descriptor as fd 3.
  /// Throws std::runtime_error.
  void spawn(int i,
             const std::vector<std::string>& argv,
             const std::vector<char*>& envp,
             int stdin_fd,
             int fd3);
  /// Starts forwarding the children's output (after the last spawn).
  void forward();

  /// Reaps what stopped; the first newly stopped child, or -1.
  int reap();
  bool spawned(int i) const { return procs_[i].pid > 0; }
  bool alive(int i) const { return procs_[i].alive; }
  bool any_alive() const;
  int pid(int i) const { return procs_[i].pid; }
  int wait_status(int i) const { return procs_[i].wstatus; }
  /// Adds a pidfd per live child; false when some child has none (then
  /// deaths are seen by polling waitpid).
  bool add_pidfds(std::vector<pollfd>& pf) const;
  /// Signals child i (sigqueue: Note [Workers clean up after a dead
  /// controller] in worker_shm_link.cpp tells it from PDEATHSIG).
  void signal(int i, int sig);
  /// [sig] to every live child (0: none), [grace], SIGKILL, reaped.
  void stop(int sig, std::chrono::milliseconds grace);
  std::string tail(int i, std::chrono::milliseconds wait);
  int count() const { return static_cast<int>(procs_.size()); }

 private:
  struct Proc {
    pid_t pid = 0;
    int pidfd = -1;
    bool alive = false;
    int wstatus = 0;
  };
  std::vector<Proc> procs_;
  std::vector<int> out_fds_;
  int registry_slot_;
  bool forward_output_;
  pid_t pgid_ = 0;
  std::unique_ptr<OutputForwarder> fwd_;
};

/// The workers' environment: [over] ("NAME=VALUE") first, then ours but
/// for the names [over] gives. Keep the strings alive while the pointers
/// are used.
std::vector<std::string> worker_environment(
    const std::vector<std::string>& over);
std::vector<char*> pointers(std::vector<std::string>& strings);

}  // namespace ss::dist::pool_detail
