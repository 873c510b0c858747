// How a batch of n examples is shared over ranks, and how `shard params`
// cuts a param: one rule for the checker (`ss explain`'s figures) and the
// runtime (dist/, the evaluator).
#pragma once

#include <cstdint>
#include <vector>

namespace ss::ops {

/// n rows over `parts` ranks as evenly as possible, the first ranks one
/// more (64 over 3: 22 21 21).
inline std::vector<int64_t> batch_split(int64_t n, int parts) {
  std::vector<int64_t> r(parts > 0 ? parts : 0);
  for (int i = 0; i < parts; ++i) r[i] = n / parts + (i < n % parts ? 1 : 0);
  return r;
}

/// The length of each of [parts] equal pieces of a param of [numel] values
/// under `shard params`: numel rounded up to a multiple of parts, over
/// parts (the last piece padded; Note [Sharded params]).
inline int64_t shard_piece_numel(int64_t numel, int parts) {
  return (numel + parts - 1) / parts;
}

/// `shard params`' buckets (Note [Param buckets] in
/// interp/devices/lower/param_buckets.cpp): the params of one model, its
/// own fields in declaration order, that are gathered in one all-gather and
/// reduce-scattered in one reduce-scatter. Consecutive params of one
/// [kind] (their dtype) share a bucket while its whole bytes stay within
/// kShardBucketBytes; a param larger than that is a bucket alone. [bytes]:
/// each param's whole bytes. Returns each param's bucket number.
inline constexpr int64_t kShardBucketBytes = int64_t{1} << 20;
inline std::vector<int> shard_buckets(const std::vector<int64_t>& bytes,
                                      const std::vector<int>& kind) {
  std::vector<int> out(bytes.size());
  int bucket = -1;
  int64_t held = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (bucket < 0 || kind[i] != kind[i - 1] ||
        held + bytes[i] > kShardBucketBytes) {
      ++bucket;
      held = 0;
    }
    held += bytes[i];
    out[i] = bucket;
  }
  return out;
}

}  // namespace ss::ops
