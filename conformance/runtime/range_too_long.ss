# A range too long for this machine (issue 32, item 4): a ValueError at its
# line, where range(2^62) aborted the process in vector::reserve (exit
# 134, no location). A range is a list, made whole, today.
# expect: runtime ValueError
# output: 3

fn main():
    print(len(range(3)))
    for i in range(4611686018427387904):
        print(i)
        break
