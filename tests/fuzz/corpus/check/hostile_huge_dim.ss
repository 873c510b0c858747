dim D = 784784784
dim E = 4611686018427387904
model M:
    w: [D E] = normal(std=1.0)

fn main():
    let m = M.init(seed=0)
    print(m.w)
