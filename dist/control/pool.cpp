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
#include "dist/control/pool_workers.h"
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
// of ours whose controller is gone (Note [A job's life is a lock]).
void sweep_stale_stores() {
  const std::string base = temp_root();
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator(base, ec);
       !ec && it != std::filesystem::directory_iterator();
       it.increment(ec)) {
    std::string name = it->path().filename().string();
    const std::string job = job_of(name);
    if (job.empty() || job_controller_pid(job) == ::getpid()) continue;
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) != 0 || !S_ISDIR(st.st_mode) ||
        st.st_uid != ::getuid())
      continue;
    // Note [A job's life is a lock] (channel.cpp): not by its pid.
    if (!job_alive(job)) {
      std::error_code rm;
      std::filesystem::remove_all(it->path(), rm);
    }
  }
}

}  // namespace

// ---- the pool ----

struct WorkerPool::Impl {
  LaunchOptions opts;
  std::string job;
  std::unique_ptr<Workers> w;
  uint64_t next_id = 1;
  // Calls posted and not yet collected (post_all/collect).
  struct Posted {
    Clock::time_point deadline;
    std::string what;
    uint32_t kind = 0;
  };
  std::map<uint64_t, Posted> posted;
  uint64_t sent = 0;  // request messages handed to the workers' channels
  bool running = false;
  bool cleaned = false;
  int alive_fd = -1;  // Note [A job's life is a lock]
  std::exception_ptr failure;
  // When the workers were sent SIGINT (Note [Interrupting the workers]).
  std::optional<Clock::time_point> interrupt_at;
  int reg = -1;

  ~Impl() { cleanup(); }

  int world() const { return w ? w->world() : 0; }

  void cleanup() {
    if (cleaned) return;
    cleaned = true;
    running = false;
    if (w) w->cleanup();
    registry_release(reg);
    reg = -1;
    if (alive_fd >= 0) release_job_lock(job, alive_fd);
    alive_fd = -1;
  }

  [[noreturn]] void fail(std::exception_ptr e) {
    failure = e;
    cleanup();
    std::rethrow_exception(e);
  }

  std::string status_of(int rank, bool* waiting = nullptr) const {
    return w ? w->status(rank, waiting) : std::string();
  }

  // "worker 2 (pid 4121)", "worker 2 (pid 4121 on node2)".
  std::string name(int rank) const {
    std::string host = w->host(rank);
    return "worker " + std::to_string(rank) + " (pid " +
           std::to_string(w->pid(rank)) + (host.empty() ? "" : " on " + host) +
           ")";
  }

  [[noreturn]] void fail_dead(int rank, bool starting) {
    std::string status = status_of(rank);
    Loss how = w->loss(rank);
    w->stop_all(SIGTERM, opts.grace);
    std::string tail = w->output_tail(rank, std::chrono::milliseconds(200));
    std::string msg = name(rank) + " " + (how.killed ? "was " : "") + how.how;
    if (starting) {
      msg += " while starting";
      std::string last = last_lines(tail, 10);
      if (!last.empty()) msg += "; its last output:\n" + last;
    } else if (!status.empty()) {
      msg += " while " + status;
    }
    fail(std::make_exception_ptr(
        WorkerError(msg, rank, w->pid(rank), how.how, status, tail)));
  }

  [[noreturn]] void fail_start_timeout(const std::vector<int>& pending) {
    int rank = pending.front();
    std::string status = status_of(rank);
    w->stop_all(SIGTERM, opts.grace);
    std::string tail = w->output_tail(rank, std::chrono::milliseconds(200));
    double s = std::chrono::duration<double>(opts.start_timeout).count();
    char secs[32];
    std::snprintf(secs, sizeof secs, "%g", s);
    std::string host = w->host(rank);
    std::string msg =
        join_ranks(pending) + " didn't start within " + secs + " s (worker " +
        std::to_string(rank) +
        (w->pid(rank) > 0 ? " is pid " + std::to_string(w->pid(rank))
                          : std::string(" never connected")) +
        (host.empty() ? "" : " on " + host) + ")";
    std::string last = last_lines(tail, 10);
    if (!last.empty()) msg += "; its last output:\n" + last;
    fail(std::make_exception_ptr(WorkerError(
        msg, rank, w->pid(rank), "didn't start in time", status, tail)));
  }

  // Whether a worker has waited for the others in one collective for
  // longer than the collective timeout. Any worker counts, not only those
  // still on the call being collected: with calls posted ahead, a worker
  // that answered it may already wait in the next call for one that
  // stopped after its last collective.
  bool collective_stuck() const {
    const int64_t limit_ms =
        static_cast<int64_t>(opts.collective_timeout.count() * 1000.0);
    const int64_t now = monotonic_ms();
    for (int r = 0; r < world(); ++r) {
      bool waiting = false;
      int64_t since = 0;
      w->status(r, &waiting, &since);
      if (waiting && now - since > limit_ms) return true;
    }
    return false;
  }

  // Note [A worker stopped in its call]: a worker stopped by a signal
  // (SIGSTOP, a debugger) in a call whose collectives it had done leaves
  // nobody waiting in a collective: its peers answered and sit idle, and
  // the controller waits for its answer, which no timeout bounded (a call
  // may run for hours). It is treated as a worker the others wait for:
  // stopped for longer than the collective timeout, the call fails as a
  // collective timeout naming it. [since]: when each pending worker was
  // first seen stopped (reset when it runs again: a job stopped and
  // continued whole, Ctrl-Z then fg, starts afresh). Looked at every
  // 100 ms at most, from 100 ms into a wait: a quick call reads no /proc.
  bool stuck_stopped(const std::vector<int>& pending,
                     std::vector<std::optional<Clock::time_point>>& since,
                     Clock::time_point& next_look) {
    const auto now = Clock::now();
    if (now < next_look) return false;
    next_look = now + std::chrono::milliseconds(100);
    for (int r : pending) {
      if (!w->stopped(r)) {
        since[r].reset();
      } else if (!since[r]) {
        since[r] = now;
      } else if (now - *since[r] > opts.collective_timeout) {
        return true;
      }
    }
    return false;
  }

  [[noreturn]] void fail_timeout(const std::vector<bool>& answered,
                                 std::string_view what,
                                 uint32_t kind) {
    std::vector<WorkerState> states;
    std::vector<int> culprits, pending, stopped;
    for (int r = 0; r < world(); ++r) {
      WorkerState s;
      s.rank = r;
      s.pid = w->pid(r);
      s.answered = answered[r];
      s.status = status_of(r, &s.waiting);
      if (!s.answered) {
        pending.push_back(r);
        if (!s.waiting) culprits.push_back(r);
        if (w->stopped(r)) stopped.push_back(r);
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
      if (!s.answered && w->stopped(s.rank)) msg += " (its process is stopped)";
    }
    int rank = culprits.front();
    std::string status = states[rank].status;
    double t =
        std::min(opts.call_timeout.count(), opts.collective_timeout.count());
    w->stop_all(SIGTERM, opts.grace);
    fail(std::make_exception_ptr(
        CallTimeout(msg, rank, w->pid(rank), status, states, t)));
  }

  [[noreturn]] void fail_interrupted() {
    w->stop_all(SIGTERM, opts.grace);
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
    int dead = w->reap();
    if (dead >= 0) fail_dead(dead, starting);
    if (!opts.interrupted || !opts.interrupted()) {
      interrupt_at.reset();
      return;
    }
    if (!opts.interrupt_workers || starting) fail_interrupted();
    if (!interrupt_at) {
      interrupt_at = Clock::now();
      for (int r = 0; r < world(); ++r) w->interrupt(r);
    } else if (Clock::now() - *interrupt_at > opts.interrupt_grace) {
      fail_interrupted();
    }
  }

  // [m] to every rank of [ranks], encoded once.
  void send(const std::vector<int>& ranks,
            const Message& m,
            uint64_t id,
            uint32_t flags) {
    Outgoing out{&m, id, flags, {}};
    w->prepare(out, static_cast<uint32_t>(ranks.size()));
    for (int r : ranks) {
      // Full (the worker is behind) or its lock timed out (did it die
      // holding it?): look at the workers, wait a little, retry.
      while (!w->try_send(r, out)) {
        check_events(false);
        w->wait_event(1);
      }
      ++sent;
    }
  }

  std::vector<int> all() const {
    std::vector<int> ranks(world());
    for (int r = 0; r < world(); ++r) ranks[r] = r;
    return ranks;
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
    std::vector<bool> answered(world(), true);
    for (int r : pending) answered[r] = false;
    std::vector<std::optional<Clock::time_point>> stopped_since(world());
    Clock::time_point next_stop_look =
        Clock::now() + std::chrono::milliseconds(100);
    while (true) {
      check_events(hello);
      for (auto it = pending.begin(); it != pending.end();) {
        bool got = false;
        while (!got) {
          std::optional<Incoming> in = w->try_receive(*it);
          if (!in) break;
          if (hello ? in->m.kind == kHello : in->m.id == id) {
            out[*it] = std::move(in->m);
            flags[*it] = in->flags;
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
      if (!hello && (collective_stuck() ||
                     stuck_stopped(pending, stopped_since, next_stop_look)))
        fail_timeout(answered, what, kind);
      auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now)
              .count();
      w->wait_event(static_cast<int>(std::min<long long>(left + 1, 1000)));
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
  // Local workers share /dev/shm with the controller, and clean its
  // names when it dies; a TCP job makes none there (its rendezvous dir is
  // still judged by the pid).
  if (!opts.remote) I.alive_fd = hold_job_lock(I.job);
  I.reg = registry_acquire(I.job);
  try {
    I.w = opts.remote ? start_tcp_workers(opts, I.job, I.reg)
                      : start_shm_workers(opts, I.job, I.reg);
  } catch (...) {
    I.cleanup();
    throw;
  }
  const int N = opts.world;
  std::vector<Message> hellos(N);
  std::vector<uint32_t> flags(N, 0);
  I.running = true;
  I.wait_replies(I.all(),
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
  uint64_t id = I.next_id++;
  I.posted[id] = Impl::Posted{I.call_deadline(), std::string(what), m.kind};
  I.send(I.all(), m, id, 0);
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
  const int N = I.world();
  std::vector<Message> out(N);
  std::vector<uint32_t> flags(N, 0);
  I.wait_replies(I.all(), id, false, p.deadline, p.what, p.kind, out, flags);
  return I.finish(std::move(out), flags, I.all());
}

std::vector<Message> WorkerPool::call_each(const std::vector<Message>& ms,
                                           std::string_view what) {
  Impl& I = *impl_;
  I.ensure_running();
  const int N = I.world();
  if (static_cast<int>(ms.size()) != N)
    throw std::invalid_argument("call_each: one message per worker");
  uint64_t id = I.next_id++;
  auto deadline = I.call_deadline();
  for (int r = 0; r < N; ++r) I.send({r}, ms[r], id, 0);
  std::vector<Message> out(N);
  std::vector<uint32_t> flags(N, 0);
  I.wait_replies(I.all(),
                 id,
                 false,
                 deadline,
                 what,
                 ms.empty() ? 0 : ms[0].kind,
                 out,
                 flags);
  return I.finish(std::move(out), flags, I.all());
}

Message WorkerPool::call(int rank, const Message& m, std::string_view what) {
  Impl& I = *impl_;
  I.ensure_running();
  if (rank < 0 || rank >= I.world())
    throw std::out_of_range("WorkerPool::call: no worker " +
                            std::to_string(rank));
  uint64_t id = I.next_id++;
  auto deadline = I.call_deadline();
  I.send({rank}, m, id, 0);
  std::vector<Message> out(I.world());
  std::vector<uint32_t> flags(I.world(), 0);
  I.wait_replies({rank}, id, false, deadline, what, m.kind, out, flags);
  I.finish(out, flags, {rank});
  return std::move(out[rank]);
}

void WorkerPool::send_all(const Message& m) {
  Impl& I = *impl_;
  I.ensure_running();
  I.send(I.all(), m, I.next_id++, kFlagNoReply);
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
      // Shutdown, best effort: a worker whose channel is full is killed.
      const Message bye{kShutdown, 0, {}};
      Outgoing out{&bye, 0, kFlagNoReply, {}};
      I.w->prepare(out, 0);
      for (int r = 0; r < I.world(); ++r) (void)I.w->try_send(r, out);
      I.w->stop_all(0, I.opts.grace);
    }
  } catch (...) {
  }
  I.cleanup();
}

uint64_t WorkerPool::messages_sent() const {
  return impl_->sent;
}

int WorkerPool::world() const {
  return impl_->world();
}
const std::string& WorkerPool::job() const {
  return impl_->job;
}
const std::string& WorkerPool::store_dir() const {
  return impl_->w->store();
}
bool WorkerPool::running() const {
  return impl_->running && !impl_->failure;
}
std::vector<int> WorkerPool::pids() const {
  std::vector<int> out;
  for (int r = 0; r < impl_->world(); ++r) out.push_back(impl_->w->pid(r));
  return out;
}
std::string WorkerPool::status(int rank) const {
  return impl_->status_of(rank);
}

}  // namespace ss::dist
