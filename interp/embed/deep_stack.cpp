// Where a host's calls run: the evaluator's deep stack (Note [A deep
// stack] in interp/cli/main.cpp) on a thread of its own (DeepThread) or
// switched to on the caller's (DeepStack), embed.h.
#include <pthread.h>
#include <sys/mman.h>
#include <ucontext.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#define SS_ASAN_FIBERS 1
#endif

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <utility>

#include "interp/embed/embed.h"

namespace ss::embed {

namespace {

// Note [A deep stack] in interp/cli/main.cpp: the evaluator's frames want
// more than a host's thread has (Python's main thread: 8 MiB).
constexpr size_t kStackBytes = size_t{1} << 30;

// Note [Handing a call to the deep thread]
// A session with workers (and `ss.run`, embed::run) runs its calls on a
// deep thread; one on one device switches stacks instead (Note [Switching
// to the deep stack]). A call crosses to the deep thread and back: with a
// condition variable alone that cost about 25 us each way here (two futex
// wakes on a virtual machine), a third of a small step's time from Python
// (bench/python_bench.py, batch 64). So each side first spins briefly on
// an atomic, and sleeps on the condition variable only after: the deep
// thread for kIdleSpin while the host prepares its next call (one core,
// which the host's thread shares with nothing of ours), the caller for
// kCallSpin while a short call (a field read, a small fn) runs. The
// caller's spin is short because it takes a core from the call's own BLAS
// threads while a long call runs. An idle session costs nothing.
constexpr std::chrono::microseconds kIdleSpin{100};
constexpr std::chrono::microseconds kCallSpin{20};

// Spins until [ready] (true) or [limit] has passed (false).
template <class F>
bool spin_for(std::chrono::microseconds limit, F ready) {
  const auto until = std::chrono::steady_clock::now() + limit;
  for (int i = 0;; ++i) {
    if (ready()) return true;
    if ((i & 63) == 63 && std::chrono::steady_clock::now() > until)
      return false;
    __builtin_ia32_pause();
  }
}

}  // namespace

struct DeepThread::State {
  std::mutex mu;
  std::condition_variable cv;
  std::atomic<const std::function<void()>*> job{nullptr};  // set: to run
  std::atomic<bool> done{false}, quit{false};
  std::exception_ptr error;
  pthread_t thread{};
  bool started = false;

  static void* loop(void* p) {
    auto* s = static_cast<State*>(p);
    while (true) {
      const std::function<void()>* job = nullptr;
      auto ready = [&] {
        job = s->job.load(std::memory_order_acquire);
        return job || s->quit.load();
      };
      if (!spin_for(kIdleSpin, ready)) {
        std::unique_lock<std::mutex> lock(s->mu);
        s->cv.wait(lock, ready);
      }
      if (!job) return nullptr;  // quit
      std::exception_ptr error;
      try {
        (*job)();
      } catch (...) {
        error = std::current_exception();
      }
      s->error = error;
      s->job.store(nullptr, std::memory_order_relaxed);
      {
        std::lock_guard<std::mutex> lock(s->mu);
        s->done.store(true, std::memory_order_release);
      }
      s->cv.notify_all();
    }
  }
};

DeepThread::DeepThread() : s_(std::make_unique<State>()) {}

DeepThread::~DeepThread() {
  if (!s_->started) return;
  {
    std::lock_guard<std::mutex> lock(s_->mu);
    s_->quit.store(true);
  }
  s_->cv.notify_all();
  pthread_join(s_->thread, nullptr);
}

void DeepThread::run(const std::function<void()>& body,
                     const std::function<void()>& poll) {
  if (!s_->started) {
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) == 0) {
      s_->started =
          pthread_attr_setstacksize(&attr, kStackBytes) == 0 &&
          pthread_create(&s_->thread, &attr, State::loop, s_.get()) == 0;
      pthread_attr_destroy(&attr);
    }
    if (!s_->started) {
      body();  // no thread to be had: this thread's stack
      return;
    }
  }
  s_->done.store(false, std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(s_->mu);
    s_->job.store(&body, std::memory_order_release);
  }
  s_->cv.notify_all();
  // Note [Handing a call to the deep thread]
  auto done = [&] { return s_->done.load(std::memory_order_acquire); };
  if (!spin_for(kCallSpin, done)) {
    std::unique_lock<std::mutex> lock(s_->mu);
    while (!done()) {
      s_->cv.wait_for(lock, std::chrono::milliseconds(50), done);
      if (!done() && poll) {
        lock.unlock();
        poll();
        lock.lock();
      }
    }
  }
  if (std::exception_ptr e = std::exchange(s_->error, nullptr))
    std::rethrow_exception(e);
}

// Note [Switching to the deep stack]
// On one device a session's call runs on the host's own thread, on a
// stack of kStackBytes reserved once per session (untouched pages cost
// nothing) and switched to with swapcontext, a microsecond or so. The hop
// to a deep thread and back (Note [Handing a call to the deep thread])
// cost a futex wake, or a thread spinning for it, which on a two-core
// machine took a core from the call's own BLAS threads: the README MLP's
// step at batch 64 from Python took 1.088x `ss run`'s with the hop and
// 1.042x with the switch (median of paired runs, bench/python_bench.py),
// and its forward alone 248 against 205 us (`ss run`: 193). A body always
// runs to its end before run() returns, so the context is made afresh for
// each; what it throws is caught on the deep stack and rethrown on the
// caller's, never unwound across the switch. With no thread watching, the
// call looks for the host's Ctrl-C itself, at its statements
// (the poll of Interpreter::set_interrupt_flag). Sessions with workers keep the
// deep thread: their workers end with the thread that started them.
struct DeepStack::State {
  void* base = nullptr;
  size_t bytes = 0;
  ucontext_t caller{}, deep{};
  const std::function<void()>* body = nullptr;
  std::exception_ptr error;
  bool inside = false;
  const void* caller_bottom = nullptr;  // ASan's view of the caller's
  size_t caller_size = 0;

  static void trampoline(unsigned hi, unsigned lo) {
    auto* s = reinterpret_cast<State*>((uintptr_t{hi} << 32) | uintptr_t{lo});
#ifdef SS_ASAN_FIBERS
    __sanitizer_finish_switch_fiber(
        nullptr, &s->caller_bottom, &s->caller_size);
#endif
    try {
      (*s->body)();
    } catch (...) {
      s->error = std::current_exception();
    }
#ifdef SS_ASAN_FIBERS
    // Back to the caller for good: this context ends.
    __sanitizer_start_switch_fiber(nullptr, s->caller_bottom, s->caller_size);
#endif
    // Returns to uc_link: the caller's context.
  }
};

DeepStack::DeepStack() : s_(std::make_unique<State>()) {}

DeepStack::~DeepStack() {
  if (s_->base) munmap(s_->base, s_->bytes);
}

void DeepStack::run(const std::function<void()>& body) {
  State& s = *s_;
  if (s.inside) {
    body();
    return;
  }
  if (!s.base) {
    void* p = mmap(nullptr,
                   kStackBytes,
                   PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK,
                   -1,
                   0);
    if (p == MAP_FAILED) {
      body();  // no stack to be had: this one
      return;
    }
    // The lowest page faults rather than running into another mapping.
    mprotect(p, 4096, PROT_NONE);
    s.base = p;
    s.bytes = kStackBytes;
  }
  getcontext(&s.deep);
  s.deep.uc_stack.ss_sp = s.base;
  s.deep.uc_stack.ss_size = s.bytes;
  s.deep.uc_link = &s.caller;
  const auto addr = reinterpret_cast<uintptr_t>(&s);
  makecontext(&s.deep,
              reinterpret_cast<void (*)()>(&State::trampoline),
              2,
              static_cast<unsigned>(addr >> 32),
              static_cast<unsigned>(addr & 0xffffffffu));
  s.body = &body;
  s.inside = true;
#ifdef SS_ASAN_FIBERS
  void* fake_stack = nullptr;
  __sanitizer_start_switch_fiber(&fake_stack, s.base, s.bytes);
#endif
  swapcontext(&s.caller, &s.deep);
#ifdef SS_ASAN_FIBERS
  __sanitizer_finish_switch_fiber(fake_stack, nullptr, nullptr);
#endif
  s.inside = false;
  s.body = nullptr;
  if (std::exception_ptr e = std::exchange(s.error, nullptr))
    std::rethrow_exception(e);
}

}  // namespace ss::embed
