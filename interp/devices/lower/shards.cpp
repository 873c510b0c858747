// Note [Sharded params]
// With `shard params` (devices.md item 9) a worker's model store holds, for
// each param, piece r of it: the param flattened, padded with zeros to a
// multiple of N values and cut into N equal pieces (ModelStore::whole keeps
// the param's shape). The pieces are made where a store arrives from the
// controller (the wire's arrival hook, worker/program_server.cpp), so a
// model made in main, or loaded from a checkpoint, is cut the same way.
//
// Reading a param in a worker fn (`x @ m.w1`) gathers it: an all-gather of
// the pieces, the padding dropped, reshaped (RankContext::gather_param),
// with the other params of its bucket (Note [Param buckets]).
// The gather is recorded on the tape; its VJP reduce-scatters the whole
// cotangent into the same pieces (value_and_grad's pass: with its
// bucket's), which sums every rank's part of the
// batch and cuts it, so value_and_grad's leaves are the pieces themselves
// and no gradient all-reduce follows (RankContext::gradients). The
// padding's gradient is zero (the VJP pads with zeros), so AdamW and SGD,
// elementwise, leave the padding at zero: each rank updates only its
// pieces, and its optimizer state is pieces too. A gradient's norm sums the
// squares of the pieces and all-reduces that one number.
//
// The whole param exists on a rank only while the program uses it: its
// bytes are let go after the read's use in the forward pass and gathered
// again for the backward pass, though the tape holds tensors over them
// (Note [Gathered copies] in gathered_copies.cpp).
//
// The controller sees whole params: a fetch (reading m.w1 there) asks
// every worker, each gathers every sharded param and rank 0 answers
// (whole_store); `save` fetches one param at a time the same way
// (whole_param, Note [A streaming save] in interp/builtins/checkpoint.cpp),
// so it writes the file one device would write, and a checkpoint loaded
// in the controller is sent whole and cut again.
#include "interp/devices/lower/shards.h"

#include <cstring>

#include "dist/comm/communicator.h"
#include "interp/devices/lower/gathered_copies.h"
#include "interp/devices/lower/lowering.h"
#include "interp/devices/lower/param_buckets.h"
#include "ops/api.h"
#include "ops/autodiff/tape.h"
#include "ops/core/batch_split.h"

namespace ss::devices::lower {

// The evaluator's values and objects, which the ranks' code works on.
using namespace ss::eval;

using ops::Tensor;

Tensor piece_of(const Tensor& whole, int rank, int world) {
  const int64_t n = whole.numel(), k = ops::shard_piece_numel(n, world);
  Tensor flat = ops::reshape(whole.detach(), {n});
  const int64_t start = std::min(n, rank * k), end = std::min(n, start + k);
  Tensor piece = ops::slice(flat, 0, start, end);
  if (end - start < k) piece = ops::pad(piece, 0, 0, k - (end - start));
  return piece.clone();
}

namespace {

// The whole flat, padded param from every rank's piece.
Tensor gathered(const Tensor& piece, DeviceContext& d) {
  Tensor out;
  Waiting w(d);
  d.comm->all_gather(piece.detach(), out, dist::Options{});
  return out;
}

// This rank's piece of the sum of every rank's [flat] (padded).
Tensor scattered(const Tensor& flat, DeviceContext& d) {
  Tensor out;
  Waiting w(d);
  d.comm->reduce_scatter(flat, out, dist::ReduceOp::Sum, dist::Options{});
  return out;
}

// The whole param from the gathered flat pieces. Without padding the
// gathered buffer is the param (a reshape, no copy): a gather costs one
// param's memory, not two.
Tensor unpadded(const Tensor& flat, const ops::Shape& whole) {
  const int64_t n = ops::numel_of(whole);
  if (n == flat.numel()) return flat.reshape(whole);
  return ops::reshape(ops::slice(flat, 0, 0, n), whole);
}

}  // namespace

namespace {

// The gathered bytes of [piece]'s param again, into [bytes] (the storage
// of a copy whose bytes were let go: Note [Gathered copies]).
std::function<void(void*)> regather(const Tensor& piece,
                                    const ops::Shape& whole,
                                    DeviceContext& d) {
  DeviceContext* dp = &d;
  return [p = piece.detach(), whole, dp](void* bytes) {
    const int64_t n = ops::numel_of(whole), k = p.numel();
    if (n == k * dp->world) {  // straight into the bytes
      Tensor out = Tensor::external(bytes, {n}, p.dtype(), nullptr, p.device());
      Waiting w(*dp);
      dp->comm->all_gather(p, out, dist::Options{});
      return;
    }
    Tensor flat = gathered(p, *dp);
    Tensor::external(bytes, {n}, p.dtype(), nullptr, p.device())
        .copy_from(ops::slice(flat, 0, 0, n));
  };
}

}  // namespace

Tensor gather_param(const Tensor& piece,
                    const ops::Shape& whole,
                    DeviceContext& d,
                    GatheredCopies* copies,
                    Tensor gathered_whole,
                    std::shared_ptr<const BucketMembers> bucket) {
  Tensor out = gathered_whole.defined() ? gathered_whole
                                        : unpadded(gathered(piece, d), whole);
  if (!types::is_float(piece.dtype())) return ops::mark_replicated(out);
  DeviceContext* dp = &d;
  const int64_t k = piece.numel();
  if (!bucket) {  // a bucket of its own
    auto one = std::make_shared<BucketMembers>();
    one->pieces = {piece.storage().get()};
    one->numel = {k};
    one->dtype = piece.dtype();
    bucket = std::move(one);
  }
  const ops::Storage* key = piece.storage().get();
  // The VJP is the copy's last use in the backward pass: it lets it go
  // (Note [Gathered copies]).
  std::weak_ptr<ops::Storage> bytes = out.storage();
  // The gathered param is the same on every rank; its cotangent is each
  // rank's part of the batch's gradient (Note [Sharded params]).
  out = ops::mark_replicated(ops::record(
      "all_gather", out, {piece}, [dp, k, bytes, bucket, key](const Tensor& g) {
        if (auto s = bytes.lock()) s->let_go();
        Tensor flat = g.reshape({g.numel()});
        if (g.numel() < k * dp->world)
          flat = ops::pad(flat, 0, 0, k * dp->world - g.numel());
        if (dp->whole_batches() || dp->deterministic)
          // `split H`: every rank has the whole batch, and the cotangent
          // of a whole value is the whole gradient on every rank; so it
          // is in deterministic mode, whose chunks fold a whole value's
          // cotangent across the ranks (Note [Chunked sites]).
          return std::vector<Tensor>{
              ops::slice(flat, 0, dp->rank * k, (dp->rank + 1) * k)};
        if (dp->scatter) {
          // value_and_grad's pass: reduce-scattered with its bucket (Note
          // [Param buckets]); a replicated cotangent too, whose sum over
          // the ranks is world times it, as below.
          dp->scatter->add(bucket, key, flat);
          return std::vector<Tensor>{Tensor()};
        }
        if (ops::cotangent_replicated())
          // Every rank holds the same cotangent: their sum's piece is
          // world times this rank's piece of it, with no message.
          return std::vector<Tensor>{
              ops::mul(ops::slice(flat, 0, dp->rank * k, (dp->rank + 1) * k),
                       ops::scalar_like(double(dp->world), g))};
        return std::vector<Tensor>{scattered(flat, *dp)};
      }));
  if (copies && ops::needs_grad(out))
    copies->add(out, regather(piece, whole, d));
  return out;
}

Tensor whole_param(const Tensor& piece,
                   const ops::Shape& whole,
                   DeviceContext& d) {
  Tensor flat = gathered(piece, d);
  if (ops::numel_of(whole) == flat.numel()) return flat.reshape(whole);
  // A view of the values before the padding, not a copy: a streaming save
  // holds one gathered param at a time, once.
  std::shared_ptr<void> keep = flat.storage();
  return Tensor::external(
      flat.raw(), whole, flat.dtype(), std::move(keep), flat.device());
}

void shard_store(ModelStore& s, int rank, int world) {
  for (const std::string& p : s.order) {
    auto b = s.is_buffer.find(p);
    if ((b != s.is_buffer.end() && b->second) || s.whole.count(p) ||
        s.heads.count(p))  // split by heads instead (heads.h)
      continue;
    Tensor& t = s.tensors.at(p);
    s.whole[p] = t.shape();
    t = piece_of(t, rank, world);
  }
}

void shard_optim(OptimState& o, int rank, int world) {
  if (!o.model) return;
  for (auto& [path, st] : o.state) {
    auto w = o.model->whole.find(path);
    if (w == o.model->whole.end()) continue;
    for (auto& [name, t] : st)
      if (t.defined() && t.shape() == w->second) t = piece_of(t, rank, world);
  }
}

std::shared_ptr<const ModelStore> whole_store(const ModelStore& s,
                                              DeviceContext& d) {
  if (s.whole.empty())
    return std::shared_ptr<const ModelStore>(
        std::shared_ptr<const ModelStore>{}, &s);
  auto out = std::make_shared<ModelStore>(s);
  out->whole.clear();
  for (const std::string& p : s.order)
    if (auto w = s.whole.find(p); w != s.whole.end())
      out->tensors[p] = unpadded(gathered(s.tensors.at(p), d), w->second);
  return out;
}

std::shared_ptr<const OptimState> whole_optim(const OptimState& o,
                                              DeviceContext& d) {
  if (!o.model || o.model->whole.empty())
    return std::shared_ptr<const OptimState>(
        std::shared_ptr<const OptimState>{}, &o);
  auto out = std::make_shared<OptimState>(o);
  // Every rank walks the same paths in the same order (std::map).
  for (auto& [path, st] : out->state) {
    auto w = o.model->whole.find(path);
    if (w == o.model->whole.end()) continue;
    for (auto& [name, t] : st)
      if (t.defined()) t = unpadded(gathered(t, d), w->second);
  }
  return out;
}

}  // namespace ss::devices::lower
