// Note [Param buckets]
// With `shard params` a step used to send one all-gather per param read
// and one reduce-scatter per gradient: on the README MLP at batch 64, five
// collectives where data parallel sends two, each a round of messages
// that costs more than the bytes it carries. As FSDP's flat params, the
// params of one model (its own fields, not its sub-models') are cut into
// buckets of up to ops::kShardBucketBytes whole bytes (ops::shard_buckets:
// consecutive params of one dtype), the rule `ss explain` counts by too:
//  - the first read of a param on a line gathers its whole bucket in one
//    all-gather of the members' pieces laid end to end (gather_bucket);
//    the others' reads on that line take their copies from it
//    (RankContext::gather_param). Every copy is still a tape node of its
//    own, let go and gathered again alone (Note [Gathered copies]);
//  - in the backward pass a gather's VJP hands its whole cotangent to
//    PieceScatter instead of reduce-scattering it, and once the pass has
//    finished every member of a bucket (ops::LeafReady) the bucket's
//    cotangents go in one reduce-scatter on the communication thread,
//    while the pass goes on with the earlier layers.
// Both collectives lay a bucket out rank-major: rank j's part is every
// member's piece j, in the members' order, so the gathered buffer is the
// pieces' concatenation from each rank, and the reduce-scatter's piece r
// is every member's piece r. Every rank sends the buckets in the same
// order: the pass finishes the leaves in the same order on every rank
// (the same ops on every rank, ops::backward), a bucket goes when its last
// member does, and finish() sends what is left in the order the pass met
// the buckets.
#include "interp/devices/lower/param_buckets.h"

#include "dist/comm/communicator.h"
#include "interp/devices/lower/comm_thread.h"
#include "interp/devices/lower/lowering.h"
#include "ops/api.h"
#include "ops/core/batch_split.h"

namespace ss::devices::lower {

// The evaluator's values and objects, which the ranks' code works on.
using namespace ss::eval;

using ops::Tensor;

namespace {

// The model path [key] is a field of: "" or "l1." (its store prefix).
std::string owner_of(const std::string& key) {
  const size_t dot = key.rfind('.');
  return dot == std::string::npos ? "" : key.substr(0, dot + 1);
}

}  // namespace

std::vector<std::string> bucket_of(const ModelStore& s,
                                   const std::string& key) {
  const std::string owner = owner_of(key);
  std::vector<std::string> keys;
  std::vector<int64_t> bytes;
  std::vector<int> kind;
  for (const std::string& p : s.order) {
    auto w = s.whole.find(p);
    if (w == s.whole.end() || owner_of(p) != owner) continue;
    const types::DType dt = s.tensors.at(p).dtype();
    keys.push_back(p);
    bytes.push_back(ops::numel_of(w->second) * types::dtype_size(dt));
    kind.push_back(static_cast<int>(dt));
  }
  std::vector<int> bucket = ops::shard_buckets(bytes, kind);
  int mine = -1;
  for (size_t i = 0; i < keys.size(); ++i)
    if (keys[i] == key) mine = bucket[i];
  std::vector<std::string> out;
  for (size_t i = 0; i < keys.size(); ++i)
    if (bucket[i] == mine) out.push_back(keys[i]);
  return out;
}

std::vector<Tensor> gather_bucket(const std::vector<Tensor>& pieces,
                                  const std::vector<ops::Shape>& wholes,
                                  DeviceContext& d) {
  std::vector<Tensor> parts;
  int64_t width = 0;
  for (const Tensor& p : pieces) {
    parts.push_back(p.detach());
    width += p.numel();
  }
  Tensor all;
  {
    Waiting w(d);
    d.comm->all_gather(ops::concat(parts, 0), all, dist::Options{});
  }
  // [world, width]: row j is rank j's pieces end to end.
  Tensor rows = all.reshape({d.world, width});
  std::vector<Tensor> out;
  int64_t at = 0;
  for (size_t i = 0; i < pieces.size(); ++i) {
    const int64_t k = pieces[i].numel(), n = ops::numel_of(wholes[i]);
    Tensor flat = ops::slice(rows, 1, at, at + k);
    flat = flat.reshape({flat.numel()});
    if (n < flat.numel()) flat = ops::slice(flat, 0, 0, n);
    out.push_back(ops::reshape(flat, wholes[i]));
    at += k;
  }
  return out;
}

PieceScatter::~PieceScatter() {
  // A step that failed leaves no bucket still travelling behind it.
  for (auto& b : buckets_)
    if (b->sent.valid()) b->sent.wait();
}

PieceScatter::Bucket& PieceScatter::bucket_for(
    const std::shared_ptr<const BucketMembers>& members) {
  // A bucket read on two lines is two gathers of the same members: one
  // bucket here, its members' cotangents summed.
  auto it = member_of_.find(members->pieces.front());
  if (it != member_of_.end()) return *it->second.first;
  auto b = std::make_unique<Bucket>();
  b->members = members;
  b->flats.resize(members->pieces.size());
  b->leaf.assign(members->pieces.size(), -1);
  for (size_t m = 0; m < members->pieces.size(); ++m)
    member_of_[members->pieces[m]] = {b.get(), m};
  buckets_.push_back(std::move(b));
  return *buckets_.back();
}

void PieceScatter::add(const std::shared_ptr<const BucketMembers>& bucket,
                       const ops::Storage* piece,
                       const Tensor& flat) {
  Bucket& b = bucket_for(bucket);
  Tensor& f = b.flats[member_of_.at(piece).second];
  f = f.defined() ? ops::add(f, flat) : flat;
}

void PieceScatter::ready(size_t i, const Tensor& like, bool last) {
  auto it = member_of_.find(like.storage().get());
  if (it == member_of_.end()) return;  // never read: finish() gives zeros
  auto [b, m] = it->second;
  b->leaf[m] = static_cast<long>(i);
  if (++b->n_ready < b->members->pieces.size()) return;
  // The pass's last piece: nothing left to overlap, it goes from here. So
  // does a param over the bucket size, alone, as before buckets: sent from
  // the comm thread, its whole cotangent outlived the pass's next steps
  // (the memory benchmark's [3072 3072] params: 0.67x data parallel's
  // peak, not 0.53x); the overlap pays for small buckets' latency.
  const int64_t bytes = b->members->numel.front() * d_.world *
                        types::dtype_size(b->members->dtype);
  send(*b,
       last ||
           (b->members->pieces.size() == 1 && bytes > ops::kShardBucketBytes));
}

void PieceScatter::send(Bucket& b, bool here) {
  const BucketMembers& mb = *b.members;
  const int64_t world = d_.world;
  std::vector<Tensor> parts;
  for (size_t m = 0; m < mb.pieces.size(); ++m) {
    const int64_t k = mb.numel[m];
    parts.push_back(b.flats[m].defined()
                        ? b.flats[m]
                        : Tensor::zeros({world * k}, mb.dtype, d_.device()));
  }
  // One member: its cotangent is the buffer, no copy. Several: [world,
  // width], rank j's row every member's piece j.
  if (parts.size() == 1) {
    b.buf = parts[0];
  } else {
    for (size_t m = 0; m < parts.size(); ++m)
      parts[m] = parts[m].reshape({world, mb.numel[m]});
    Tensor rows = ops::concat(parts, 1);
    b.buf = rows.reshape({rows.numel()});
  }
  b.flats.clear();
  b.gone = true;
  dist::Communicator* comm = d_.comm;
  // The whole cotangents go as soon as their sum is in: held to finish(),
  // every bucket's would be alive at the pass's end (the memory
  // benchmark's three [3072 3072] f32 params: 108 MB).
  if (here) {
    Waiting w(d_);
    comm->reduce_scatter(b.buf, b.out, dist::ReduceOp::Sum, {});
    b.buf = Tensor();
    return;
  }
  // One bucket in flight at a time: the pass goes on while it travels,
  // but a worker holds at most one bucket's whole cotangents waiting.
  {
    Waiting w(d_);
    for (auto& other : buckets_)
      if (other.get() != &b && other->sent.valid()) other->sent.wait();
  }
  CommThread& ct = d_.async();
  const uint64_t tag = ct.next_tag();
  Bucket* bp = &b;
  b.sent = ct.submit([comm, bp, tag] {
    comm->reduce_scatter(
        bp->buf,
        bp->out,
        dist::ReduceOp::Sum,
        dist::Options::with_timeout(
            dist::default_collective_timeout(), tag, /*lane=*/1));
    bp->buf = Tensor();  // the main thread no longer reads it (gone)
  });
}

std::map<size_t, Tensor> PieceScatter::finish() {
  {
    Waiting w(d_);
    for (auto& b : buckets_)
      if (!b->gone) send(*b, /*here=*/true);
    for (auto& b : buckets_)
      if (b->sent.valid()) b->sent.get();  // rethrows a bucket's failure
    // Note [A recorded step's collectives] in dist/comm/nccl/nccl_comm.cpp
    d_.comm->join_lanes();
  }
  std::map<size_t, Tensor> out;
  for (auto& b : buckets_) {
    // After the sum, as the pass scales a leaf's gradient (Note [The seed
    // scales the leaves] in ops/autodiff/tape.cpp): the same rounding as
    // a reduce-scatter in the gather's own VJP.
    if (seed_ != 1.0)
      b->out = ops::mul(b->out, ops::scalar_like(seed_, b->out));
    int64_t at = 0;
    for (size_t m = 0; m < b->members->pieces.size(); ++m) {
      const int64_t k = b->members->numel[m];
      if (b->leaf[m] >= 0)
        out[size_t(b->leaf[m])] = b->members->pieces.size() == 1
                                      ? b->out
                                      : ops::slice(b->out, 0, at, at + k);
      at += k;
    }
    b->out = Tensor();
  }
  return out;
}

}  // namespace ss::devices::lower
