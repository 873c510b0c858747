#pragma once
// Mid-sized tensor buffers kept for reuse in a host language's process
// (Note [Mid blocks] in mid_blocks.cpp).

#include <cstddef>

namespace ss::ops {

/// Blocks from this many bytes up to kBigBlockBytes go through the mid
/// cache in a host language's process.
constexpr size_t kMidBlockBytes = size_t{64} << 10;

/// [bytes] (a multiple of 64) 64-byte aligned: a cached block of exactly
/// that size, or a new one. nullptr when the system has none.
void* mid_alloc(size_t bytes);
/// Gives back a block from mid_alloc([bytes]): kept for the next
/// mid_alloc of its size, or freed when the cache holds enough.
void mid_free(void* p, size_t bytes);
/// The bytes cached now.
size_t mid_blocks_cached();

}  // namespace ss::ops
