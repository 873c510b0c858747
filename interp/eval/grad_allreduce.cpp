#include "interp/eval/grad_allreduce.h"

#include "dist/comm/communicator.h"
#include "interp/eval/comm_thread.h"
#include "interp/eval/devices.h"
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
  b->buf =
      b->parts.size() == 1 ? b->parts[0].clone() : ops::concat(b->parts, 0);
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
