#pragma once
// Errors a GPU finds in a program's values (Note [Errors found on the
// device] in ops/cuda/cuda_memory.cu): a kernel, or a check a recorded
// step makes on the device (Note [Checks a recording defers] in
// ops/api.cpp), cannot throw; it ORs one of these bits into its device's
// error word, which the host reads at its next copy to the host and turns
// into the error, here, for every GPU backend alike.

namespace ss::ops::backend {

enum DeviceError : unsigned {
  kIntegerDivisionByZero = 1u << 0,
  kIndexOutOfRange = 1u << 1,
  kLabelOutOfRange = 1u << 2,
  kNegativeIntegerPower = 1u << 3,
  kProbabilityOutOfRange = 1u << 4,
};

/// Throws the OpError (a ValueError) that [word]'s first bit names;
/// returns when [word] is 0.
void raise_device_errors(unsigned word);

}  // namespace ss::ops::backend
