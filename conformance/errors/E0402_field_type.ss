# E0402: a model field keeps its type: w2 is [Hd C], and the new value is
# [C Hd] (the axes of the zeros are swapped).
# expect: error E0402 at 17:12

dim D = 784
dim Hd = 256
dim C = 10

model Mlp:
    w1: [D Hd] = normal(std=1 / sqrt(D))
    w2: [Hd C] = normal(std=1 / sqrt(Hd))

fn forward(m: Mlp, x: [b D]) -> [b C] = relu(x @ m.w1) @ m.w2

# Re-initialise the classifier head before fine-tuning on a new task.
fn reset_head(mut m: Mlp):
    m.w2 = zeros([C Hd])
