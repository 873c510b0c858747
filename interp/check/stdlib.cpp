// The standard library: ordinary declarations, imported implicitly; a user
// declaration of the same name shadows one of these. Its ops (linear,
// layer_norm, batch_norm, embedding) are builtins in ops/defs/nn.cpp.
#include "interp/check/checker_impl.h"

namespace ss::check {

const char* stdlib_source() {
  return R"ss(# ShapeScript standard library models.

# Each is generic over its dtype (`Linear[D H] f64`; f32 when none is
# written), as torch's modules are after `.double()` or `.to(dtype)`.

# torch.nn.Linear's init: U(-1/sqrt(I), 1/sqrt(I)) for w and b.
model Linear[I O] T:
    w: [I O] T = uniform(-1/sqrt(I), 1/sqrt(I))
    b: [O] T = uniform(-1/sqrt(I), 1/sqrt(I))

model LayerNorm[D] T:
    g: [D] T = ones()
    b: [D] T = zeros()

model BatchNorm[C] T:
    g: [C] T = ones()
    b: [C] T = zeros()
    buffer running_mean: [C] T = zeros()
    buffer running_var: [C] T = ones()

# torch.nn.Embedding's init: N(0, 1).
model Embedding[V D] T:
    table: [V D] T = normal(std=1.0)
)ss";
}

}  // namespace ss::check
