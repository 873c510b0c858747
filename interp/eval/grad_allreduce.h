#pragma once
// value_and_grad's gradient all-reduce on several devices (devices.md item
// 5): every rank sums the params' gradients across the ranks, so each
// applies the same update. Gradients go, in the order the backward pass
// finishes them, into one bucket per dtype; a bucket that reaches
// DeviceContext::grad_bucket_bytes is all-reduced on a communication thread
// while the pass goes on (its own collective tag, so it may run beside the
// pass's own collectives), and the rest when the pass ends — one
// collective per dtype when the gradients fit one bucket (the README MLP's
// 813,056 bytes). As DDP's buckets, this pays when the pass has work left
// after the first buckets fill: the later layers' gradients travel while
// the earlier layers' are computed.

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "ops/core/tensor.h"

namespace ss::eval {

struct DeviceContext;

class GradAllReduce {
 public:
  GradAllReduce(DeviceContext& d, size_t n_grads);
  /// Joins the communication thread (after an error too).
  ~GradAllReduce();
  GradAllReduce(const GradAllReduce&) = delete;
  GradAllReduce& operator=(const GradAllReduce&) = delete;

  /// Gradient [i] is final (ops::backward's LeafReady).
  void ready(size_t i, const ops::Tensor& g);
  /// Sends what is left, waits for every bucket and returns the summed
  /// gradients in their order. Throws what a collective threw.
  std::vector<ops::Tensor> finish();

  /// Buckets all-reduced so far on the communication thread (tests).
  int overlapped() const { return overlapped_; }

 private:
  struct Bucket {
    std::vector<size_t> index;
    std::vector<ops::Tensor> parts;  // flattened, in order
    size_t bytes = 0;
    ops::Tensor buf;
    uint64_t tag = 0;
  };
  void launch(std::unique_ptr<Bucket> b, bool on_thread);
  void run(Bucket& b);
  void serve();

  DeviceContext& d_;
  std::vector<ops::Tensor> grads_;
  std::map<int, std::unique_ptr<Bucket>> open_;  // by dtype
  std::vector<std::unique_ptr<Bucket>> launched_;
  uint64_t next_tag_ = 1;
  int overlapped_ = 0;
  // The communication thread, started by the first full bucket.
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Bucket*> queue_;
  bool closing_ = false;
  bool busy_ = false;
  std::exception_ptr error_;
};

}  // namespace ss::eval
