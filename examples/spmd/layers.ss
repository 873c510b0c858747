# What the neural-network examples share (seeds/shard-map.md, "Neural
# networks"): the sizes, a dense layer, and the data. Sizes are small so
# the examples run in seconds: layer sizes [D F F F F F C] (the
# tutorial's [784 128 128 128 128 128 8]) and a batch of N (its 32).
import "data.ss"

dim D = 16
dim F = 16
dim C = 8
dim N = 32

model Layer[I O]:
    w: [I O] = zeros()
    b: [O] = zeros()

fn dense(l: Layer[i o], x: [b i]) -> [b o] = x @ l.w + l.b

# Layer k's w is ramp(arange(I * O), k + 2) / 4 and its b is
# ramp(arange(O), k + 6) / 4: every tensor a different pattern.
fn set_layer(mut l: Layer[i o], k: int):
    l.w = reshape(ramp(arange(size(l.w, i) * size(l.w, o)), k + 2), [i, o]) / 4.0
    l.b = reshape(ramp(arange(size(l.b, o)), k + 6), [o]) / 4.0

fn batch_inputs() -> [N D] = reshape(ramp(arange(N * D), 3), [N, D])
fn batch_targets() -> [N C] = reshape(ramp(arange(N * C), 5), [N, C])
