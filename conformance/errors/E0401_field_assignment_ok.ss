# The fix for E0401_field_assignment: the parameter is declared `mut`.
# expect: ok

dim D = 784
dim Hd = 256
dim C = 10

model Mlp:
    w1: [D Hd] = normal(std=1 / sqrt(D))
    w2: [Hd C] = normal(std=1 / sqrt(Hd))

fn forward(m: Mlp, x: [b D]) -> [b C]:
    return relu(x @ m.w1) @ m.w2

# Re-initialise the classifier head before fine-tuning on a new task.
fn reset_head(mut m: Mlp):
    m.w2 = zeros([Hd C])

fn main():
    let m = Mlp.init(seed=0)
    reset_head(m)
    print(forward(m, zeros([4 D])))
