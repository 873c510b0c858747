# E0301: elementwise operands align from the right; [b Hd] + [C] pairs Hd
# with C. The hidden layer's bias is b1, not the output bias b2. The error
# is at the binary expression, whose span starts at its left operand.
# expect: error E0301 at 18:18

dim D = 784
dim Hd = 256
dim C = 10

model Mlp:
    w1: [D Hd] = normal(std=1 / sqrt(D))
    b1: [Hd] = zeros()
    w2: [Hd C] = normal(std=1 / sqrt(Hd))
    b2: [C] = zeros()

fn forward(m: Mlp, x: [b D]) -> [b C]:
    # the bias of the wrong layer
    let h = relu(x @ m.w1 + m.b2)
    return h @ m.w2 + m.b2
