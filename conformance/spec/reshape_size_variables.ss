# A size list may name the fn's size variables (library.md: reshape(x,
# sizes)): `reshape(x, [o, i])` of x: [i o] takes its sizes from the call's
# bindings, i = 2 and o = 3. The checker accepted it, but the run failed
# with "`o` has no value here" (found writing examples/spmd). numpy:
# np.arange(1, 7).reshape(2, 3).reshape(3, 2) = [[1 2] [3 4] [5 6]]; a
# size variable beside a literal, [1, o] of a [1 3] row: [[4 5 6]].
# expect: ok
# output: [3 2] f32
# output: [[1 2]
# output:  [3 4]
# output:  [5 6]]
# output: [1 3] f32
# output: [[4 5 6]]

fn swap(x: [i o]) -> [o i]:
    return reshape(x, [o, i])

fn as_row(x: [o]) -> [1 o]:
    return reshape(x, [1, o])

fn main():
    let x = tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    print(swap(x))
    print(as_row(tensor([4.0, 5.0, 6.0])))
