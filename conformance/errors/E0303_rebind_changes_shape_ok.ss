# The fix for E0303_rebind_changes_shape: each block maps [b D] back to
# [b D] (a residual MLP), so `h` keeps its type across iterations.
# expect: ok

dim D = 128
dim F = 512
dim L = 4

model Block:
    w_up: [D F] = normal(std=0.02)
    w_down: [F D] = normal(std=0.02)

model Net:
    blocks: [L] Block

fn forward(m: Net, x: [b D]) -> [b D]:
    let h = x
    for blk in m.blocks:
        h = h + gelu(h @ blk.w_up) @ blk.w_down
    return h
