# The fix for E0204_function_not_found_axis_param: the function is named as
# nn has it.
# expect: ok

dim D = 512
dim F = 2048

extern fn rms_norm(x: [*s d], over: Axis[d],
                   eps: float = 1e-6) -> [*s d] = "nn.rms_norm"

model Ffn:
    up: [D F] = normal(std=0.02)
    down: [F D] = normal(std=0.02)

fn ffn(m: Ffn, x: [b n D]) -> [b n D]:
    return x + silu(rms_norm(x, over=D) @ m.up) @ m.down
