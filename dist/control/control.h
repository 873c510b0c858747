#pragma once
// The control channel of the several-devices runtime (devices.md: "the
// controller–worker control channel is Boost.Interprocess"; items 11-12).
//
// The controller (`WorkerPool`) starts one `ss worker` process per device and
// talks to each through a pair of Boost.Interprocess message queues (one per
// direction). A message is {kind, id, payload}; the payload bytes are opaque
// here (the evaluator serialises values into them). Payloads up to
// kInlineMax bytes travel inside the queue message; larger ones through a
// shared-memory block that the sender owns and reuses once every reader has
// copied it out (dist/control/README.md has the protocol).
//
// Failures (devices.md item 12): while a call waits, the pool watches every
// worker (pidfd + waitpid); a worker that exits or is killed makes the call
// throw WorkerError at once, after the pool has stopped and reaped the other
// workers and removed every queue and segment of the job from /dev/shm. A
// call that does not finish within the collective timeout throws
// CallTimeout, in the seed's format, listing where each worker was.
// Workers die with the controller (PR_SET_PDEATHSIG), removing what it
// left in /dev/shm (Note [Workers clean up after a dead controller] in
// worker.cpp), and SIGINT/SIGTERM/SIGHUP in a controller whose
// disposition was the default kill the workers and remove the job's names
// before the controller dies.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "dist/control/hosts.h"

namespace ss::dist {

struct Message {
  uint32_t kind = 0;
  uint64_t id = 0;  // set by the pool on requests; replies carry the request's
  std::string payload;
};

/// Kinds at or above this are the channel's own (hello, shutdown, error).
constexpr uint32_t kReservedKinds = 0xFFFF0000u;

/// A worker stopped (exited, was killed, or didn't come up), or the
/// collective timeout ran out (CallTimeout). what() is a full sentence.
struct WorkerError : std::runtime_error {
  int rank = -1;
  int pid = 0;
  std::string how;  // "killed by signal 9 (SIGKILL)", "exited with code 3"
  std::string last_status;  // the worker's last worker_set_status ("idle",
                            // "running `f` at a.ss:3:4")
  std::string stderr_tail;  // the last lines the worker wrote to stderr/stdout
  WorkerError(const std::string& what,
              int rank,
              int pid,
              std::string how,
              std::string last_status,
              std::string stderr_tail = {})
      : std::runtime_error(what),
        rank(rank),
        pid(pid),
        how(std::move(how)),
        last_status(std::move(last_status)),
        stderr_tail(std::move(stderr_tail)) {}
};

/// Where a worker was when a call timed out.
struct WorkerState {
  int rank = 0;
  int pid = 0;
  bool answered = false;  // its reply had arrived
  bool waiting =
      false;  // its status was set with waiting=true (in a collective)
  std::string status;
};

/// The collective timeout ran out. rank/pid name the first worker that
/// didn't finish and wasn't waiting for the others; `workers` has them all.
/// what() is the seed's message:
///   a worker failed while running `train_step` (train.ss:32:4), and worker 1
///   didn't finish:
///     worker 0: was waiting for the other workers at train.ss:30:12
///     worker 1: didn't answer; it was idle
///     worker 2: was waiting for the other workers at train.ss:30:12
struct CallTimeout : WorkerError {
  std::vector<WorkerState> workers;
  double timeout_s = 0;
  CallTimeout(const std::string& what,
              int rank,
              int pid,
              std::string last_status,
              std::vector<WorkerState> workers,
              double timeout_s)
      : WorkerError(what,
                    rank,
                    pid,
                    "didn't finish within the collective timeout",
                    std::move(last_status)),
        workers(std::move(workers)),
        timeout_s(timeout_s) {}
};

/// The worker's handler threw; the pool is still usable. what() is the
/// worker's exception text.
struct RemoteError : std::runtime_error {
  int rank = -1;
  RemoteError(const std::string& what, int rank)
      : std::runtime_error(what), rank(rank) {}
};

/// The `interrupted` hook of LaunchOptions said so while a call waited; the
/// workers were stopped.
struct Interrupted : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// SHAPESCRIPT_COLLECTIVE_TIMEOUT in seconds (a positive number), else 600.
double default_collective_timeout_s();

/// Kills this process's workers and removes their shared memory when it
/// ends (atexit) or dies of SIGINT, SIGTERM or SIGHUP: handlers of the
/// whole process, installed by `ss`'s main, which owns it, when its first
/// pool starts. A host language's process (the Python module) installs
/// none (issue 27); its workers still end with it (PR_SET_PDEATHSIG) and
/// its sessions stop theirs when they close.
void clean_up_workers_on_exit();

/// Workers on other hosts (issue 26; Note [The controller's side of
/// several hosts] in pool_tcp.cpp): each talks to the controller over one
/// authenticated TCP connection instead of the shared-memory queues.
struct RemoteOptions {
  /// Where the ranks go (`--hosts`, `--hostfile`), each rank started by
  /// [launch]. Empty: manual mode (`--listen`), where workers started by
  /// hand or by a scheduler (`ss worker --connect`) take the ranks in the
  /// order they connect.
  std::vector<Host> hosts;
  /// `--launch`: how a worker is started on a host ({host}, {cmd}).
  std::string launch = kDefaultLaunch;
  /// `--listen ADDR:PORT`: where the controller listens, and the address
  /// the launched workers connect to. Empty: port 0 on 127.0.0.1 when
  /// every host is this machine, else on the address this machine routes
  /// to the first host from.
  std::string listen;
  /// `--token-file`: the job's key (created, mode 0600, when the file does
  /// not exist). Empty: a fresh key, handed to launched workers on stdin.
  std::string token_file;
  /// A rank heard from neither by a heartbeat nor by a message for this
  /// long is lost (`--heartbeat-timeout`).
  std::chrono::milliseconds heartbeat_timeout{10000};
  /// The `ss` to run on the hosts ({cmd}'s first word); empty: this one's
  /// path (the same build is installed at the same path everywhere).
  std::string remote_binary;
};

struct LaunchOptions {
  int world = 1;
  /// Set: the workers are remote (RemoteOptions), not our children over
  /// /dev/shm.
  std::optional<RemoteOptions> remote;
  /// The `ss` binary to run as `ss worker ...`; empty: /proc/self/exe.
  std::string binary;
  /// The worker's command up to its `worker` word, in place of [binary]
  /// (a host language's: `python3 -m shapescript._worker`); local
  /// workers only.
  std::vector<std::string> command;
  /// Appended to every worker's command line (program path, -D, --devices).
  std::vector<std::string> extra_args;
  /// "NAME=VALUE" set in every worker's environment (over this process's).
  std::vector<std::string> env;
  /// The rendezvous directory passed as --store; empty: a private temp dir
  /// made by start() and removed by stop().
  std::string store_dir;
  std::chrono::milliseconds start_timeout{10000};
  /// How long a call waits for every reply.
  std::chrono::duration<double> call_timeout{default_collective_timeout_s()};
  /// How long a worker may wait for the others in one collective (its
  /// status set with waiting=true) before the call fails with a
  /// CallTimeout saying where each worker was (devices.md item 12).
  std::chrono::duration<double> collective_timeout{
      default_collective_timeout_s()};
  /// After a failure or on stop(): how long workers get after SIGTERM (or
  /// the shutdown message) before SIGKILL.
  std::chrono::milliseconds grace{1000};
  /// Copy the workers' stdout/stderr to the controller's stderr, each line
  /// prefixed "[worker R] ". Off: kept only for WorkerError::stderr_tail.
  bool forward_output = true;
  /// Polled (at least every 100 ms, and after any signal) while a call
  /// waits; true stops the workers and throws Interrupted. The repl passes
  /// its SIGINT flag here.
  std::function<bool()> interrupted;
  /// On `interrupted`, send every worker SIGINT once and wait up to
  /// interrupt_grace for the call's replies before stopping them (the
  /// repl's workers stop their call and live on: Note [Interrupting the
  /// workers] in pool.cpp).
  bool interrupt_workers = false;
  std::chrono::milliseconds interrupt_grace{3000};
};

class WorkerPool {
 public:
  /// Starts `world` workers and waits for each one's hello (start_timeout);
  /// throws WorkerError naming the worker (with its stderr tail) if one
  /// exits or doesn't answer in time, having stopped the others.
  static std::unique_ptr<WorkerPool> start(const LaunchOptions& opts);
  ~WorkerPool();  // stop()
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  /// Sends `m` (the same bytes) to every worker and waits for every reply,
  /// in rank order. `what` says what the workers were doing, as a CallTimeout
  /// reads it after "a worker failed while" ("running `train_step`
  /// (train.ss:32:4)", "starting the workers"). Throws WorkerError,
  /// CallTimeout, RemoteError (after every reply arrived), Interrupted.
  std::vector<Message> call_all(const Message& m, std::string_view what = {});
  /// call_all in two halves, so that the controller can go on while the
  /// workers run (async dispatch): post_all sends `m` to every worker and
  /// returns its id at once; collect waits for that call's replies, as
  /// call_all does. Calls are collected in the order they were posted
  /// (each worker answers its queue in order); a call that is posted and
  /// never collected leaves its replies for the next collect to drop.
  uint64_t post_all(const Message& m, std::string_view what = {});
  std::vector<Message> collect(uint64_t id);
  /// One message per worker (ms.size() == world).
  std::vector<Message> call_each(const std::vector<Message>& ms,
                                 std::string_view what = {});
  Message call(int rank, const Message& m, std::string_view what = {});
  /// Sends without waiting; the workers don't reply. An exception in the
  /// handler is reported as the RemoteError of that worker's next call.
  void send_all(const Message& m);
  /// Throws WorkerError if a worker has stopped since the last call.
  void check_alive();

  /// Sends shutdown, waits up to `grace`, then kills and reaps; removes every
  /// queue and segment. Idempotent; never throws.
  void stop();

  int world() const;
  /// Request messages sent to the workers so far (each call_all counts
  /// one per worker; shutdown is not counted).
  uint64_t messages_sent() const;
  const std::string& job()
      const;  // the prefix of every /dev/shm name of this pool
  std::vector<int> pids() const;  // the workers' pids, by rank
  const std::string& store_dir() const;
  bool running() const;  // false after stop() or a failure
  /// A worker's current status, read from its shared-memory slot.
  std::string status(int rank) const;

  struct Impl;

 private:
  explicit WorkerPool(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// Every /dev/shm entry of this job (`job` as WorkerPool::job()).
std::vector<std::string> shm_entries(const std::string& job);

// ---- worker side ----

struct WorkerArgs {
  std::string job;
  int rank = 0;
  int world = 1;
  std::string store;
  int bell_fd = -1;
  /// A remote worker's address for Gloo (`--bind`); empty: 127.0.0.1.
  std::string bind;
  /// A remote worker's working directory (`--cwd`, the controller's).
  std::string cwd;
  std::vector<std::string> extra;  // everything after the known options
};

/// Parses `--job J --rank R --world N --store DIR [--bell-fd FD] [extra...]`.
/// Throws std::invalid_argument.
WorkerArgs parse_worker_args(const std::vector<std::string>& args);

struct Handler {
  /// [m] is the handler's to take from: the loop reads nothing of it
  /// afterwards but its id (a call's payload, a model of hundreds of MB,
  /// can go as soon as it is decoded).
  virtual Message handle(Message& m) = 0;
  virtual ~Handler();
};

/// The worker's loop: connects, says hello, then receive → set status →
/// handle → reply until shutdown (0) or the controller is gone (0). Returns
/// 2 if it can't connect.
int worker_main(const std::vector<std::string>& args, Handler& h);

/// `ss worker ARGS`: worker_main with the registered handler, or EchoHandler.
int worker_entry(const std::vector<std::string>& args);

/// What the worker is doing, for the controller's WorkerError/CallTimeout:
/// "running `train_step` at readme.ss:27:5"; "idle" between requests.
/// `waiting` marks a wait in a collective: its text then reads as "waiting
/// for the other workers at train.ss:30:12". No-op outside a worker.
void worker_set_status(std::string_view text, bool waiting = false);

using HandlerFactory =
    std::function<std::unique_ptr<Handler>(const WorkerArgs&)>;
/// The evaluator registers its handler here (before worker_entry runs).
void set_worker_handler_factory(HandlerFactory f);

/// The test handler's kinds. A payload "R=V;R=V;*=V" gives each rank its
/// value V (a rank without one, and no '*', does nothing and replies "").
enum EchoKind : uint32_t {
  kEcho = 1,    // reply with the payload
  kSleep = 2,   // V ms, status "sleeping V ms"
  kExit = 3,    // _exit(V)
  kCrash = 4,   // raise SIGSEGV (default action)
  kWhoAmI = 5,  // reply "rank world pid"
  kBig = 6,     // reply V bytes, byte i = (i * 131 + rank) & 0xff
  kThrow = 7,   // throw std::runtime_error(payload)
  kStall = 8,   // V ms with status "waiting for the other workers at
                // stall.ss:1:1" (waiting)
  kEnv = 9,     // reply the environment variable named by the payload
};
std::unique_ptr<Handler> make_echo_handler(const WorkerArgs& args);

}  // namespace ss::dist
