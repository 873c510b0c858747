# Issue 32 item 2: a host int stays an int end to end. Beside an integer
# tensor it was made a 0-d tensor through a double (2^53 + 1 became 2^53),
# and printing read every element through a double too. The values are
# torch 1.13's for the same expressions: torch.arange(3) + 9007199254740993
# is [9007199254740993 9007199254740994 9007199254740995]; an i64 product
# wraps as torch's (arange(3) * (2^62 + 1)); an i32 tensor + 2^31 keeps the
# int's low 32 bits (torch: [-2147483648 -2147483647 -2147483646]); roll by
# 2^53 + 7 shifts by 7 mod 8.
# expect: ok
# output: [3] i64
# output: [9007199254740993 9007199254740994 9007199254740995]
# output: [3] i64
# output: [-9223372036854775807 -9223372036854775806 -9223372036854775805]
# output: [2] i64
# output: [9007199254740993 1]
# output: i64 9007199254740993
# output: [3] i64
# output: [9007199254740993 1 2]
# output: [3] i64
# output: [0 4611686018427387905 -9223372036854775806]
# output: [2] i64
# output: [9007199254740993 9007199254740993]
# output: [3] i32
# output: [-2147483648 -2147483647 -2147483646]
# output: [8] i64
# output: [1 2 3 4 5 6 7 0]
# output: [8] i64
# output: [9007199254740993 9007199254740994 9007199254740995 9007199254740996 9007199254740997 9007199254740998 9007199254740999 9007199254741000]

fn shifted(x: [b] i64) -> [b] i64:
    return x + 9007199254740993

fn main():
    let a = arange(3)
    print(a + 9007199254740993)
    print(a - 9223372036854775807)
    print(tensor([9007199254740993, 1]))
    print(tensor(9007199254740993))
    print(where(a > 0, a, 9007199254740993))
    print(a * 4611686018427387905)
    print(full([2] i64, 9007199254740993))
    print(tensor([0, 1, 2], i32) + 2147483648)
    print(roll(arange(8), 9007199254740999, over=0))
    print(shifted(arange(8)))
