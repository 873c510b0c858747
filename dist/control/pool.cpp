// WorkerPool: the controller side of the control channel (control.h).
// Spawning the workers and the call/wait logic; the signal-safe registry
// is in pool_registry.cpp, the output forwarder in pool_output.cpp.
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "dist/comm/communicator.h"
#include "dist/control/channel.h"
#include "dist/control/pool_impl.h"
#include "dist/rendezvous/job_dir.h"

namespace ss::dist {

using namespace detail;
using namespace pool_detail;
using Clock = std::chrono::steady_clock;

double default_collective_timeout_s() {
  return collective_timeout_from_env().value_or(600.0);
}

namespace {

// Note [Sweeping dead jobs]: a controller killed by SIGKILL (or by a
// signal whose handler cannot run) leaves its rendezvous directory,
// `<TMPDIR>/ssdist.<pid>.<hex>.XXXXXX`, behind, as it leaves its /dev/shm
// objects (sweep_stale_jobs). The next pool removes every such directory
// of ours whose controller pid is gone.
void sweep_stale_stores() {
  const std::string base = temp_root();
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator(base, ec);
       !ec && it != std::filesystem::directory_iterator();
       it.increment(ec)) {
    std::string name = it->path().filename().string();
    int pid = job_controller_pid(name);
    if (pid <= 0 || pid == ::getpid()) continue;
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) != 0 || !S_ISDIR(st.st_mode) ||
        st.st_uid != ::getuid())
      continue;
    if (::kill(pid, 0) == -1 && errno == ESRCH) {
      std::error_code rm;
      std::filesystem::remove_all(it->path(), rm);
    }
  }
}

}  // namespace

// ---- the pool ----

struct WorkerProc {
  int rank = 0;
  pid_t pid = 0;
  int pidfd = -1;
  int bell = -1;  // read end; the worker rings it after each message
  bool alive = true;
  int wstatus = 0;
  std::unique_ptr<bip::message_queue> to, from;
  BlockReceiver rx;
};

struct WorkerPool::Impl {
  LaunchOptions opts;
  std::string job;
  std::string store;
  bool own_store = false;
  std::vector<WorkerProc> w;
  std::unique_ptr<StatusBoard> board;
  std::unique_ptr<BlockSender> tx;
  std::unique_ptr<OutputForwarder> fwd;
  pid_t pgid = 0;
  uint64_t next_id = 1;
  // Calls posted and not yet collected (post_all/collect).
  struct Posted {
    Clock::time_point deadline;
    std::string what;
    uint32_t kind = 0;
  };
  std::map<uint64_t, Posted> posted;
  uint64_t sent = 0;  // request messages handed to the workers' queues
  bool running = false;
  bool cleaned = false;
  std::exception_ptr failure;
  // When the workers were sent SIGINT (Note [Interrupting the workers]).
  std::optional<Clock::time_point> interrupt_at;
  std::vector<char> buf = std::vector<char>(kWireMax);
  int reg = -1;

  ~Impl() { cleanup(); }

  // Reaps every worker that has stopped; returns the first newly dead rank.
  int reap() {
    int first = -1;
    for (auto& p : w) {
      if (!p.alive) continue;
      int st = 0;
      pid_t r = ::waitpid(p.pid, &st, WNOHANG);
      if (r == p.pid || (r < 0 && errno == ECHILD)) {
        p.alive = false;
        p.wstatus = r == p.pid ? st : 0;
        if (first < 0) first = p.rank;
      }
    }
    return first;
  }

  bool any_alive() const {
    for (auto& p : w)
      if (p.alive) return true;
    return false;
  }

  void drain_bells() {
    char c[256];
    for (auto& p : w)
      if (p.bell >= 0)
        while (::read(p.bell, c, sizeof c) > 0) {
        }
  }

  // Sleeps until a bell rings, a worker exits, a signal arrives, or `ms`.
  void wait_event(int ms) {
    std::vector<pollfd> pf;
    bool have_pidfds = true;
    for (auto& p : w) {
      if (!p.alive) continue;
      if (p.bell >= 0) pf.push_back({p.bell, POLLIN, 0});
      if (p.pidfd >= 0)
        pf.push_back({p.pidfd, POLLIN, 0});
      else
        have_pidfds = false;
    }
    // Without pidfds, deaths are seen by polling waitpid every 10 ms.
    int tick = have_pidfds ? 100 : 10;
    int n = ::poll(pf.data(), pf.size(), std::max(0, std::min(ms, tick)));
    if (n > 0) {
      for (auto& f : pf) {
        if (!(f.revents & (POLLHUP | POLLERR))) continue;
        for (auto& p : w)
          if (p.bell == f.fd && !(f.revents & POLLIN)) {
            // The worker closed its end (it's exiting): stop polling it.
            ::close(p.bell);
            p.bell = -1;
          }
      }
    }
  }

  // Kills and reaps every live worker: `first` (SIGTERM, or 0 for none),
  // `grace`, then SIGKILL.
  void stop_workers(int first, std::chrono::milliseconds grace) {
    // sigqueue, not kill: a worker's SIGTERM handler tells this stop from
    // its controller's death by the SI_QUEUE code (Note [Workers clean up
    // after a dead controller] in worker.cpp).
    if (first != 0)
      for (auto& p : w)
        if (p.alive) ::sigqueue(p.pid, first, sigval{});
    auto deadline = Clock::now() + grace;
    while (reap(), any_alive() && Clock::now() < deadline) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - Clock::now());
      wait_event(static_cast<int>(std::min<long>(left.count(), 5)));
    }
    reap();
    if (any_alive()) {
      // A worker not yet reaped keeps the group alive, so pgid is still ours.
      if (pgid > 0) ::killpg(pgid, SIGKILL);
      for (auto& p : w)
        if (p.alive) ::kill(p.pid, SIGKILL);
      for (auto& p : w) {
        if (!p.alive) continue;
        int st = 0;
        while (::waitpid(p.pid, &st, 0) < 0 && errno == EINTR) {
        }
        p.alive = false;
        p.wstatus = st;
      }
    }
  }

  void cleanup() {
    if (cleaned) return;
    cleaned = true;
    running = false;
    reap();
    if (any_alive()) stop_workers(SIGKILL, std::chrono::milliseconds(0));
    for (auto& p : w) {
      p.to.reset();
      p.from.reset();
      if (p.pidfd >= 0) ::close(p.pidfd);
      if (p.bell >= 0) ::close(p.bell);
      p.pidfd = p.bell = -1;
    }
    tx.reset();
    board.reset();
    fwd.reset();
    if (!job.empty()) {
      for (auto& p : w)
        for (bool to_worker : {true, false})
          bip::message_queue::remove(
              queue_name(job, to_worker, p.rank).c_str());
      bip::shared_memory_object::remove(status_name(job).c_str());
      remove_job_objects(job);  // the workers' blocks, and anything else
    }
    if (own_store && !store.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(store, ec);
    }
    registry_release(reg);
    reg = -1;
  }

  [[noreturn]] void fail(std::exception_ptr e) {
    failure = e;
    cleanup();
    std::rethrow_exception(e);
  }

  std::string status_of(int rank, bool* waiting = nullptr) const {
    return board ? board->get(rank, waiting) : std::string();
  }

  [[noreturn]] void fail_dead(int rank, bool starting) {
    WorkerProc& p = w[rank];
    std::string status = status_of(rank);
    std::string how = describe_wait_status(p.wstatus);
    stop_workers(SIGTERM, opts.grace);
    std::string tail =
        fwd ? fwd->tail(rank, std::chrono::milliseconds(200)) : std::string();
    std::string msg = "worker " + std::to_string(rank) + " (pid " +
                      std::to_string(p.pid) + ") " +
                      (WIFSIGNALED(p.wstatus) ? "was " : "") + how;
    if (starting) {
      msg += " while starting";
      std::string last = last_lines(tail, 10);
      if (!last.empty()) msg += "; its last output:\n" + last;
    } else if (!status.empty()) {
      msg += " while " + status;
    }
    fail(std::make_exception_ptr(
        WorkerError(msg, rank, p.pid, how, status, tail)));
  }

  [[noreturn]] void fail_start_timeout(const std::vector<int>& pending) {
    int rank = pending.front();
    WorkerProc& p = w[rank];
    std::string status = status_of(rank);
    stop_workers(SIGTERM, opts.grace);
    std::string tail =
        fwd ? fwd->tail(rank, std::chrono::milliseconds(200)) : std::string();
    double s = std::chrono::duration<double>(opts.start_timeout).count();
    char secs[32];
    std::snprintf(secs, sizeof secs, "%g", s);
    std::string msg = join_ranks(pending) + " didn't start within " + secs +
                      " s (worker " + std::to_string(rank) + " is pid " +
                      std::to_string(p.pid) + ")";
    std::string last = last_lines(tail, 10);
    if (!last.empty()) msg += "; its last output:\n" + last;
    fail(std::make_exception_ptr(
        WorkerError(msg, rank, p.pid, "didn't start in time", status, tail)));
  }

  // Whether a worker has waited for the others in one collective for
  // longer than the collective timeout. Any worker counts, not only those
  // still on the call being collected: with calls posted ahead, a worker
  // that answered it may already wait in the next call for one that
  // stopped after its last collective.
  bool collective_stuck() const {
    if (!board) return false;
    const int64_t limit_ms =
        static_cast<int64_t>(opts.collective_timeout.count() * 1000.0);
    const int64_t now = monotonic_ms();
    for (const WorkerProc& p : w) {
      const int r = p.rank;
      bool waiting = false;
      int64_t since = 0;
      board->get(r, &waiting, &since);
      if (waiting && now - since > limit_ms) return true;
    }
    return false;
  }

  [[noreturn]] void fail_timeout(const std::vector<bool>& answered,
                                 std::string_view what,
                                 uint32_t kind) {
    std::vector<WorkerState> states;
    std::vector<int> culprits, pending, stopped;
    for (auto& p : w) {
      WorkerState s;
      s.rank = p.rank;
      s.pid = p.pid;
      s.answered = answered[p.rank];
      s.status = status_of(p.rank, &s.waiting);
      if (!s.answered) {
        pending.push_back(p.rank);
        if (!s.waiting) culprits.push_back(p.rank);
        if (process_stopped(p.pid)) stopped.push_back(p.rank);
      }
      states.push_back(s);
    }
    // A worker stopped by a signal (SIGSTOP, a debugger) looks like one
    // waiting in a collective: it is the one that didn't get there.
    if (culprits.empty()) culprits = stopped.empty() ? pending : stopped;
    std::string doing = what.empty() ? "running a call (message kind " +
                                           std::to_string(kind) + ")"
                                     : std::string(what);
    std::string msg = "a worker failed while " + doing + ", and " +
                      join_ranks(culprits) + " didn't finish:";
    for (auto& s : states) {
      msg += "\n  worker " + std::to_string(s.rank) + ": ";
      if (s.answered && s.waiting)  // in a call posted after this one
        msg += "had finished it, and then was " + s.status;
      else if (s.answered)
        msg += "had finished";
      else if (s.waiting)
        msg += "was " + s.status;
      else
        msg += "didn't answer; it was " +
               (s.status.empty() ? std::string("idle") : s.status);
      if (!s.answered && process_stopped(s.pid))
        msg += " (its process is stopped)";
    }
    int rank = culprits.front();
    std::string status = states[rank].status;
    double t =
        std::min(opts.call_timeout.count(), opts.collective_timeout.count());
    stop_workers(SIGTERM, opts.grace);
    fail(std::make_exception_ptr(
        CallTimeout(msg, rank, w[rank].pid, status, states, t)));
  }

  [[noreturn]] void fail_interrupted() {
    stop_workers(SIGTERM, opts.grace);
    fail(std::make_exception_ptr(
        Interrupted("interrupted; the workers were stopped")));
  }

  void ensure_running() {
    if (failure) std::rethrow_exception(failure);
    if (!running) throw std::logic_error("the worker pool was stopped");
  }

  // Note [Interrupting the workers]: with LaunchOptions::interrupt_workers
  // (the repl's), the interrupt is passed on to every worker once, as
  // SIGINT, and the call waits up to interrupt_grace for their answers (a
  // worker stops its call at its next statement); a worker that cannot
  // (one waiting in a collective for one that stopped) makes the pool stop
  // them all, as without it.
  void check_events(bool starting) {
    int dead = reap();
    if (dead >= 0) fail_dead(dead, starting);
    if (!opts.interrupted || !opts.interrupted()) {
      interrupt_at.reset();
      return;
    }
    if (!opts.interrupt_workers || starting) fail_interrupted();
    if (!interrupt_at) {
      interrupt_at = Clock::now();
      for (const WorkerProc& p : w)
        if (p.alive) ::kill(p.pid, SIGINT);
    } else if (Clock::now() - *interrupt_at > opts.interrupt_grace) {
      fail_interrupted();
    }
  }

  void send_to(int rank, const char* data, size_t n) {
    WorkerProc& p = w[rank];
    while (true) {
      if (!p.alive) fail_dead(rank, false);
      QResult r = q_try_send(*p.to, data, n);
      if (r == QResult::Ok) {
        ++sent;
        return;
      }
      // Full (the worker is behind) or its lock timed out (did it die
      // holding it?): look at the workers, wait a little, retry.
      check_events(false);
      wait_event(1);
    }
  }

  // Waits for a reply to `id` (or a hello) from every rank in `pending`.
  void wait_replies(std::vector<int> pending,
                    uint64_t id,
                    bool hello,
                    Clock::time_point deadline,
                    std::string_view what,
                    uint32_t kind,
                    std::vector<Message>& out,
                    std::vector<uint32_t>& flags) {
    std::vector<bool> answered(w.size(), true);
    for (int r : pending) answered[r] = false;
    while (true) {
      drain_bells();
      check_events(hello);
      for (auto it = pending.begin(); it != pending.end();) {
        WorkerProc& p = w[*it];
        bool got = false;
        while (!got) {
          size_t n = 0;
          QResult q = q_try_receive(*p.from, buf.data(), buf.size(), &n);
          if (q != QResult::Ok)
            break;  // empty, or a lock timeout (checked above next time)
          uint32_t fl = 0;
          Message m = decode(buf.data(), n, p.rx, &fl);
          if (hello ? m.kind == kHello : m.id == id) {
            out[*it] = std::move(m);
            flags[*it] = fl;
            got = true;
          }  // else a stale message: dropped
        }
        if (got) {
          answered[*it] = true;
          it = pending.erase(it);
        } else {
          ++it;
        }
      }
      if (pending.empty()) return;
      auto now = Clock::now();
      if (now >= deadline) {
        if (hello) fail_start_timeout(pending);
        fail_timeout(answered, what, kind);
      }
      if (!hello && collective_stuck()) fail_timeout(answered, what, kind);
      auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now)
              .count();
      wait_event(static_cast<int>(std::min<long long>(left + 1, 1000)));
    }
  }

  Clock::time_point call_deadline() const {
    return Clock::now() +
           std::chrono::duration_cast<Clock::duration>(opts.call_timeout);
  }

  std::vector<Message> finish(std::vector<Message> out,
                              const std::vector<uint32_t>& flags,
                              const std::vector<int>& ranks) {
    for (int r : ranks)
      if (flags[r] & kFlagError) throw RemoteError(out[r].payload, r);
    return out;
  }
};

WorkerPool::WorkerPool(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
WorkerPool::~WorkerPool() {
  stop();
}

std::unique_ptr<WorkerPool> WorkerPool::start(const LaunchOptions& opts) {
  if (opts.world < 1)
    throw std::invalid_argument("WorkerPool: world must be at least 1");
  install_once();
  sweep_stale_jobs();
  sweep_stale_stores();
  auto impl = std::make_unique<Impl>();
  Impl& I = *impl;
  I.opts = opts;
  I.job = make_job_name();
  remove_job_objects(I.job);
  I.reg = registry_acquire(I.job);

  // The rendezvous directory.
  I.store = opts.store_dir;
  if (I.store.empty()) {
    // `<job>.XXXXXX`: the name sweep_stale_stores parses for the pid.
    try {
      I.store = create_job_dir(I.job + ".");
    } catch (const std::exception& e) {
      I.cleanup();
      throw std::runtime_error(std::string("WorkerPool: ") + e.what());
    }
    I.own_store = true;
    registry_set_store(I.reg, I.store);
  }

  const int N = opts.world;
  try {
    I.board = StatusBoard::create(I.job, N);
    I.tx = std::make_unique<BlockSender>(I.job + ".bc");
    I.w.resize(N);
    for (int r = 0; r < N; ++r) {
      WorkerProc& p = I.w[r];
      p.rank = r;
      p.alive = false;
      for (bool to_worker : {true, false}) {
        std::string name = queue_name(I.job, to_worker, r);
        bip::message_queue::remove(name.c_str());
        auto q = std::make_unique<bip::message_queue>(bip::create_only,
                                                      name.c_str(),
                                                      kQueueDepth,
                                                      kWireMax,
                                                      bip::permissions(0600));
        (to_worker ? p.to : p.from) = std::move(q);
      }
    }
  } catch (const std::exception& e) {
    I.cleanup();
    throw std::runtime_error(
        std::string("WorkerPool: cannot create the control channel in "
                    "/dev/shm: ") +
        e.what());
  }

  std::string binary = opts.binary.empty() ? "/proc/self/exe" : opts.binary;
  int devnull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  pid_t parent = ::getpid();
  std::vector<int> out_fds(N, -1);
  std::string exec_fail = "ss worker: cannot run " + binary + "\n";
  // The workers' environment: ours, with opts.env's names replaced.
  std::vector<std::string> env_strings = opts.env;
  for (char** e = environ; *e; ++e) {
    std::string_view kv(*e);
    bool replaced = false;
    for (const std::string& mine : opts.env)
      if (kv.substr(0, kv.find('=') + 1) ==
          std::string_view(mine).substr(0, mine.find('=') + 1))
        replaced = true;
    if (!replaced) env_strings.emplace_back(kv);
  }
  std::vector<char*> envp;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);

  for (int r = 0; r < N; ++r) {
    WorkerProc& p = I.w[r];
    std::vector<std::string> args = {binary,
                                     "worker",
                                     "--job",
                                     I.job,
                                     "--rank",
                                     std::to_string(r),
                                     "--world",
                                     std::to_string(N),
                                     "--store",
                                     I.store,
                                     "--bell-fd",
                                     "3"};
    args.insert(args.end(), opts.extra_args.begin(), opts.extra_args.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);

    int outp[2], bellp[2];
    if (::pipe2(outp, O_CLOEXEC) != 0 ||
        ::pipe2(bellp, O_CLOEXEC | O_NONBLOCK) != 0) {
      I.cleanup();
      throw std::runtime_error(std::string("WorkerPool: pipe: ") +
                               std::strerror(errno));
    }
    int out_r = move_high(outp[0]), out_w = move_high(outp[1]);
    int bell_r = move_high(bellp[0]), bell_w = move_high(bellp[1]);
    pid_t group = I.pgid;

    pid_t pid = ::fork();
    if (pid == 0) {
      // The child: async-signal-safe calls only until exec. SIGTERM when
      // we die: the worker then removes what we leave (Note [Workers clean
      // up after a dead controller] in worker.cpp).
      ::signal(SIGTERM, SIG_DFL);
      ::prctl(PR_SET_PDEATHSIG, SIGTERM);
      if (::getppid() != parent)
        ::_exit(111);       // the controller died before prctl
      ::setpgid(0, group);  // group 0: a new group led by worker 0
      sigset_t none;
      sigemptyset(&none);
      ::sigprocmask(SIG_SETMASK, &none, nullptr);
      ::dup2(devnull, 0);
      ::dup2(out_w, 1);
      ::dup2(out_w, 2);
      ::dup2(bell_w, 3);
      if (::syscall(SYS_close_range, 4u, ~0u, 0u) != 0)
        for (int fd = 4; fd < 4096; ++fd) ::close(fd);
      ::execve(argv[0], argv.data(), envp.data());
      (void)!::write(2, exec_fail.data(), exec_fail.size());
      ::_exit(127);
    }
    ::close(out_w);
    ::close(bell_w);
    if (pid < 0) {
      int err = errno;
      ::close(out_r);
      ::close(bell_r);
      I.fwd = std::make_unique<OutputForwarder>(out_fds, opts.forward_output);
      I.cleanup();
      throw std::runtime_error(std::string("WorkerPool: fork: ") +
                               std::strerror(err));
    }
    ::setpgid(pid,
              group == 0 ? pid : group);  // also here: no race with the child
    if (r == 0) I.pgid = pid;
    if (I.reg >= 0 && r == 0) registry_set_pgid(I.reg, pid);
    registry_add_pid(I.reg, pid);
    p.pid = pid;
    p.alive = true;
    p.bell = bell_r;
    p.pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
    ::fcntl(out_r, F_SETFL, ::fcntl(out_r, F_GETFL) | O_NONBLOCK);
    out_fds[r] = out_r;
  }
  if (devnull >= 0) ::close(devnull);
  I.fwd = std::make_unique<OutputForwarder>(out_fds, opts.forward_output);

  // Hellos.
  std::vector<int> all(N);
  for (int r = 0; r < N; ++r) all[r] = r;
  std::vector<Message> hellos(N);
  std::vector<uint32_t> flags(N, 0);
  I.running = true;
  I.wait_replies(all,
                 0,
                 /*hello=*/true,
                 Clock::now() + opts.start_timeout,
                 {},
                 kHello,
                 hellos,
                 flags);
  return std::unique_ptr<WorkerPool>(new WorkerPool(std::move(impl)));
}

std::vector<Message> WorkerPool::call_all(const Message& m,
                                          std::string_view what) {
  return collect(post_all(m, what));
}

uint64_t WorkerPool::post_all(const Message& m, std::string_view what) {
  Impl& I = *impl_;
  I.ensure_running();
  const int N = static_cast<int>(I.w.size());
  uint64_t id = I.next_id++;
  size_t n = encode(m, id, 0, *I.tx, static_cast<uint32_t>(N), I.buf.data());
  std::vector<char> wire(I.buf.begin(), I.buf.begin() + n);
  I.posted[id] = Impl::Posted{I.call_deadline(), std::string(what), m.kind};
  for (int r = 0; r < N; ++r) I.send_to(r, wire.data(), n);
  return id;
}

std::vector<Message> WorkerPool::collect(uint64_t id) {
  Impl& I = *impl_;
  I.ensure_running();
  auto it = I.posted.find(id);
  if (it == I.posted.end())
    throw std::logic_error("WorkerPool::collect: no call " +
                           std::to_string(id) + " is waiting");
  Impl::Posted p = std::move(it->second);
  I.posted.erase(it);
  const int N = static_cast<int>(I.w.size());
  std::vector<Message> out(N);
  std::vector<uint32_t> flags(N, 0);
  std::vector<int> all(N);
  for (int r = 0; r < N; ++r) all[r] = r;
  I.wait_replies(all, id, false, p.deadline, p.what, p.kind, out, flags);
  return I.finish(std::move(out), flags, all);
}

std::vector<Message> WorkerPool::call_each(const std::vector<Message>& ms,
                                           std::string_view what) {
  Impl& I = *impl_;
  I.ensure_running();
  const int N = static_cast<int>(I.w.size());
  if (static_cast<int>(ms.size()) != N)
    throw std::invalid_argument("call_each: one message per worker");
  uint64_t id = I.next_id++;
  auto deadline = I.call_deadline();
  for (int r = 0; r < N; ++r) {
    size_t n = encode(ms[r], id, 0, *I.tx, 1, I.buf.data());
    I.send_to(r, I.buf.data(), n);
  }
  std::vector<Message> out(N);
  std::vector<uint32_t> flags(N, 0);
  std::vector<int> all(N);
  for (int r = 0; r < N; ++r) all[r] = r;
  I.wait_replies(
      all, id, false, deadline, what, ms.empty() ? 0 : ms[0].kind, out, flags);
  return I.finish(std::move(out), flags, all);
}

Message WorkerPool::call(int rank, const Message& m, std::string_view what) {
  Impl& I = *impl_;
  I.ensure_running();
  if (rank < 0 || rank >= static_cast<int>(I.w.size()))
    throw std::out_of_range("WorkerPool::call: no worker " +
                            std::to_string(rank));
  uint64_t id = I.next_id++;
  auto deadline = I.call_deadline();
  size_t n = encode(m, id, 0, *I.tx, 1, I.buf.data());
  I.send_to(rank, I.buf.data(), n);
  std::vector<Message> out(I.w.size());
  std::vector<uint32_t> flags(I.w.size(), 0);
  I.wait_replies({rank}, id, false, deadline, what, m.kind, out, flags);
  I.finish(out, flags, {rank});
  return std::move(out[rank]);
}

void WorkerPool::send_all(const Message& m) {
  Impl& I = *impl_;
  I.ensure_running();
  const int N = static_cast<int>(I.w.size());
  uint64_t id = I.next_id++;
  size_t n = encode(
      m, id, kFlagNoReply, *I.tx, static_cast<uint32_t>(N), I.buf.data());
  std::vector<char> wire(I.buf.begin(), I.buf.begin() + n);
  for (int r = 0; r < N; ++r) I.send_to(r, wire.data(), n);
}

void WorkerPool::check_alive() {
  Impl& I = *impl_;
  I.ensure_running();
  I.check_events(false);
}

void WorkerPool::stop() {
  if (!impl_) return;
  Impl& I = *impl_;
  if (I.cleaned) return;
  try {
    if (I.running) {
      char wire[sizeof(WireHeader)];
      WireHeader h{kShutdown, kFlagNoReply, 0, 0};
      std::memcpy(wire, &h, sizeof h);
      for (auto& p : I.w)
        if (p.alive && p.to) (void)q_try_send(*p.to, wire, sizeof wire);
      I.stop_workers(0, I.opts.grace);
    }
  } catch (...) {
  }
  I.cleanup();
}

uint64_t WorkerPool::messages_sent() const {
  return impl_->sent;
}

int WorkerPool::world() const {
  return static_cast<int>(impl_->w.size());
}
const std::string& WorkerPool::job() const {
  return impl_->job;
}
const std::string& WorkerPool::store_dir() const {
  return impl_->store;
}
bool WorkerPool::running() const {
  return impl_->running && !impl_->failure;
}
std::vector<int> WorkerPool::pids() const {
  std::vector<int> out;
  for (auto& p : impl_->w) out.push_back(p.pid);
  return out;
}
std::string WorkerPool::status(int rank) const {
  return impl_->status_of(rank);
}

}  // namespace ss::dist
