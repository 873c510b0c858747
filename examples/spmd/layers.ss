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

# The batch: examples' inputs and targets.
fn batch_inputs() -> [N D] = reshape(ramp(arange(N * D), 3), [N, D])
fn batch_targets() -> [N C] = reshape(ramp(arange(N * C), 5), [N, C])
