#pragma once
// `shard params`' buckets (devices.md item 9; FSDP's flat params): the
// params of one model that are gathered in one all-gather where the first
// of them is read, and whose gradients are reduce-scattered in one
// reduce-scatter as soon as the backward pass has finished them all. See
// Note [Param buckets] in param_buckets.cpp.

#include <future>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "interp/eval/objects.h"
#include "ops/core/tensor.h"

namespace ss::devices::lower {

struct DeviceContext;

/// The store keys of the bucket that sharded param [key] of [s] belongs
/// to: its model's own sharded params of that bucket (ops::shard_buckets),
/// in declaration order.
std::vector<std::string> bucket_of(const eval::ModelStore& s,
                                   const std::string& key);

/// A bucket as the backward pass meets it: each member's piece (by its
/// storage: the leaf value_and_grad made of it) and its piece's length.
struct BucketMembers {
  std::vector<const ops::Storage*> pieces;
  std::vector<int64_t> numel;
  types::DType dtype = types::DType::F32;
};

/// The whole params of one bucket from one all-gather of this rank's
/// [pieces] (of whole shapes [wholes]); not recorded on the tape.
std::vector<ops::Tensor> gather_bucket(const std::vector<ops::Tensor>& pieces,
                                       const std::vector<ops::Shape>& wholes,
                                       DeviceContext& d);

/// value_and_grad's reduce-scatters of the sharded params' gradients: a
/// gather's VJP hands over its whole cotangent (add), and a bucket whose
/// members the pass has all finished (ready) is reduce-scattered on the
/// communication thread while the pass goes on.
class PieceScatter {
 public:
  /// [seed]: the pass's (ops::backward), by which finish() scales the
  /// sums as the pass scales a leaf's gradient.
  PieceScatter(DeviceContext& d, double seed) : d_(d), seed_(seed) {}
  /// Waits for the buckets it sent (after an error too).
  ~PieceScatter();
  PieceScatter(const PieceScatter&) = delete;
  PieceScatter& operator=(const PieceScatter&) = delete;

  /// From the gather of [piece], a member of [bucket]: [flat], the whole
  /// cotangent (padded), this rank's part of the batch's.
  void add(const std::shared_ptr<const BucketMembers>& bucket,
           const ops::Storage* piece,
           const ops::Tensor& flat);
  /// Leaf [i], the piece of [like], is final (ops::LeafReady); [last]: the
  /// pass's last piece, whose bucket goes from here.
  void ready(size_t i, const ops::Tensor& like, bool last);
  /// Sends the buckets left (members that were not leaves count as zero),
  /// waits for all, and returns each ready leaf's piece of the gradients'
  /// sum over the ranks. Throws what a collective threw.
  std::map<size_t, ops::Tensor> finish();

 private:
  struct Bucket {
    std::shared_ptr<const BucketMembers> members;
    std::vector<ops::Tensor> flats;  // by member, summed over its reads
    std::vector<long> leaf;          // by member: its leaf's index, or -1
    size_t n_ready = 0;
    bool gone = false;  // sent (its buffer freed once the sum is in)
    ops::Tensor buf, out;
    std::shared_future<void> sent;
  };
  Bucket& bucket_for(const std::shared_ptr<const BucketMembers>& members);
  void send(Bucket& b, bool here);

  DeviceContext& d_;
  double seed_;
  // In the order the pass first met them: the same on every rank.
  std::vector<std::unique_ptr<Bucket>> buckets_;
  std::map<const ops::Storage*, std::pair<Bucket*, size_t>> member_of_;
};

}  // namespace ss::devices::lower
