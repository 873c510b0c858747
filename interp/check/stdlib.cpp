// The standard library: ordinary declarations, imported implicitly; a user
// declaration of the same name shadows one of these. Its ops (linear,
// layer_norm, batch_norm, embedding) are builtins in ops/defs/nn.cpp.
#include "interp/check/checker_impl.h"

namespace ss::check {

const char* stdlib_source() {
  return R"ss(# ShapeScript standard library models.

# torch.nn.Linear's init: U(-1/sqrt(I), 1/sqrt(I)) for w and b.
model Linear[I O]:
    w: [I O] = uniform(-1/sqrt(I), 1/sqrt(I))
    b: [O] = uniform(-1/sqrt(I), 1/sqrt(I))

model LayerNorm[D]:
    g: [D] = ones()
    b: [D] = zeros()

model BatchNorm[C]:
    g: [C] = ones()
    b: [C] = zeros()
    buffer running_mean: [C] = zeros()
    buffer running_var: [C] = ones()

# torch.nn.Embedding's init: N(0, 1).
model Embedding[V D]:
    table: [V D] = normal(std=1.0)
)ss";
}

}  // namespace ss::check
