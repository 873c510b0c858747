#pragma once
// How numpy and torch spell each ShapeScript dtype, for the help lines of
// a wrong dtype (Note [No silent dtype conversion] in dataset.cpp): a
// dataset's array and a checkpoint's tensor say how to convert the file.

#include "ops/core/type.h"

namespace ss::data {

struct DTypeSpelling {
  types::DType d;
  const char* numpy_cast;  // "x.astype(np.float32)"; "" when numpy has none
  const char* torch_cast;  // "x.float()"
  const char* torch_name;  // "float32", as in torch.float32
};

inline constexpr DTypeSpelling kDTypeSpellings[] = {
    {types::DType::F32, "x.astype(np.float32)", "x.float()", "float32"},
    {types::DType::F64, "x.astype(np.float64)", "x.double()", "float64"},
    {types::DType::F16, "x.astype(np.float16)", "x.half()", "float16"},
    {types::DType::BF16, "", "x.bfloat16()", "bfloat16"},
    {types::DType::I32, "x.astype(np.int32)", "x.int()", "int32"},
    {types::DType::I64, "x.astype(np.int64)", "x.long()", "int64"},
    {types::DType::Bool, "x.astype(np.bool_)", "x.bool()", "bool"},
};

inline const DTypeSpelling& spelling_of(types::DType d) {
  for (const DTypeSpelling& s : kDTypeSpellings)
    if (s.d == d) return s;
  return kDTypeSpellings[0];
}

}  // namespace ss::data
