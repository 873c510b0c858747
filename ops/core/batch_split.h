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

/// Deterministic mode's canonical chunks (Note [Deterministic mode] in
/// interp/devices/lower/chunks.h): at most kMaxChunks in a batch, so that
/// folding their partials (each a param's size) stays a small part of a
/// step, and none under kMinChunk rows, a product too small for the
/// kernels.
inline constexpr int64_t kMaxChunks = 16;
inline constexpr int64_t kMinChunk = 8;

/// The chunk size for a batch of [n] rows: the least power of two C >=
/// kMinChunk with ceil(n / C) <= kMaxChunks.
inline int64_t chunk_size(int64_t n) {
  int64_t c = kMinChunk;
  while ((n + c - 1) / c > kMaxChunks) c *= 2;
  return c;
}

/// n rows over [parts] ranks in deterministic mode: whole chunks of
/// chunk_size(n), as evenly as possible, the first ranks one more (64
/// over 3 in chunks of 8: 24 24 16).
inline std::vector<int64_t> chunk_split(int64_t n, int parts) {
  const int64_t c = chunk_size(n);
  std::vector<int64_t> chunks = batch_split((n + c - 1) / c, parts), r;
  int64_t start = 0;
  for (int64_t k : chunks) {
    const int64_t end = start + k * c < n ? start + k * c : n;
    r.push_back(end - start);
    start = end;
  }
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
