#pragma once
// The types a host call declares for its values (Note [Host calls are
// checked as ShapeScript] in embed.h): a held value's checked type, and
// the type a host tensor is given from the parameter it fills.

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "interp/embed/embed.h"
#include "interp/eval/value.h"
#include "ops/core/type.h"

namespace ss::embed {

/// [t] as a parameter's type in source, its size variables renamed with
/// the suffix `_[k]` so that the values of different parameters do not
/// share them; "" for a type no parameter can have (a host bool).
std::string param_type(types::Type t, size_t k);

/// The size variables a host call's tensors bind: the name written for
/// each of the callee's, its size, and the argument that bound it.
struct HostSizes {
  struct Bound {
    std::string written;
    int64_t size = 0;
    std::string by;
  };
  std::map<std::string, Bound> vars;  // the callee's variable name -> ...
};

/// The type a host tensor [x] is declared with, as argument [arg] of
/// [callee] whose parameter wants [want] (null: nothing known, e.g. a
/// builtin's): each axis the dim of its size where [want] has that dim,
/// the size variable [want] has there (written with its own name: one per name
/// in the call, in [sizes]), else its size; its own dtype. A size variable two
/// arguments bind to different sizes is a CheckFailed (E0303), which the
/// checker cannot see once both are written `b`; every other mismatch the
/// checker reports, with its message.
std::string host_tensor_type(const ops::Tensor& x,
                             const types::Type* want,
                             const std::string& arg,
                             const std::string& callee,
                             HostSizes& sizes);

/// A type for [v] from the value alone (a log entry, a record's field):
/// a tensor's by its sizes, a number's, a string's.
types::Type type_of_value(const eval::Value& v);

}  // namespace ss::embed
