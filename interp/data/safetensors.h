#pragma once
// A small safetensors reader and writer (the format of Hugging Face's
// safetensors, as written by safetensors.torch.save_file and numpy):
//
//   u64 little-endian N | N bytes of JSON header | data
//
// The header maps each tensor's name to {"dtype", "shape", "data_offsets"}
// (offsets relative to the start of the data section) and may hold a
// "__metadata__" object of string -> string. Independent of the interpreter:
// checkpoints (interp/builtins/checkpoint.cpp) are built on it.

#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "interp/data/safetensors_header.h"
#include "ops/core/tensor.h"

namespace ss::eval {

/// A malformed, truncated or unreadable file, or a write that failed; the
/// message names the file and the problem.
struct SafetensorsError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct SafetensorsFile {
  /// In header order (the order the data is laid out on write).
  std::vector<std::pair<std::string, ops::Tensor>> tensors;
  std::map<std::string, std::string> metadata;
};

/// Writes [file] to [path] atomically: to a new `path.tmp.<pid>.XXXXXX`
/// (mkstemp), fsync'd, then renamed over [path]; the temporary is removed
/// on any error, and [path] is left as it was. [path] must be a regular
/// file or missing (Note [Safe replace]). Tensors must be defined, on the CPU,
/// with distinct names other than "__metadata__".
void write_safetensors(const std::string& path, const SafetensorsFile& file);

/// Reads [path], validating the whole header against the file's size before
/// allocating any tensor. Dtypes: F32 F64 BF16 F16 I32 I64 BOOL.
SafetensorsFile read_safetensors(const std::string& path);

}  // namespace ss::eval
