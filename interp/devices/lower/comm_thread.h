#pragma once
// A rank's communication thread (devices.md item 5): collectives that run
// while the evaluator goes on — value_and_grad's gradient buckets, sent as
// the backward pass finishes them (grad_allreduce.h). Jobs run one at a
// time in the order they were submitted, which is the same on every rank,
// each under its own collective tag; the evaluator's own collectives use
// tag 0 beside them.
//
// (Sending a lowered loss's all-reduce here too, its value arriving while
// the backward pass runs, was tried and measured: on 2 cores it made the
// README MLP's step 10-15% slower at batch 64 and no faster at 6144, the
// thread hand-offs costing more than the overlap saved.)

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>

namespace ss::devices::lower {

class CommThread {
 public:
  CommThread();
  /// Runs what is queued, then joins.
  ~CommThread();
  CommThread(const CommThread&) = delete;
  CommThread& operator=(const CommThread&) = delete;

  /// Queues [job]; the future is ready when it has run (with what it
  /// threw). While the calling thread records a step, [job] runs there,
  /// at once: its collectives are queued into the step.
  std::shared_future<void> submit(std::function<void()> job);
  /// A collective tag for the next job (1 .. 2^24 - 1, cycling).
  uint64_t next_tag();

 private:
  void serve();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::packaged_task<void()>> queue_;
  bool closing_ = false;
  uint64_t tag_ = 0;
  std::thread thread_;
};

}  // namespace ss::devices::lower
