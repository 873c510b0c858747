// Note [Gathered copies]
// With `shard params` a read of a param (`x @ m.w1`) inside value_and_grad
// all-gathers it (shards.cpp), and the ops that use it record it on the
// tape (a matmul's VJP keeps both operands). Kept there, every param read
// in the forward pass would stay whole until the backward pass ends, and a
// worker would hold the whole model after all. So the whole copy lives as
// FSDP's reshard_after_forward has it: its bytes are let go once it has
// been used and gathered again, in place, when the backward pass needs
// them (Note [Bytes made again] in ops/core/tensor.cpp):
//  - a read's copy is used by the time the next read begins: the next
//    gather lets every earlier copy go (RankContext::gather_param), so the
//    forward pass holds the params of one read at a time;
//  - ops::backward makes a node's inputs present before its VJP: the last
//    read's copy is still there for the first VJPs, the others are
//    gathered again as the pass reaches their last use, in the same order
//    on every rank;
//  - the gather's own VJP (its reduce-scatter, the pass's last use of the
//    copy) lets it go again;
//  - when value_and_grad has dropped its tape, a copy that a value still
//    holds (a param returned as aux, or bound to a name and read after a
//    later read) is gathered again at once, on every rank at the same
//    point (present_live, from DeviceHooks::tape_released), so no host
//    effect on rank 0 alone ever needs a collective to read it.
// What is left is a value bound to a name and read again, in the same
// forward pass, after another param was read (`let w = m.a`, then
// `m.b`, then `w` again): its data() gathers it again where it is read,
// on every rank, since every rank runs the same ops.
#include "interp/devices/lower/gathered_copies.h"

#include <algorithm>

namespace ss::devices::lower {

void GatheredCopies::add(const ops::Tensor& copy,
                         std::function<void(void*)> remake) {
  copy.storage()->set_remake(std::move(remake));
  copies_.push_back(copy.storage());
}

void GatheredCopies::let_go_all() {
  std::erase_if(copies_, [](const std::weak_ptr<ops::Storage>& w) {
    return w.expired();
  });
  for (const auto& w : copies_)
    if (auto s = w.lock()) s->let_go();
}

void GatheredCopies::present_live() {
  std::vector<std::weak_ptr<ops::Storage>> copies = std::move(copies_);
  copies_.clear();
  for (const auto& w : copies)
    if (auto s = w.lock()) s->present();
}

}  // namespace ss::devices::lower
