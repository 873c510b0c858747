#pragma once
// The stand-in GPU's bytes (Note [GPU bytes the host cannot read] in
// guarded_arena.cpp): one mapping, readable only while a primitive or a
// copy of the stand-in runs, so a host read of a GPU's bytes anywhere else
// faults, as dereferencing a device pointer does on a real GPU.

#include <cstddef>

namespace stand_in {

/// Bytes from the arena (64-byte aligned), and back to it.
void* arena_allocate(size_t nbytes);
void arena_release(void* p, size_t nbytes);

/// While one lives on any thread, the arena is readable and writable.
class Access {
 public:
  Access();
  ~Access();
  Access(const Access&) = delete;
  Access& operator=(const Access&) = delete;
};

}  // namespace stand_in
