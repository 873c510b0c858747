// What a host language's process needs of `ss`'s main: the runtime table,
// the evaluator's deep stack, and a worker's life (embed.h).
#include <pthread.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <utility>

#include "interp/builtins/install.h"
#include "interp/devices/worker/program_server.h"
#include "interp/embed/embed.h"

namespace ss::embed {

void prepare() {
  static const bool done = (builtins::install(), true);
  (void)done;
}

namespace {

// Note [A deep stack] in interp/cli/main.cpp: the evaluator's frames want
// more than a host's thread has (Python's main thread: 8 MiB).
constexpr size_t kStackBytes = size_t{1} << 30;

// Note [Handing a call to the deep thread]
// A call from the host crosses to the deep thread and back: with a
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

int worker_main(const std::vector<std::string>& args) {
  // A worker's process is ours: `ss worker`'s settings (interp/cli/main.cpp).
  ops::keep_step_buffers_in_heap();
  prepare();
  std::string bad = devices::worker::bad_device_environment();
  if (!bad.empty()) return 64;
  int rc = 0;
  DeepThread deep;
  deep.run([&] { rc = devices::worker::worker_main(args); });
  return rc;
}

}  // namespace ss::embed
