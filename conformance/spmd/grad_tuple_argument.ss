# A tuple argument split by its elements' specs, differentiated from a
# worker fn: f(w) = psum over x of the instances' sum(a * b) with a = w
# and b = 3w, so f = 3 * sum(w * w) = 90 for w = [1 2 3 4] and the
# gradient is 6w = [6 12 18 24], by hand. (On cpu[2] each worker's part of
# the gradient of a tensor inside a tuple was its own block's only, [6 12
# 0 0], before the cut's VJP summed it over the workers.)
# expect: ok
# output: (f32 90, [4] f32
# output: [6 12 18 24])

devices cpu
mesh x=2

dim D = 4

spmd fn dot(p: ([n/x], [n/x])) -> []:
    let a, b = p
    return psum(sum(a * b), x)

fn f(w: [k]) -> []:
    return dot((w, w * 3.0))

fn grads(w: [k]) -> (f32, [k]):
    return value_and_grad(f, w)

fn main():
    print(grads(tensor([1.0, 2.0, 3.0, 4.0])))
