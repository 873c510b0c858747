# E0204: an extern fn's module exists (the interpreter's own `nn`), but has
# no function of that name: it is `rms_norm`, not `rmsnorm`. (The extern
# fn takes an axis, `over: Axis[d]`, as language.md's `layer_norm` does.)
# expect: error E0204 at 9:77

dim D = 512
dim F = 2048

extern fn rms_norm(x: [*s d], over: Axis[d], eps: float = 1e-6) -> [*s d] = "nn.rmsnorm"

model Ffn:
    up: [D F] = normal(std=0.02)
    down: [F D] = normal(std=0.02)

fn ffn(m: Ffn, x: [b n D]) -> [b n D]:
    return x + silu(rms_norm(x, over=D) @ m.up) @ m.down
