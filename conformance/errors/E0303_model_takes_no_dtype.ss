# E0303: only a model that declares a dtype parameter (`model Net T:`, as
# the stdlib's Linear, LayerNorm, BatchNorm and Embedding do) takes a
# dtype in its type; Head's fields are f32 as written.
# expect: error E0303 at 14:16

dim D = 4
dim C = 2

model Head:
    w: [D C] = normal(std=0.1)

model Net:
    l: Linear[D D] f64
    head: Head f64
