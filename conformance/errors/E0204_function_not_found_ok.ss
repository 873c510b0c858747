# The fix for E0204_function_not_found: the function is named as nn has it.
# expect: ok

dim D = 512
dim F = 2048

extern fn smooth_relu(x: [*s d]) -> [*s d] = "nn.softplus"

model Ffn:
    up: [D F] = normal(std=0.02)
    down: [F D] = normal(std=0.02)

fn ffn(m: Ffn, x: [b n D]) -> [b n D]:
    return x + smooth_relu(x @ m.up) @ m.down
