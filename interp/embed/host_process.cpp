// What a host language's process needs of `ss`'s main: the runtime table,
// the evaluator's deep stack, and a worker's life (embed.h).
#include <pthread.h>

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

}  // namespace

struct DeepThread::State {
  std::mutex mu;
  std::condition_variable cv;
  const std::function<void()>* job = nullptr;  // set: to run
  bool done = false, quit = false;
  std::exception_ptr error;
  pthread_t thread{};
  bool started = false;

  static void* loop(void* p) {
    auto* s = static_cast<State*>(p);
    std::unique_lock<std::mutex> lock(s->mu);
    while (true) {
      s->cv.wait(lock, [&] { return s->job || s->quit; });
      if (!s->job) return nullptr;
      const std::function<void()>* job = s->job;
      lock.unlock();
      std::exception_ptr error;
      try {
        (*job)();
      } catch (...) {
        error = std::current_exception();
      }
      lock.lock();
      s->error = error;
      s->job = nullptr;
      s->done = true;
      s->cv.notify_all();
    }
  }
};

DeepThread::DeepThread() : s_(std::make_unique<State>()) {}

DeepThread::~DeepThread() {
  if (!s_->started) return;
  {
    std::lock_guard<std::mutex> lock(s_->mu);
    s_->quit = true;
    s_->cv.notify_all();
  }
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
  std::unique_lock<std::mutex> lock(s_->mu);
  s_->done = false;
  s_->job = &body;
  s_->cv.notify_all();
  while (!s_->done) {
    s_->cv.wait_for(lock, std::chrono::milliseconds(50));
    if (!s_->done && poll) {
      lock.unlock();
      poll();
      lock.lock();
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
