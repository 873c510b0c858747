# E0102: a tab in indentation (ShapeScript indents with spaces only).
# expect: error E0102 at 13:1

dim D = 784
dim Hd = 256
dim C = 10

model Mlp:
    w1: [D Hd] = normal(std=1/sqrt(D))
    w2: [Hd C] = normal(std=1/sqrt(Hd))

fn forward(m: Mlp, x: [b D]) -> [b C]:
	return relu(x @ m.w1) @ m.w2
