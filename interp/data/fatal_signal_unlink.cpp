// Files removed on a fatal signal (fatal_signal_unlink.h).
#include "interp/data/fatal_signal_unlink.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>

namespace ss::data {

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
// save's sweep is left for that.
//
// Creating the temporary and registering it is one step the handler waits
// for (TemporaryFile). Two leftovers that CI caught show why: a signal
// that arrived during mkostemp's open(2) was delivered on its return,
// before the path was registered (so the step runs with these signals
// blocked on its thread); and a handler running on another thread
// scanned, then ended the process while the saving thread was inside
// open(2), before it could see g_dying (so the handler waits for
// g_creating to reach 0, then scans; a step that starts after g_dying is
// set makes no file). The wait is bounded (kCreateWaitMs), since a
// handler must not hang on a stuck filesystem.
constexpr int kSlots = 8;
constexpr size_t kPathMax = 4096;
std::atomic<int> g_used[kSlots];
// Set by the handler before it unlinks: a save on another thread that
// registers a new temporary while the signal's handlers still run (the
// pool's kill the workers first) unlinks it itself.
std::atomic<int> g_dying{0};
// Creations between their start and their registration.
std::atomic<int> g_creating{0};
constexpr int kCreateWaitMs = 2000;
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
    for (int ms = 0; g_creating.load() > 0 && ms < kCreateWaitMs; ++ms) {
      struct timespec one_ms {
        0, 1000000
      };
      ::nanosleep(&one_ms, nullptr);  // async-signal-safe
    }
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

namespace {

// Blocks SIGINT, SIGTERM and SIGHUP on this thread while alive.
class BlockFatalSignals {
 public:
  BlockFatalSignals() {
    sigset_t fatal;
    sigemptyset(&fatal);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&fatal, sig);
    held_ = ::pthread_sigmask(SIG_BLOCK, &fatal, &old_) == 0;
  }
  ~BlockFatalSignals() {
    if (held_) ::pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  BlockFatalSignals(const BlockFatalSignals&) = delete;
  BlockFatalSignals& operator=(const BlockFatalSignals&) = delete;

 private:
  sigset_t old_;
  bool held_ = false;
};

}  // namespace

TemporaryFile::TemporaryFile(std::string path_template)
    : path_(std::move(path_template)) {
  std::call_once(g_install, install);
  BlockFatalSignals blocked;
  g_creating.fetch_add(1);
  if (g_dying.load()) {  // the handler may have scanned already
    g_creating.fetch_sub(1);
    errno = EINTR;
    return;
  }
  fd_ = ::mkostemp(path_.data(), O_CLOEXEC);
  if (fd_ >= 0 && path_.size() < kPathMax) {
    for (int i = 0; i < kSlots; ++i) {
      int expected = 0;
      if (g_used[i].compare_exchange_strong(expected, 2)) {  // 2: being written
        std::memcpy(g_paths[i], path_.c_str(), path_.size() + 1);
        g_used[i].store(1);
        slot_ = i;
        break;
      }
    }
  }
  int saved = errno;
  g_creating.fetch_sub(1);
  errno = saved;
}

TemporaryFile::~TemporaryFile() {
  if (slot_ >= 0) g_used[slot_].store(0);
}

}  // namespace ss::data
