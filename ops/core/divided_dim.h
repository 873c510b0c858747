#pragma once
// Note [Divided dims]: `S/2` in a type is the dim S divided by 2, a dim of
// its own named "S/2" with S's size / 2 (E0303 in a written type where 2
// does not divide S). It is what a stride or a pool gives: conv2d(x, k,
// stride=2, padding=1) of [b C S S] is [b C S/2 S/2], and so is
// max_pool2d(x, 2), so a ResNet's downsampled path and its strided
// shortcut have one type and add. Dividing again composes: (S/2)/2 is
// S/4. A size variable is not divided (its size is known at run time
// only): a strided conv of [b C h w] gives fresh sizes.

#include <optional>
#include <string>

#include "ops/core/type.h"

namespace ss::types {

/// [a] divided by [k] when [a] is a dim (whole, not split) whose size [k]
/// divides: "S" or "S/2" by 2 gives "S/2" or "S/4"; nullopt otherwise.
inline std::optional<Axis> divided_dim(const Axis& a, int64_t k) {
  if (a.kind != Axis::Kind::Dim || !a.split.empty() || a.size < 1 || k < 1 ||
      a.size % k != 0)
    return std::nullopt;
  if (k == 1) return a;
  std::string base = a.name;
  int64_t d = 1;
  if (size_t slash = base.rfind('/'); slash != std::string::npos) {
    d = std::stoll(base.substr(slash + 1));
    base = base.substr(0, slash);
  }
  return Axis::dim(base + "/" + std::to_string(d * k), a.size / k);
}

}  // namespace ss::types
