#pragma once
// The one reader of safetensors headers, shared by checkpoints
// (safetensors.cpp) and datasets in memory or streamed
// (lib/loaders_stream.cpp). Note [Hostile headers]: a header is read by a
// parser made for its shape (an object of tensor entries and one
// `__metadata__` object of strings), not into a general JSON document, so
// that a hostile file costs time and memory linear in its size and never
// recursion: nesting is bounded (kMaxHeaderDepth), the header's length is
// bounded (kMaxHeaderBytes), and a repeated name is an error rather than a
// linear search per key (nlohmann's ordered_json took 17 s for 80,000
// metadata keys, and overflowed the stack on metadata nested 100,000 deep).

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ops/core/tensor.h"

namespace ss::data {

/// A header longer than this is refused before it is read. The format
/// allows 100 MB; a real checkpoint's header holds about 100 bytes a tensor,
/// so 16 MiB is 160,000 tensors, and what a file may make us hold stays
/// small.
constexpr uint64_t kMaxHeaderBytes = 16ull << 20;
/// JSON nested deeper than this (in values the reader skips) is refused.
constexpr int kMaxHeaderDepth = 64;

struct SafetensorsEntry {
  std::string name;
  types::DType dtype;
  ops::Shape shape;
  uint64_t begin = 0, end = 0;  // byte offsets into the data section
};

struct SafetensorsHeader {
  std::vector<SafetensorsEntry> entries;  // in the header's order
  std::map<std::string, std::string> metadata;
  uint64_t data_start = 0;  // where the data section starts in the file
  uint64_t data_size = 0;
};

/// Reads bytes [at, at + n) of the file into [dst], or throws.
using ReadAt = std::function<void(uint64_t at, void* dst, uint64_t n)>;

/// The header of a file of [file_size] bytes, read through [read_at] and
/// validated whole (every entry's dtype, shape and offsets against the
/// data section) before any tensor is allocated. Throws SafetensorsError
/// naming [path] and the problem.
SafetensorsHeader read_safetensors_header(const std::string& path,
                                          uint64_t file_size,
                                          const ReadAt& read_at);

/// The safetensors name of [d] ("F32", "BF16", "BOOL").
const char* safetensors_dtype_name(types::DType d);

}  // namespace ss::data
