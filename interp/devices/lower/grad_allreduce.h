#pragma once
// value_and_grad's gradient all-reduce on several devices (devices.md item
// 5): every rank sums the params' gradients across the ranks, so each
// applies the same update. Gradients go, in the order the backward pass
// finishes them, into one bucket per dtype; a bucket that reaches
// DeviceContext::grad_bucket_bytes is all-reduced on the communication
// thread (comm_thread.h) while the pass goes on, and the rest when the pass
// ends — one collective per dtype when the gradients fit one bucket (the
// README MLP's 813,056 bytes). As DDP's buckets, this pays when the pass has
// work left after the first buckets fill: the later layers' gradients
// travel while the earlier layers' are computed. A bucket that fills with
// the pass's last gradient has nothing left to overlap: it goes from the
// main thread in finish(), without a hand-off (on two busy cores the
// hand-off cost 10% of a step whose gradients were one 3.2 MB bucket).
// A bucket is laid out in the params' order, whatever order the pass
// finished them in, so that ranks add like to like; which bucket a
// gradient joins still follows the pass's order, so every rank's pass
// must finish them in the same order (a share with no rows runs the same
// ops: devices.cpp's cross_entropy/mse lowering).

#include <future>
#include <map>
#include <memory>
#include <vector>

#include "ops/core/tensor.h"

namespace ss::devices::lower {

struct DeviceContext;

class GradAllReduce {
 public:
  GradAllReduce(DeviceContext& d, size_t n_grads);
  /// Waits for the buckets it sent (after an error too).
  ~GradAllReduce();
  GradAllReduce(const GradAllReduce&) = delete;
  GradAllReduce& operator=(const GradAllReduce&) = delete;

  /// Gradient [i] is final (ops::backward's LeafReady).
  void ready(size_t i, const ops::Tensor& g);
  /// Sends what is left, waits for every bucket and returns the summed
  /// gradients in their order. Throws what a collective threw.
  std::vector<ops::Tensor> finish();

  /// Buckets sent while the pass went on (tests).
  int overlapped() const { return static_cast<int>(sent_.size()); }

 private:
  struct Bucket {
    std::vector<size_t> index;
    std::vector<ops::Tensor> parts;  // flattened, in order
    size_t bytes = 0;
    ops::Tensor buf;
  };
  std::unique_ptr<Bucket> close(std::unique_ptr<Bucket> b);

  DeviceContext& d_;
  std::vector<ops::Shape> shapes_;  // each gradient's, as it is ready
  std::map<int, std::unique_ptr<Bucket>> open_;  // by dtype
  std::vector<std::unique_ptr<Bucket>> done_;
  std::vector<std::shared_future<void>> sent_;
  size_t n_ready_ = 0;
};

}  // namespace ss::devices::lower
