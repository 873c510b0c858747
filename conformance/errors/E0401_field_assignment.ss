# E0401: a model changed through a parameter that is not `mut`. `m.w2 = ...`
# changes the caller's model, so the parameter must say `mut m`.
# expect: error E0401 at 18:5

dim D = 784
dim Hd = 256
dim C = 10

model Mlp:
    w1: [D Hd] = normal(std=1 / sqrt(D))
    w2: [Hd C] = normal(std=1 / sqrt(Hd))

fn forward(m: Mlp, x: [b D]) -> [b C]:
    return relu(x @ m.w1) @ m.w2

# Re-initialise the classifier head before fine-tuning on a new task.
fn reset_head(m: Mlp):
    m.w2 = zeros([Hd C])

fn main():
    let m = Mlp.init(seed=0)
    reset_head(m)
    print(forward(m, zeros([4 D])))
