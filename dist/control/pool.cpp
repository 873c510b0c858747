// WorkerPool: the controller side of the control channel (control.h).
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
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
#include <mutex>
#include <thread>

#include "dist/control/channel.h"

namespace ss::dist {

using namespace detail;
using Clock = std::chrono::steady_clock;

double default_collective_timeout_s() {
  if (const char* e = std::getenv("SHAPESCRIPT_COLLECTIVE_TIMEOUT")) {
    char* end = nullptr;
    double v = std::strtod(e, &end);
    if (end != e && v > 0) return v;
  }
  return 600.0;
}

namespace {

// ---- process-wide registry, for the signal handlers and atexit ----
// Async-signal-safe: fixed arrays, atomics, raw syscalls.

constexpr int kMaxPools = 16;
constexpr int kMaxPids = 256;

struct RegEntry {
  std::atomic<int> used{0};
  std::atomic<int> owner{0};  // the controller's pid (a forked child skips its parent's pools)
  std::atomic<int> pgid{0};
  std::atomic<int> npids{0};
  std::atomic<int> pids[kMaxPids];
  char job[64];
};
RegEntry g_reg[kMaxPools];
int g_shm_dir = -1;
struct sigaction g_old_action[NSIG];
std::once_flag g_install_once;

void unlink_job_signal_safe(const char* job) {
  if (g_shm_dir < 0) return;
  size_t jl = std::strlen(job);
  alignas(8) char buf[4096];
  ::lseek(g_shm_dir, 0, SEEK_SET);
  // Deleting while listing can skip entries: repeat until a pass deletes none.
  for (int pass = 0; pass < 8; ++pass) {
    bool deleted = false;
    ::lseek(g_shm_dir, 0, SEEK_SET);
    while (true) {
      long n = ::syscall(SYS_getdents64, g_shm_dir, buf, sizeof buf);
      if (n <= 0) break;
      for (long off = 0; off < n;) {
        struct Dirent64 {
          uint64_t ino;
          int64_t off;
          unsigned short reclen;
          unsigned char type;
          char name[1];
        };
        auto* d = reinterpret_cast<Dirent64*>(buf + off);
        if (std::strncmp(d->name, job, jl) == 0 && d->name[jl] == '.') {
          ::unlinkat(g_shm_dir, d->name, 0);
          deleted = true;
        }
        off += d->reclen;
      }
    }
    if (!deleted) break;
  }
}

void kill_and_unlink_all() {
  int self = static_cast<int>(::getpid());
  for (auto& e : g_reg) {
    if (!e.used.load() || e.owner.load() != self) continue;
    int n = std::min(e.npids.load(), kMaxPids);
    for (int i = 0; i < n; ++i)
      if (int p = e.pids[i].load(); p > 0) ::kill(p, SIGKILL);
    unlink_job_signal_safe(e.job);
  }
}

void on_fatal_signal(int sig, siginfo_t* info, void* ctx) {
  int saved = errno;
  const struct sigaction& old = g_old_action[sig];
  const bool dfl_action = !(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL;
  // SIGTERM and SIGHUP mean "terminate" whoever else handles them; SIGINT
  // only when it would kill us (the repl's handler interrupts a statement,
  // and the call loop sees it through LaunchOptions::interrupted).
  if (dfl_action || sig != SIGINT) kill_and_unlink_all();
  if (old.sa_flags & SA_SIGINFO) {
    if (old.sa_sigaction) old.sa_sigaction(sig, info, ctx);
  } else if (dfl_action) {
    // Die of the signal as we would have.
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    ::sigaction(sig, &dfl, nullptr);
    ::raise(sig);
  } else if (old.sa_handler != SIG_IGN) {
    old.sa_handler(sig);  // e.g. the repl's interrupt flag; the call loop sees it
  }
  errno = saved;
}

void install_once() {
  std::call_once(g_install_once, [] {
    g_shm_dir = ::open("/dev/shm", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
      struct sigaction old {};
      ::sigaction(sig, nullptr, &old);
      if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN) continue;
      g_old_action[sig] = old;
      struct sigaction sa {};
      sa.sa_sigaction = on_fatal_signal;
      sa.sa_flags = SA_SIGINFO | SA_RESTART;
      sigemptyset(&sa.sa_mask);
      ::sigaction(sig, &sa, nullptr);
    }
    std::atexit(kill_and_unlink_all);
  });
}

int registry_acquire(const std::string& job) {
  for (int i = 0; i < kMaxPools; ++i) {
    int expected = 0;
    if (g_reg[i].used.load() == 0 && g_reg[i].used.compare_exchange_strong(expected, 2)) {
      RegEntry& e = g_reg[i];
      std::snprintf(e.job, sizeof e.job, "%s", job.c_str());
      e.owner.store(static_cast<int>(::getpid()));
      e.npids.store(0);
      e.pgid.store(0);
      e.used.store(1);
      return i;
    }
  }
  return -1;  // more than kMaxPools pools: no signal-time cleanup for this one
}

void registry_release(int slot) {
  if (slot < 0) return;
  g_reg[slot].used.store(0);
}

void registry_add_pid(int slot, int pid) {
  if (slot < 0) return;
  RegEntry& e = g_reg[slot];
  int i = e.npids.load();
  if (i >= kMaxPids) return;
  e.pids[i].store(pid);
  e.npids.store(i + 1);
}

std::string describe_wait_status(int st) {
  if (WIFEXITED(st)) return "exited with code " + std::to_string(WEXITSTATUS(st));
  if (WIFSIGNALED(st)) {
    int sig = WTERMSIG(st);
    std::string s = "killed by signal " + std::to_string(sig);
    if (const char* abbrev = ::sigabbrev_np(sig)) s += std::string(" (SIG") + abbrev + ")";
    if (WCOREDUMP(st)) s += " (core dumped)";
    return s;
  }
  return "stopped (status " + std::to_string(st) + ")";
}

int move_high(int fd) {
  int h = ::fcntl(fd, F_DUPFD_CLOEXEC, 10);
  ::close(fd);
  return h;
}

// ---- the workers' output: forwarded to our stderr, tail kept ----

class OutputForwarder {
 public:
  OutputForwarder(std::vector<int> fds, bool forward)
      : fds_(std::move(fds)), forward_(forward), tails_(fds_.size()),
        eof_(fds_.size(), false), at_line_start_(fds_.size(), true) {
    int p[2];
    if (::pipe2(p, O_CLOEXEC | O_NONBLOCK) == 0) {
      wake_r_ = p[0];
      wake_w_ = p[1];
    }
    for (size_t r = 0; r < fds_.size(); ++r)
      if (fds_[r] < 0) eof_[r] = true;
    thread_ = std::thread([this] { run(); });
  }
  ~OutputForwarder() {
    stop_.store(true);
    if (wake_w_ >= 0) (void)!::write(wake_w_, "x", 1);
    if (thread_.joinable()) thread_.join();
    for (int fd : fds_)
      if (fd >= 0) ::close(fd);
    if (wake_r_ >= 0) ::close(wake_r_);
    if (wake_w_ >= 0) ::close(wake_w_);
  }
  /// The rank's output tail, after waiting up to `wait` for its end.
  std::string tail(int rank, std::chrono::milliseconds wait) {
    std::unique_lock<std::mutex> lk(mu_);
    cv_.wait_for(lk, wait, [&] { return eof_[rank]; });
    return tails_[rank];
  }

 private:
  void run() {
    std::vector<pollfd> pf;
    char buf[8192];
    while (true) {
      pf.clear();
      std::vector<int> ranks;
      {
        std::lock_guard<std::mutex> lk(mu_);
        for (size_t r = 0; r < fds_.size(); ++r)
          if (!eof_[r]) {
            pf.push_back({fds_[r], POLLIN, 0});
            ranks.push_back(static_cast<int>(r));
          }
      }
      if (pf.empty() || stop_.load()) {
        if (stop_.load()) drain_all(buf, sizeof buf);
        if (stop_.load() || pf.empty()) {
          if (stop_.load()) return;
          // Every pipe ended: wait for stop.
          pollfd w{wake_r_, POLLIN, 0};
          ::poll(&w, 1, -1);
          continue;
        }
      }
      pf.push_back({wake_r_, POLLIN, 0});
      int n = ::poll(pf.data(), pf.size(), -1);
      if (n < 0 && errno != EINTR) return;
      for (size_t i = 0; i + 1 < pf.size(); ++i)
        if (pf[i].revents) read_some(ranks[i], buf, sizeof buf);
      if (pf.back().revents) {
        char c[64];
        while (::read(wake_r_, c, sizeof c) > 0) {
        }
      }
    }
  }
  void drain_all(char* buf, size_t cap) {
    for (size_t r = 0; r < fds_.size(); ++r) {
      while (!eof_[r] && read_some(static_cast<int>(r), buf, cap)) {
      }
      if (forward_ && !at_line_start_[r]) {
        (void)!::write(2, "\n", 1);
        at_line_start_[r] = true;
      }
    }
  }
  // Returns true if it read something.
  bool read_some(int r, char* buf, size_t cap) {
    ssize_t n = ::read(fds_[r], buf, cap);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return false;
    if (n <= 0) {
      if (forward_ && !at_line_start_[r]) {
        (void)!::write(2, "\n", 1);  // the output ended mid-line
        at_line_start_[r] = true;
      }
      std::lock_guard<std::mutex> lk(mu_);
      eof_[r] = true;
      cv_.notify_all();
      return false;
    }
    {
      std::lock_guard<std::mutex> lk(mu_);
      std::string& t = tails_[r];
      t.append(buf, n);
      constexpr size_t kTail = 4096;
      if (t.size() > 2 * kTail) t.erase(0, t.size() - kTail);
    }
    if (forward_) {
      std::string out;
      std::string prefix = "[worker " + std::to_string(r) + "] ";
      for (ssize_t i = 0; i < n; ++i) {
        if (at_line_start_[r]) out += prefix;
        out += buf[i];
        at_line_start_[r] = buf[i] == '\n';
      }
      size_t off = 0;
      while (off < out.size()) {
        ssize_t w = ::write(2, out.data() + off, out.size() - off);
        if (w <= 0) break;
        off += w;
      }
    }
    return true;
  }

  std::vector<int> fds_;
  bool forward_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> tails_;
  std::vector<bool> eof_;
  std::vector<bool> at_line_start_;
  int wake_r_ = -1, wake_w_ = -1;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

std::string last_lines(const std::string& s, int lines) {
  std::string t = s;
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.pop_back();
  size_t pos = t.size();
  for (int i = 0; i < lines && pos != std::string::npos && pos > 0; ++i)
    pos = t.rfind('\n', pos - 1);
  if (pos != std::string::npos && pos < t.size() && t[pos] == '\n') ++pos;
  if (pos == std::string::npos) pos = 0;
  return t.substr(pos);
}

std::string join_ranks(const std::vector<int>& ranks) {
  std::string s = ranks.size() == 1 ? "worker " : "workers ";
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (i > 0) s += i + 1 == ranks.size() ? " and " : ", ";
    s += std::to_string(ranks[i]);
  }
  return s;
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
  bool running = false;
  bool cleaned = false;
  std::exception_ptr failure;
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
    if (first != 0)
      for (auto& p : w)
        if (p.alive) ::kill(p.pid, first);
    auto deadline = Clock::now() + grace;
    while (reap(), any_alive() && Clock::now() < deadline) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
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
          bip::message_queue::remove(queue_name(job, to_worker, p.rank).c_str());
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
    std::string tail = fwd ? fwd->tail(rank, std::chrono::milliseconds(200)) : std::string();
    std::string msg = "worker " + std::to_string(rank) + " (pid " + std::to_string(p.pid) + ") " +
                      (WIFSIGNALED(p.wstatus) ? "was " : "") + how;
    if (starting) {
      msg += " while starting";
      std::string last = last_lines(tail, 10);
      if (!last.empty()) msg += "; its last output:\n" + last;
    } else if (!status.empty()) {
      msg += " while " + status;
    }
    fail(std::make_exception_ptr(WorkerError(msg, rank, p.pid, how, status, tail)));
  }

  [[noreturn]] void fail_start_timeout(const std::vector<int>& pending) {
    int rank = pending.front();
    WorkerProc& p = w[rank];
    std::string status = status_of(rank);
    stop_workers(SIGTERM, opts.grace);
    std::string tail = fwd ? fwd->tail(rank, std::chrono::milliseconds(200)) : std::string();
    double s = std::chrono::duration<double>(opts.start_timeout).count();
    char secs[32];
    std::snprintf(secs, sizeof secs, "%g", s);
    std::string msg = join_ranks(pending) + " didn't start within " + secs + " s (worker " +
                      std::to_string(rank) + " is pid " + std::to_string(p.pid) + ")";
    std::string last = last_lines(tail, 10);
    if (!last.empty()) msg += "; its last output:\n" + last;
    fail(std::make_exception_ptr(
        WorkerError(msg, rank, p.pid, "didn't start in time", status, tail)));
  }

  [[noreturn]] void fail_timeout(const std::vector<bool>& answered, std::string_view what,
                                 uint32_t kind) {
    std::vector<WorkerState> states;
    std::vector<int> culprits, pending;
    for (auto& p : w) {
      WorkerState s;
      s.rank = p.rank;
      s.pid = p.pid;
      s.answered = answered[p.rank];
      s.status = status_of(p.rank, &s.waiting);
      if (!s.answered) {
        pending.push_back(p.rank);
        if (!s.waiting) culprits.push_back(p.rank);
      }
      states.push_back(s);
    }
    if (culprits.empty()) culprits = pending;
    std::string call = what.empty() ? "a call (message kind " + std::to_string(kind) + ")"
                                    : std::string(what);
    std::string msg = "a worker failed while running " + call + ", and " + join_ranks(culprits) +
                      " didn't finish:";
    for (auto& s : states) {
      msg += "\n  worker " + std::to_string(s.rank) + ": ";
      if (s.answered)
        msg += "had finished";
      else if (s.waiting)
        msg += "was " + s.status;
      else
        msg += "didn't answer; it was " + (s.status.empty() ? std::string("idle") : s.status);
    }
    int rank = culprits.front();
    std::string status = states[rank].status;
    double t = opts.call_timeout.count();
    stop_workers(SIGTERM, opts.grace);
    fail(std::make_exception_ptr(CallTimeout(msg, rank, w[rank].pid, status, states, t)));
  }

  [[noreturn]] void fail_interrupted() {
    stop_workers(SIGTERM, opts.grace);
    fail(std::make_exception_ptr(Interrupted("interrupted; the workers were stopped")));
  }

  void ensure_running() {
    if (failure) std::rethrow_exception(failure);
    if (!running) throw std::logic_error("the worker pool was stopped");
  }

  void check_events(bool starting) {
    int dead = reap();
    if (dead >= 0) fail_dead(dead, starting);
    if (opts.interrupted && opts.interrupted()) fail_interrupted();
  }

  void send_to(int rank, const char* data, size_t n) {
    WorkerProc& p = w[rank];
    while (true) {
      if (!p.alive) fail_dead(rank, false);
      QResult r = q_try_send(*p.to, data, n);
      if (r == QResult::Ok) return;
      // Full (the worker is behind) or its lock timed out (did it die
      // holding it?): look at the workers, wait a little, retry.
      check_events(false);
      wait_event(1);
    }
  }

  // Waits for a reply to `id` (or a hello) from every rank in `pending`.
  void wait_replies(std::vector<int> pending, uint64_t id, bool hello, Clock::time_point deadline,
                    std::string_view what, uint32_t kind, std::vector<Message>& out,
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
          if (q != QResult::Ok) break;  // empty, or a lock timeout (checked above next time)
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
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count();
      wait_event(static_cast<int>(std::min<long long>(left + 1, 1000)));
    }
  }

  Clock::time_point call_deadline() const {
    return Clock::now() + std::chrono::duration_cast<Clock::duration>(opts.call_timeout);
  }

  std::vector<Message> finish(std::vector<Message> out, const std::vector<uint32_t>& flags,
                              const std::vector<int>& ranks) {
    for (int r : ranks)
      if (flags[r] & kFlagError) throw RemoteError(out[r].payload, r);
    return out;
  }
};

WorkerPool::WorkerPool(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
WorkerPool::~WorkerPool() { stop(); }

std::unique_ptr<WorkerPool> WorkerPool::start(const LaunchOptions& opts) {
  if (opts.world < 1) throw std::invalid_argument("WorkerPool: world must be at least 1");
  install_once();
  sweep_stale_jobs();
  auto impl = std::make_unique<Impl>();
  Impl& I = *impl;
  I.opts = opts;
  I.job = make_job_name();
  remove_job_objects(I.job);
  I.reg = registry_acquire(I.job);

  // The rendezvous directory.
  I.store = opts.store_dir;
  if (I.store.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/" + I.job + ".XXXXXX";
    std::vector<char> t(templ.begin(), templ.end());
    t.push_back('\0');
    if (!::mkdtemp(t.data())) {
      I.cleanup();
      throw std::runtime_error("WorkerPool: cannot make a temp dir " + templ + ": " +
                               std::strerror(errno));
    }
    I.store = t.data();
    I.own_store = true;
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
        auto q = std::make_unique<bip::message_queue>(bip::create_only, name.c_str(), kQueueDepth,
                                                      kWireMax, bip::permissions(0600));
        (to_worker ? p.to : p.from) = std::move(q);
      }
    }
  } catch (const std::exception& e) {
    I.cleanup();
    throw std::runtime_error(std::string("WorkerPool: cannot create the control channel in "
                                         "/dev/shm: ") + e.what());
  }

  std::string binary = opts.binary.empty() ? "/proc/self/exe" : opts.binary;
  int devnull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  pid_t parent = ::getpid();
  std::vector<int> out_fds(N, -1);
  std::string exec_fail = "ss worker: cannot run " + binary + "\n";

  for (int r = 0; r < N; ++r) {
    WorkerProc& p = I.w[r];
    std::vector<std::string> args = {binary,         "worker",      "--job",   I.job,
                                     "--rank",       std::to_string(r),       "--world",
                                     std::to_string(N), "--store", I.store, "--bell-fd", "3"};
    args.insert(args.end(), opts.extra_args.begin(), opts.extra_args.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);

    int outp[2], bellp[2];
    if (::pipe2(outp, O_CLOEXEC) != 0 || ::pipe2(bellp, O_CLOEXEC | O_NONBLOCK) != 0) {
      I.cleanup();
      throw std::runtime_error(std::string("WorkerPool: pipe: ") + std::strerror(errno));
    }
    int out_r = move_high(outp[0]), out_w = move_high(outp[1]);
    int bell_r = move_high(bellp[0]), bell_w = move_high(bellp[1]);
    pid_t group = I.pgid;
    const int inherit_rank = opts.inherit_output_rank;

    pid_t pid = ::fork();
    if (pid == 0) {
      // The child: async-signal-safe calls only until exec.
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(111);  // the controller died before prctl
      ::setpgid(0, group);                      // group 0: a new group led by worker 0
      sigset_t none;
      sigemptyset(&none);
      ::sigprocmask(SIG_SETMASK, &none, nullptr);
      ::dup2(devnull, 0);
      if (r != inherit_rank) {
        ::dup2(out_w, 1);
        ::dup2(out_w, 2);
      }
      ::dup2(bell_w, 3);
      if (::syscall(SYS_close_range, 4u, ~0u, 0u) != 0)
        for (int fd = 4; fd < 4096; ++fd) ::close(fd);
      ::execv(argv[0], argv.data());
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
      throw std::runtime_error(std::string("WorkerPool: fork: ") + std::strerror(err));
    }
    ::setpgid(pid, group == 0 ? pid : group);  // also here: no race with the child
    if (r == 0) I.pgid = pid;
    if (I.reg >= 0 && r == 0) g_reg[I.reg].pgid.store(pid);
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
  I.wait_replies(all, 0, /*hello=*/true, Clock::now() + opts.start_timeout, {}, kHello, hellos,
                 flags);
  return std::unique_ptr<WorkerPool>(new WorkerPool(std::move(impl)));
}

std::vector<Message> WorkerPool::call_all(const Message& m, std::string_view what) {
  Impl& I = *impl_;
  I.ensure_running();
  const int N = static_cast<int>(I.w.size());
  uint64_t id = I.next_id++;
  size_t n = encode(m, id, 0, *I.tx, static_cast<uint32_t>(N), I.buf.data());
  std::vector<char> wire(I.buf.begin(), I.buf.begin() + n);
  auto deadline = I.call_deadline();
  for (int r = 0; r < N; ++r) I.send_to(r, wire.data(), n);
  std::vector<Message> out(N);
  std::vector<uint32_t> flags(N, 0);
  std::vector<int> all(N);
  for (int r = 0; r < N; ++r) all[r] = r;
  I.wait_replies(all, id, false, deadline, what, m.kind, out, flags);
  return I.finish(std::move(out), flags, all);
}

std::vector<Message> WorkerPool::call_each(const std::vector<Message>& ms, std::string_view what) {
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
  I.wait_replies(all, id, false, deadline, what, ms.empty() ? 0 : ms[0].kind, out, flags);
  return I.finish(std::move(out), flags, all);
}

Message WorkerPool::call(int rank, const Message& m, std::string_view what) {
  Impl& I = *impl_;
  I.ensure_running();
  if (rank < 0 || rank >= static_cast<int>(I.w.size()))
    throw std::out_of_range("WorkerPool::call: no worker " + std::to_string(rank));
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
  size_t n = encode(m, id, kFlagNoReply, *I.tx, static_cast<uint32_t>(N), I.buf.data());
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

int WorkerPool::world() const { return static_cast<int>(impl_->w.size()); }
const std::string& WorkerPool::job() const { return impl_->job; }
const std::string& WorkerPool::store_dir() const { return impl_->store; }
bool WorkerPool::running() const { return impl_->running && !impl_->failure; }
std::vector<int> WorkerPool::pids() const {
  std::vector<int> out;
  for (auto& p : impl_->w) out.push_back(p.pid);
  return out;
}
std::string WorkerPool::status(int rank) const { return impl_->status_of(rank); }

}  // namespace ss::dist
