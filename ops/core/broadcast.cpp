#include "ops/core/broadcast.h"

#include <algorithm>

namespace ss::ops {

std::optional<Shape> broadcast_sizes(const Shape& a, const Shape& b) {
  size_t r = std::max(a.size(), b.size());
  Shape out(r);
  for (size_t i = 0; i < r; ++i) {
    int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da != db && da != 1 && db != 1) return std::nullopt;
    out[i] = da == 1 ? db : da;
  }
  return out;
}

std::string broadcast_mismatch(const Shape& a, const Shape& b) {
  return "shapes " + shape_string(a) + " and " + shape_string(b) +
         " do not broadcast";
}

}  // namespace ss::ops
