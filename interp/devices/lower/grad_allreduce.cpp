#include "interp/devices/lower/grad_allreduce.h"

#include <algorithm>

#include "dist/comm/communicator.h"
#include "interp/devices/lower/comm_thread.h"
#include "interp/devices/lower/lowering.h"
#include "ops/api.h"

namespace ss::eval {

GradAllReduce::GradAllReduce(DeviceContext& d, size_t n_grads)
    : d_(d), grads_(n_grads) {}

GradAllReduce::~GradAllReduce() {
  // A step that failed leaves no bucket still travelling behind it.
  for (auto& f : sent_) f.wait();
}

std::unique_ptr<GradAllReduce::Bucket> GradAllReduce::close(
    std::unique_ptr<Bucket> b) {
  // In the params' order, not the pass's: a rank whose pass finished them
  // in another order (one with an empty share of the batch) lays the
  // bucket out as the others do, so the sum adds like to like.
  std::vector<size_t> order(b->index.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    return b->index[x] < b->index[y];
  });
  std::vector<size_t> index;
  std::vector<ops::Tensor> parts;
  for (size_t k : order) {
    index.push_back(b->index[k]);
    parts.push_back(b->parts[k]);
  }
  b->index = std::move(index);
  b->buf = parts.size() == 1 ? parts[0].clone() : ops::concat(parts, 0);
  b->parts.clear();
  return b;
}

void GradAllReduce::ready(size_t i, const ops::Tensor& g) {
  grads_[i] = g;
  const bool last = ++n_ready_ == grads_.size();
  auto& b = open_[static_cast<int>(g.dtype())];
  if (!b) b = std::make_unique<Bucket>();
  b->index.push_back(i);
  b->parts.push_back(ops::reshape(g, {-1}));
  b->bytes += g.nbytes();
  // The pass's last gradient: finish() sends what is left, from here.
  if (b->bytes < d_.grad_bucket_bytes || last) return;
  done_.push_back(close(std::move(b)));
  CommThread& ct = d_.async();
  uint64_t tag = ct.next_tag();
  ops::Tensor buf = done_.back()->buf;
  dist::Communicator* comm = d_.comm;
  sent_.push_back(ct.submit([comm, buf, tag]() mutable {
    comm->all_reduce(buf,
                     dist::ReduceOp::Sum,
                     dist::Options::with_timeout(
                         dist::default_collective_timeout(), tag, /*lane=*/1));
  }));
}

std::vector<ops::Tensor> GradAllReduce::finish() {
  {
    Waiting w(d_);
    // What is left, one bucket per dtype in dtype order, here: every rank
    // sends the same buckets in the same order.
    for (auto& [dt, b] : open_) {
      if (!b) continue;
      done_.push_back(close(std::move(b)));
      d_.comm->all_reduce(done_.back()->buf, dist::ReduceOp::Sum, {});
    }
    open_.clear();
    for (auto& f : sent_) f.get();  // rethrows a bucket's failure
  }
  for (const auto& b : done_) {
    int64_t at = 0;
    for (size_t i : b->index) {
      int64_t n = grads_[i].numel();
      grads_[i] =
          ops::reshape(ops::slice(b->buf, 0, at, at + n), grads_[i].shape());
      at += n;
    }
  }
  return std::move(grads_);
}

}  // namespace ss::eval
