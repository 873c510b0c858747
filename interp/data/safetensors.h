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

#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "interp/data/safetensors_header.h"
#include "ops/core/tensor.h"

namespace ss::data {

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

/// One tensor of a file written piece by piece: its header entry, and
/// [bytes], called once, in order, when its data is due (a fetch from the
/// workers, Note [A streaming save] in interp/builtins/checkpoint.cpp). The
/// tensor it gives must have [dtype] and [shape]; it is let go once
/// written.
struct SafetensorsPiece {
  std::string name;
  types::DType dtype = types::DType::F32;
  ops::Shape shape;
  std::function<ops::Tensor()> bytes;
};

/// write_safetensors, with the header written first from the pieces'
/// entries and each piece's data then asked for and written in turn: the
/// file is never whole in memory. The same checks and the same atomic
/// replace; a piece that fails removes the temporary.
void write_safetensors_streamed(
    const std::string& path,
    const std::map<std::string, std::string>& metadata,
    const std::vector<SafetensorsPiece>& pieces);

/// Reads [path], validating the whole header against the file's size before
/// allocating any tensor. Dtypes: F32 F64 BF16 F16 I32 I64 BOOL.
SafetensorsFile read_safetensors(const std::string& path);

}  // namespace ss::data
