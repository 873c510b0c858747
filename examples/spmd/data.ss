# Deterministic data shared by the examples (no RNG, so the Python oracles
# in tests/spmd_examples/ rebuild the same numbers): ramp(arange(n), step)
# cycles through multiples of 1/4 in [-1.25, 1.25], exact in every float
# type, so the only difference from the oracle is the order of f32 sums.
fn ramp(i: [n] i64, step: int) -> [n] = to((i * step) % 11, f32) / 4.0 - 1.25
