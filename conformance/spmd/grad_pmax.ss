# pmax's transpose sends the cotangent to the instance that held the
# maximum (spmd.md's table). The tutorial's blocks [3 1 4 1], [5 9 2 6],
# [5 3 5 8], [9 7 1 2] on mesh i=4: pmax is [9 9 5 8], held by instances
# 3, 1, 2 and 2; the loss sum(pmax²) is 81 + 81 + 25 + 64 = 251 and its
# gradient puts 2·max there: [0 0 0 0 0 18 0 0 0 0 10 16 18 0 0 0]
# (numpy: 2·max times the one-hot of the argmax over the instances).
# expect: ok
# output: f32 251 [16] f32
# output: [0 0 0 0 0 18 0 0 0 0 10 16 18 0 0 0]

devices cpu
mesh i=4

spmd fn squared_max(x: [n/i]) -> []:
    let m = pmax(x, i)
    return sum(m * m)

fn grads(x: [n]) -> (f32, [n]):
    return value_and_grad(squared_max, x)

fn main():
    let x = tensor([3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0, 5.0, 3.0, 5.0, 8.0, 9.0,
                    7.0, 1.0, 2.0])
    let l, g = grads(x)
    print(l, g)
