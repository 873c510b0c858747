#pragma once
// Internals of WorkerPool, shared by pool.cpp, pool_registry.cpp and
// pool_output.cpp. Not included outside dist/control/.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace ss::dist::pool_detail {

// ---- pool_registry.cpp: the process-wide registry of pools (for the
// signal handlers and atexit) and process helpers.
void install_once();
int registry_acquire(const std::string& job);
void registry_release(int slot);
/// The pool owns rendezvous directory [dir]: a fatal signal removes it.
void registry_set_store(int slot, const std::string& dir);
void registry_add_pid(int slot, int pid);
/// Records worker 0's process group in [slot] (the signal handlers kill it).
void registry_set_pgid(int slot, int pgid);
std::string describe_wait_status(int st);
/// Whether [pid] is stopped by a signal or a tracer (state T or t).
bool process_stopped(int pid);
int move_high(int fd);

// ---- pool_output.cpp: the workers' output: forwarded to our stderr, tail
// kept.

class OutputForwarder {
 public:
  OutputForwarder(std::vector<int> fds, bool forward);
  ~OutputForwarder();
  /// The rank's output tail, after waiting up to `wait` for its end.
  std::string tail(int rank, std::chrono::milliseconds wait);

 private:
  void run();
  void drain_all(char* buf, size_t cap);
  // Returns true if it read something.
  bool read_some(int r, char* buf, size_t cap);

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

std::string last_lines(const std::string& s, int lines);
std::string join_ranks(const std::vector<int>& ranks);

}  // namespace ss::dist::pool_detail
