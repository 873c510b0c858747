#include "interp/eval/grad_allreduce.h"

#include "dist/comm/communicator.h"
#include "interp/eval/devices.h"
#include "ops/api.h"

namespace ss::eval {

GradAllReduce::GradAllReduce(DeviceContext& d, size_t n_grads)
    : d_(d), grads_(n_grads) {}

GradAllReduce::~GradAllReduce() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    closing_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void GradAllReduce::ready(size_t i, const ops::Tensor& g) {
  grads_[i] = g;
  auto& b = open_[static_cast<int>(g.dtype())];
  if (!b) b = std::make_unique<Bucket>();
  b->index.push_back(i);
  b->parts.push_back(ops::reshape(g, {-1}));
  b->bytes += g.nbytes();
  if (b->bytes >= d_.grad_bucket_bytes) launch(std::move(b), true);
}

void GradAllReduce::launch(std::unique_ptr<Bucket> b, bool on_thread) {
  b->buf =
      b->parts.size() == 1 ? b->parts[0].clone() : ops::concat(b->parts, 0);
  b->tag = next_tag_++;
  Bucket* raw = b.get();
  launched_.push_back(std::move(b));
  if (!on_thread) {
    run(*raw);
    return;
  }
  {
    std::lock_guard<std::mutex> lk(mu_);
    queue_.push_back(raw);
  }
  if (!thread_.joinable()) thread_ = std::thread([this] { serve(); });
  cv_.notify_all();
  ++overlapped_;
}

void GradAllReduce::run(Bucket& b) {
  d_.comm->all_reduce(
      b.buf,
      dist::ReduceOp::Sum,
      dist::Options::with_timeout(dist::default_collective_timeout(), b.tag));
}

void GradAllReduce::serve() {
  for (;;) {
    Bucket* b = nullptr;
    {
      std::unique_lock<std::mutex> lk(mu_);
      cv_.wait(lk, [&] { return closing_ || !queue_.empty(); });
      if (queue_.empty()) return;
      b = queue_.front();
      queue_.pop_front();
      busy_ = true;
    }
    try {
      if (!error_) run(*b);
    } catch (...) {
      std::lock_guard<std::mutex> lk(mu_);
      error_ = std::current_exception();
    }
    {
      std::lock_guard<std::mutex> lk(mu_);
      busy_ = false;
    }
    cv_.notify_all();
  }
}

std::vector<ops::Tensor> GradAllReduce::finish() {
  {
    Waiting w(d_);
    // What is left, one bucket per dtype in dtype order, here: every rank
    // finishes the same buckets in the same order.
    for (auto& [dt, b] : open_)
      if (b) launch(std::move(b), false);
    open_.clear();
    std::unique_lock<std::mutex> lk(mu_);
    cv_.wait(lk, [&] { return queue_.empty() && !busy_; });
    if (error_) std::rethrow_exception(error_);
  }
  for (const auto& b : launched_) {
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
