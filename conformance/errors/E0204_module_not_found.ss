# E0204: an extern fn's module is neither an interpreter module (nn, ...)
# nor a plugin lib<module>.so on SS_PLUGIN_PATH.
# expect: error E0204 at 8:40

dim D = 512
dim F = 2048

extern fn swish(x: [*s d]) -> [*s d] = "activations.silu"

model Ffn:
    up: [D F] = normal(std=0.02)
    down: [F D] = normal(std=0.02)

fn ffn(m: Ffn, x: [b n D]) -> [b n D]:
    return x + swish(x @ m.up) @ m.down
