#pragma once
// Big tensor buffers straight from the system, kept for reuse by exact
// size (Note [Big blocks] in big_blocks.cpp).

#include <cstddef>

namespace ss::ops {

/// Blocks of at least this many bytes come from big_alloc.
constexpr size_t kBigBlockBytes = size_t{8} << 20;

/// [bytes] (a multiple of 64) page-aligned: a cached block of the same
/// size, or a new mapping. nullptr when the system has none.
void* big_alloc(size_t bytes);
/// Gives back a block from big_alloc([bytes]): cached for the next
/// big_alloc of its size, or unmapped when the cache is full.
void big_free(void* p, size_t bytes);
/// Unmaps every cached block; the bytes they held. The most the tensors
/// have held, which bounds a miss (Note [Big blocks]), starts again from
/// what they hold now.
size_t big_blocks_release();
/// The bytes cached now.
size_t big_blocks_cached();

}  // namespace ss::ops
