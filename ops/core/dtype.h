#pragma once
// Tensor element types and their promotion (torch.result_type's rules).

#include <optional>
#include <string_view>

namespace ss::types {

enum class DType { F32, F64, BF16, F16, I32, I64, Bool };

const char* dtype_name(DType d);
std::optional<DType> dtype_from_name(std::string_view name);
bool is_float(DType d);
bool is_int(DType d);  // i32, i64 (not bool)
/// Bytes per element.
int dtype_size(DType d);
/// The dtype of a binary op on two tensors: bool < ints < floats; within a
/// category the wider wins; bf16 with f16 gives f32.
DType promote(DType a, DType b);

}  // namespace ss::types
