#pragma once
// What embed::Value holds: a runtime value and the checked type it came
// back with, which a later host call declares (Note [Host calls are
// checked as ShapeScript] in embed.h). Private to interp/embed.

#include <string>

#include "interp/eval/value.h"
#include "ops/core/type.h"

namespace ss::embed {

struct Held {
  eval::Value value;
  types::Type type;
};

}  // namespace ss::embed
