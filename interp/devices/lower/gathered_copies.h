#pragma once
// `shard params`: the gathered copies of a rank's params that the tape
// holds, let go after their use in the forward pass and gathered again
// for the backward pass (devices.md item 9). See Note [Gathered copies] in
// gathered_copies.cpp.

#include <functional>
#include <memory>
#include <vector>

#include "ops/core/tensor.h"

namespace ss::devices::lower {

class GatheredCopies {
 public:
  /// [copy], a gathered param recorded on the tape: [remake] gathers its
  /// bytes again (into the buffer it is handed).
  void add(const ops::Tensor& copy, std::function<void(void*)> remake);
  /// Lets the bytes of every copy go: a new read has begun, the earlier
  /// ones have been used.
  void let_go_all();
  /// Makes every copy still held present again, and forgets the rest: the
  /// tape is gone, so what holds one now is a value of the program.
  void present_live();
  /// Copies added and not yet forgotten (tests).
  size_t size() const { return copies_.size(); }

 private:
  std::vector<std::weak_ptr<ops::Storage>> copies_;
};

}  // namespace ss::devices::lower
