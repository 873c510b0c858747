#include "ops/backend/device_errors.h"

#include <string>

#include "ops/core/op_error.h"

namespace ss::ops::backend {

void raise_device_errors(unsigned word) {
  if (!word) return;
  // Found by a kernel, or by a check a recorded step made on the device
  // (Note [Checks a recording defers] in ops/api.cpp): the op and value
  // are not known here.
  auto raise = [](const char* what) {
    throw OpError(OpError::Kind::Value,
                  std::string(what) +
                      " (found on the GPU after the op ran, as a recorded "
                      "step checks; SHAPESCRIPT_RECORD_STEPS=0 names the "
                      "value and its line)");
  };
  if (word & kIntegerDivisionByZero) raise("integer division by zero");
  if (word & kNegativeIntegerPower)
    raise("integers to negative integer powers are not allowed");
  if (word & kLabelOutOfRange) raise("a class label out of range");
  if (word & kProbabilityOutOfRange)
    raise("an input that should be a probability is not between 0 and 1");
  raise("an index out of range");
}

}  // namespace ss::ops::backend
