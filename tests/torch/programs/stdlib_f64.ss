# f64 copies of the stdlib's models, whose fields are f32 (the stdlib has
# no dtype parameter): a declaration of the same name shadows the stdlib's
# (language.md), so `linear`, `layer_norm(affine=)`, `batch_norm` and
# `embedding` take these. The inits are the stdlib's; the programs here load
# their params from files anyway.

model Linear[I O]:
    w: [I O] f64 = uniform(-1/sqrt(I), 1/sqrt(I))
    b: [O] f64 = uniform(-1/sqrt(I), 1/sqrt(I))

model LayerNorm[N]:
    g: [N] f64 = ones()
    b: [N] f64 = zeros()

model BatchNorm[N]:
    g: [N] f64 = ones()
    b: [N] f64 = zeros()
    buffer running_mean: [N] f64 = zeros()
    buffer running_var: [N] f64 = ones()

model Embedding[W N]:
    table: [W N] f64 = normal(std=1.0)
