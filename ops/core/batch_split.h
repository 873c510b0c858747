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

}  // namespace ss::ops
