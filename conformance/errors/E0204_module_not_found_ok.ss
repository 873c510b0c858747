# The fix for E0204_module_not_found: the function comes from the nn module.
# expect: ok

dim D = 512
dim F = 2048

extern fn swish(x: [*s d]) -> [*s d] = "nn.silu"

model Ffn:
    up: [D F] = normal(std=0.02)
    down: [F D] = normal(std=0.02)

fn ffn(m: Ffn, x: [b n D]) -> [b n D]:
    return x + swish(x @ m.up) @ m.down
