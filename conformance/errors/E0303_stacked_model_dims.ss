# A stacked sub-model names its element as it would alone: Layer takes two
# dims, so `[L] Layer` is E0303 at the element, as `l: Layer` would be
# (the fix, `[L] Layer[F F]`, is spec/stacked_model_with_dims.ss).
# expect: error E0303 at 14:16

dim L = 3
dim F = 2

model Layer[I O]:
    w: [I O] = ones()
    b: [O] = ones()

model Net:
    inner: [L] Layer

fn main():
    let m = Net.init(seed=0)
    print(m.inner[0].b)
