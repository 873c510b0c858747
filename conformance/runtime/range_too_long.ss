# A range too long for this machine (issue 32, item 4). Walked by a `for`
# it is counted as the loop asks (Note [A loop walks a range] in
# interp/eval/interpreter.cpp): a loop over range(2^62) left after two
# steps costs two steps (one over range(10^7) made the whole list first:
# 24 s and 3.4 GB). Made as a list (`let r = range(..)`) it is a
# ValueError at its line, where range(2^62) aborted the process in
# vector::reserve (exit 134, no location).
# expect: runtime ValueError
# output: 3
# output: 0
# output: 1
# output: 4611686018427387902
# output: 4611686018427387903

fn main():
    print(len(range(3)))
    for i in range(4611686018427387904):
        if i == 2:
            break
        print(i)
    for i in range(4611686018427387902, 4611686018427387904):
        print(i)
    let r = range(4611686018427387904)
    print(len(r))
