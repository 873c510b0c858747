#include "interp/devices/lower/comm_thread.h"

#include "ops/backend/recorded_step.h"

namespace ss::devices::lower {

CommThread::CommThread() : thread_([this] { serve(); }) {}

CommThread::~CommThread() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    closing_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

std::shared_future<void> CommThread::submit(std::function<void()> job) {
  std::packaged_task<void()> task(std::move(job));
  std::shared_future<void> f = task.get_future().share();
  if (ops::recording_a_step()) {
    // Queued into the step this thread records, in the evaluator's order
    // (Note [A recorded step's collectives] in
    // dist/comm/nccl/nccl_comm.cpp): the graph, not a thread, lets it run
    // beside the pass. (Every job of the step before has ended: its
    // finish waited for them.)
    task();
    return f;
  }
  {
    std::lock_guard<std::mutex> lk(mu_);
    queue_.push_back(std::move(task));
  }
  cv_.notify_all();
  return f;
}

uint64_t CommThread::next_tag() {
  tag_ = tag_ % ((uint64_t{1} << 24) - 1) + 1;
  return tag_;
}

void CommThread::serve() {
  for (;;) {
    std::packaged_task<void()> task;
    {
      std::unique_lock<std::mutex> lk(mu_);
      cv_.wait(lk, [&] { return closing_ || !queue_.empty(); });
      if (queue_.empty()) return;
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task();  // its exception goes to its future
  }
}

}  // namespace ss::devices::lower
