# A model spec names fields of the model: Lin has no field `v`.
# expect: error E0203 at 14:29

devices cpu
mesh x=4

dim D = 8
dim F = 4

model Lin:
    w: [D F] = zeros()
    b: [F] = zeros()

spmd fn weights(m: Lin{w/x, v/x}) -> [D F]:
    return all_gather(m.w, x, over=D)

fn use(m: Lin) -> [D F] = weights(m)
