#include "ops/core/dtype.h"

namespace ss::types {

namespace {
struct Info {
  const char* name;
  int size;
};
constexpr Info kInfo[] = {{"f32", 4},
                          {"f64", 8},
                          {"bf16", 2},
                          {"f16", 2},
                          {"i32", 4},
                          {"i64", 8},
                          {"bool", 1}};
}  // namespace

const char* dtype_name(DType d) {
  return kInfo[static_cast<int>(d)].name;
}
int dtype_size(DType d) {
  return kInfo[static_cast<int>(d)].size;
}

std::optional<DType> dtype_from_name(std::string_view name) {
  for (int i = 0; i < 7; ++i)
    if (name == kInfo[i].name) return static_cast<DType>(i);
  return std::nullopt;
}

bool is_float(DType d) {
  return d == DType::F32 || d == DType::F64 || d == DType::BF16 ||
         d == DType::F16;
}
bool is_int(DType d) {
  return d == DType::I32 || d == DType::I64;
}

DType promote(DType a, DType b) {
  if (a == b) return a;
  auto rank = [](DType d) { return d == DType::Bool ? 0 : is_int(d) ? 1 : 2; };
  if (rank(a) != rank(b)) return rank(a) > rank(b) ? a : b;
  if (rank(a) == 1) return DType::I64;  // i32 + i64
  // Floats: f64 wins; f32 beats the halves; bf16 + f16 -> f32.
  if (a == DType::F64 || b == DType::F64) return DType::F64;
  return DType::F32;
}

}  // namespace ss::types
