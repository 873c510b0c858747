# bench/python_bench.py's `ss run` side: the README MLP's steps at batch B,
# each epoch timed by progress() after an untimed warm-up pass.
import "../examples/readme_mlp.ss"

dim B = 64
dim E = 1

fn bench():
    let train, test = synthetic_digits(Digit, 60000, seed=0).split(0.9)
    let m = Mlp.init(seed=0)
    let opt = adamw(m, lr=1e-3)
    for batch in train.take(B).batches(B):
        let warm = train_step(m, opt, batch)
    for e in range(E):
        for batch in progress(train.batches(B)):
            let l = train_step(m, opt, batch)
