// Files removed on a fatal signal (fatal_signal_unlink.h).
#include "interp/data/fatal_signal_unlink.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>

namespace ss::eval {

namespace {

// Note [Temporaries on a fatal signal]
// `save` writes a temporary beside its target and renames it over the
// target (Note [Safe replace] in safetensors.cpp). Ctrl-C during the write
// left `<path>.tmp.<pid>.XXXXXX` behind (up to the checkpoint's size) until
// the next save to that path swept it (Note [Dead writers' temporaries]):
// the process-tests of issue 16 found it. So the temporary is registered
// here while it exists, and a handler for SIGINT, SIGTERM and SIGHUP
// unlinks it with a raw syscall, then passes the signal on to the handler
// that was there before (the pool's, which kills the workers, or the
// default, which ends the process). SIGINT unlinks unless the handler
// before is a plain one, the repl's, which interrupts a statement and lets
// the save finish. The pool's handler (SA_SIGINFO) ends `ss run`, so it
// counts as fatal; in a repl with workers it chains to the repl's instead,
// and a save that Ctrl-C catches there fails at its rename ("No such
// file"), an error of that statement. SIGKILL runs no handler; the next
// save's sweep is left for that. The temporary's creation and its
// registration happen with those signals blocked (BlockFatalSignals): a
// signal that arrives during mkostemp's open(2) is otherwise delivered on
// its return, before the path is known here, and CI caught that leftover.
constexpr int kSlots = 8;
constexpr size_t kPathMax = 4096;
std::atomic<int> g_used[kSlots];
// Set by the handler before it unlinks: a save on another thread that
// registers a new temporary while the signal's handlers still run (the
// pool's kill the workers first) unlinks it itself.
std::atomic<int> g_dying{0};
char g_paths[kSlots][kPathMax];
struct sigaction g_old[NSIG];
std::once_flag g_install;

void on_fatal(int sig, siginfo_t* info, void* ctx) {
  int saved = errno;
  const struct sigaction& old = g_old[sig];
  const bool dfl = !(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL;
  const bool plain = !(old.sa_flags & SA_SIGINFO) && !dfl;  // the repl's
  if (!plain || sig != SIGINT) {
    g_dying.store(1);
    for (int i = 0; i < kSlots; ++i)
      if (g_used[i].load() == 1) ::unlink(g_paths[i]);
  }
  errno = saved;
  if (old.sa_flags & SA_SIGINFO) {
    if (old.sa_sigaction) old.sa_sigaction(sig, info, ctx);
  } else if (dfl) {
    struct sigaction d {};
    d.sa_handler = SIG_DFL;
    sigemptyset(&d.sa_mask);
    ::sigaction(sig, &d, nullptr);
    ::raise(sig);
  } else if (old.sa_handler != SIG_IGN) {
    old.sa_handler(sig);
  }
  // Not dying after all (the chain ended in a handler that goes on, as
  // the repl's does): later saves keep their temporaries.
  sigset_t pending;
  if (::sigpending(&pending) == 0 && !sigismember(&pending, sig))
    g_dying.store(0);
  errno = saved;
}

void install() {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old {};
    ::sigaction(sig, nullptr, &old);
    if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN) continue;
    g_old[sig] = old;
    struct sigaction sa {};
    sa.sa_sigaction = on_fatal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    ::sigaction(sig, &sa, nullptr);
  }
}

}  // namespace

UnlinkOnFatalSignal::UnlinkOnFatalSignal(const std::string& path) {
  std::call_once(g_install, install);
  if (path.size() >= kPathMax) return;
  for (int i = 0; i < kSlots; ++i) {
    int expected = 0;
    if (g_used[i].compare_exchange_strong(expected, 2)) {  // 2: being written
      std::memcpy(g_paths[i], path.c_str(), path.size() + 1);
      g_used[i].store(1);
      slot_ = i;
      // After the handler's scan, or seen by it: either way unlinked.
      if (g_dying.load()) ::unlink(g_paths[i]);
      return;
    }
  }
}

BlockFatalSignals::BlockFatalSignals() {
  sigset_t fatal;
  sigemptyset(&fatal);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&fatal, sig);
  held_ = ::pthread_sigmask(SIG_BLOCK, &fatal, &old_) == 0;
}

void BlockFatalSignals::release() {
  if (held_) ::pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  held_ = false;
}

UnlinkOnFatalSignal::~UnlinkOnFatalSignal() {
  if (slot_ >= 0) g_used[slot_].store(0);
}

}  // namespace ss::eval
