# E0303: `=` rebinds a local with the same shape and dtype, so a loop-carried
# value keeps its type. `h` is [b D]; h @ blk.w_up is [b F].
# expect: error E0303 at 19:13

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
        h = gelu(h @ blk.w_up)
    return h
