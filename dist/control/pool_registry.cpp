// WorkerPool's process-wide registry of pools and workers, for the signal
// handlers and atexit (kills and unlinks on a fatal signal), and process
// helpers.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <mutex>

#include "dist/control/channel.h"
#include "dist/control/pool_impl.h"
#include "dist/control/remove_signal_safe.h"

namespace ss::dist::pool_detail {

using namespace detail;

namespace {

// ---- process-wide registry, for the signal handlers and atexit ----
// Async-signal-safe: fixed arrays, atomics, raw syscalls.

constexpr int kMaxPools = 16;
constexpr int kMaxPids = 256;

struct RegEntry {
  std::atomic<int> used{0};
  std::atomic<int> owner{
      0};  // the controller's pid (a forked child skips its parent's pools)
  std::atomic<int> pgid{0};
  std::atomic<int> npids{0};
  std::atomic<int> pids[kMaxPids];
  char job[64];
  std::atomic<int> has_store{0};
  char store[512];  // the rendezvous directory, when the pool owns it
};
RegEntry g_reg[kMaxPools];
int g_shm_dir = -1;
struct sigaction g_old_action[NSIG];
std::once_flag g_install_once;

void unlink_job_signal_safe(const char* job) {
  if (g_shm_dir < 0) return;
  unlink_entries_signal_safe(g_shm_dir, job);
}

void kill_and_unlink_all() {
  int self = static_cast<int>(::getpid());
  for (auto& e : g_reg) {
    if (!e.used.load() || e.owner.load() != self) continue;
    int n = std::min(e.npids.load(), kMaxPids);
    for (int i = 0; i < n; ++i)
      if (int p = e.pids[i].load(); p > 0) ::kill(p, SIGKILL);
    unlink_job_signal_safe(e.job);
    // The rendezvous directory too (Note [Sweeping dead jobs] in pool.cpp
    // covers a controller that could not run this).
    if (e.has_store.load()) remove_dir_signal_safe(e.store);
  }
}

void on_fatal_signal(int sig, siginfo_t* info, void* ctx) {
  int saved = errno;
  const struct sigaction& old = g_old_action[sig];
  const bool dfl_action =
      !(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL;
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
    old.sa_handler(
        sig);  // e.g. the repl's interrupt flag; the call loop sees it
  }
  errno = saved;
}

}  // namespace

std::atomic<bool> g_clean_up_on_exit{false};

void install_once() {
  if (!g_clean_up_on_exit.load()) return;
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
    if (g_reg[i].used.load() == 0 &&
        g_reg[i].used.compare_exchange_strong(expected, 2)) {
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
  g_reg[slot].has_store.store(0);
  g_reg[slot].used.store(0);
}

void registry_set_store(int slot, const std::string& dir) {
  if (slot < 0 || dir.size() >= sizeof g_reg[slot].store) return;
  std::memcpy(g_reg[slot].store, dir.c_str(), dir.size() + 1);
  g_reg[slot].has_store.store(1);
}

void registry_add_pid(int slot, int pid) {
  if (slot < 0) return;
  RegEntry& e = g_reg[slot];
  int i = e.npids.load();
  if (i >= kMaxPids) return;
  e.pids[i].store(pid);
  e.npids.store(i + 1);
}

void registry_set_pgid(int slot, int pgid) {
  g_reg[slot].pgid.store(pgid);
}

bool process_stopped(int pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(f)), {});
  size_t close = stat.rfind(')');  // the command name may hold spaces
  if (close == std::string::npos || close + 2 >= stat.size()) return false;
  char state = stat[close + 2];
  return state == 'T' || state == 't';
}

std::string describe_wait_status(int st) {
  if (WIFEXITED(st))
    return "exited with code " + std::to_string(WEXITSTATUS(st));
  if (WIFSIGNALED(st)) {
    int sig = WTERMSIG(st);
    std::string s = "killed by signal " + std::to_string(sig);
    if (const char* abbrev = ::sigabbrev_np(sig))
      s += std::string(" (SIG") + abbrev + ")";
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

}  // namespace ss::dist::pool_detail

namespace ss::dist {

void clean_up_workers_on_exit() {
  pool_detail::g_clean_up_on_exit.store(true);
}

}  // namespace ss::dist
