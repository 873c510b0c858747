# E0204: an extern fn's module exists (the interpreter's own `nn`), but has
# no function of that name: it is `softplus`, not `soft_plus`.
# expect: error E0204 at 8:46

dim D = 512
dim F = 2048

extern fn smooth_relu(x: [*s d]) -> [*s d] = "nn.soft_plus"

model Ffn:
    up: [D F] = normal(std=0.02)
    down: [F D] = normal(std=0.02)

fn ffn(m: Ffn, x: [b n D]) -> [b n D]:
    return x + smooth_relu(x @ m.up) @ m.down
