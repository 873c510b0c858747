#pragma once
// The `run` fuzz target's generator: input bytes read as choices that
// write a small ShapeScript program calling one builtin of the op table
// with hostile arguments (Note [A runtime fuzzer's programs]).

#include <cstddef>
#include <cstdint>
#include <string>

namespace ss::fuzz {

/// The program [data] chooses: a fixed prelude of values (tensors with an
/// empty axis, NaN and infinities, every dtype), then one call of a
/// builtin of ops::all_ops() with arguments that fit its parameters'
/// kinds, printed, formatted or run alone. Deterministic; any bytes give
/// a program (missing bytes read as 0).
std::string run_program_text(const uint8_t* data, size_t size);

/// The name of the builtin [data] calls ("" when it formats a value
/// instead): the random driver counts outcomes by builtin.
std::string run_program_builtin(const uint8_t* data, size_t size);

}  // namespace ss::fuzz
