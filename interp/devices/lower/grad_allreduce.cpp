#include "interp/devices/lower/grad_allreduce.h"

#include <algorithm>
#include <functional>

#include "dist/comm/communicator.h"
#include "interp/devices/lower/comm_thread.h"
#include "interp/devices/lower/lowering.h"
#include "ops/api.h"

namespace ss::devices::lower {

// The evaluator's values and objects, which the ranks' code works on.
using namespace ss::eval;

namespace {

// Note [A bucket in slices]
// The direct all-reduce holds a buffer's size again in temporaries (its
// peers' blocks and its own reduced block: Note [Large direct all-reduces]
// in dist/comm/gloo_comm.cpp), and the last bucket is summed on the main
// thread while the communication thread may still sum the one before:
// with three [3072 3072] f32 gradients, 72 MiB of a data-parallel
// worker's peak above its params, gradients and AdamW state (two 36 MiB
// buckets' temporaries, found with an LD_PRELOAD malloc trace). So a
// bucket goes in slices of at most kSliceBytes, one collective each, with
// a tag each (taken in the same order on every rank). The sums are the
// same bits: every rank adds the ranks' values in rank order, value by
// value, whatever the slice.
constexpr size_t kSliceBytes = size_t{8} << 20;

// A multiple of [world] values, so that a slice's values divide among the
// ranks (the direct all-reduce's two exchanges then hold one slice, not
// world - 1 of them).
int64_t slice_values(const ops::Tensor& buf, int world) {
  const int64_t per =
      static_cast<int64_t>(kSliceBytes / types::dtype_size(buf.dtype()));
  return std::max<int64_t>(1, per - per % std::max(world, 1));
}

int64_t slice_count(const ops::Tensor& buf, int world) {
  const int64_t per = slice_values(buf, world);
  return std::max<int64_t>(1, (buf.numel() + per - 1) / per);
}

// Sums [buf] across the ranks slice by slice, slice k with [options](k).
void all_reduce_in_slices(
    dist::Communicator& comm,
    ops::Tensor& buf,
    int world,
    const std::function<dist::Options(int64_t)>& options) {
  const int64_t n = buf.numel(), per = slice_values(buf, world);
  if (n <= per) return comm.all_reduce(buf, dist::ReduceOp::Sum, options(0));
  const size_t size = types::dtype_size(buf.dtype());
  std::shared_ptr<void> keep = buf.storage();
  char* base = static_cast<char*>(buf.raw());
  for (int64_t at = 0, k = 0; at < n; at += per, ++k) {
    ops::Tensor part = ops::Tensor::external(base + at * size,
                                             {std::min(per, n - at)},
                                             buf.dtype(),
                                             keep,
                                             buf.device());
    comm.all_reduce(part, dist::ReduceOp::Sum, options(k));
  }
}

}  // namespace

GradAllReduce::GradAllReduce(DeviceContext& d, size_t n_grads)
    : d_(d), shapes_(n_grads) {}

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
  // One gradient that nothing else holds is summed in place: a bucket
  // costs no copy of it (Note [Gradient buckets' memory]).
  b->buf = parts.size() == 1 ? parts[0] : ops::concat(parts, 0);
  b->parts.clear();
  parts.clear();
  // (The gradient ready() is being handed is the one other handle that may
  // remain: the pass drops it once told, ops::LeafReady.)
  if (b->buf.storage().use_count() > 2) b->buf = b->buf.clone();
  return b;
}

// Note [Gradient buckets' memory]
// A bucket holds its gradients once: ready() keeps a gradient's shape, not
// the gradient, so the pass's tensor goes once it is in the bucket's
// buffer (or is the buffer: a bucket of one gradient the pass no longer
// holds), and finish() hands out views of a one-gradient bucket and frees
// each bucket's buffer as soon as its slices are cut. Keeping them, data
// parallel's benchmark (three [3072 3072] f32 params) held each gradient
// three times at the end of the pass.
void GradAllReduce::ready(size_t i, const ops::Tensor& g) {
  shapes_[i] = g.shape();
  const bool last = ++n_ready_ == shapes_.size();
  auto& b = open_[static_cast<int>(g.dtype())];
  if (!b) b = std::make_unique<Bucket>();
  b->index.push_back(i);
  b->parts.push_back(ops::reshape(g, {-1}));
  b->bytes += g.nbytes();
  // The pass's last gradient: finish() sends what is left, from here.
  if (b->bytes < d_.grad_bucket_bytes || last) return;
  done_.push_back(close(std::move(b)));
  CommThread& ct = d_.async();
  ops::Tensor buf = done_.back()->buf;
  const int world = d_.world;
  std::vector<uint64_t> tags(slice_count(buf, world));
  for (uint64_t& t : tags) t = ct.next_tag();
  dist::Communicator* comm = d_.comm;
  sent_.push_back(ct.submit([comm, buf, world, tags]() mutable {
    all_reduce_in_slices(*comm, buf, world, [&tags](int64_t k) {
      return dist::Options::with_timeout(
          dist::default_collective_timeout(), tags[k], /*lane=*/1);
    });
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
      all_reduce_in_slices(*d_.comm, done_.back()->buf, d_.world, [](int64_t) {
        return dist::Options{};
      });
    }
    open_.clear();
    for (auto& f : sent_) f.get();  // rethrows a bucket's failure
    // Inside a recording, the buckets' sums were only queued (Note [A
    // recorded step's collectives] in dist/comm/nccl/nccl_comm.cpp).
    d_.comm->join_lanes();
  }
  std::vector<ops::Tensor> grads(shapes_.size());
  for (auto& b : done_) {
    int64_t at = 0;
    for (size_t i : b->index) {
      const int64_t n = ops::numel_of(shapes_[i]);
      grads[i] =
          b->index.size() == 1
              ? b->buf.reshape(shapes_[i])
              : ops::reshape(ops::slice(b->buf, 0, at, at + n), shapes_[i]);
      at += n;
    }
    b->buf = ops::Tensor();
  }
  return grads;
}

}  // namespace ss::devices::lower
