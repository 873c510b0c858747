"""The README example driven from Python (docs/python.md): the same
program, examples/readme_mlp.ss, its training loop written in Python.

    PYTHONPATH=build/python python3 examples/readme_mlp.py [--devices 'cpu[0 1 2]'] [--plot loss.png]

It trains the MLP for 3 epochs, printing each epoch's mean loss, then the
test split's loss and accuracy, as `ss run examples/readme_mlp.ss` does,
with the same losses bit for bit (python/tests/test_readme.py checks
them against `ss run`'s train.csv). With --plot it draws the loss curve
with matplotlib.
"""
import argparse
import os

import shapescript as ss

HERE = os.path.dirname(os.path.abspath(__file__))


def train(devices=None, epochs=3):
    prog = ss.load(os.path.join(HERE, "readme_mlp.ss"), devices=devices)
    train_set, test_set = ss.synthetic_digits(prog.Digit, 60000,
                                              seed=0).split(0.9)
    m = prog.Mlp.init(seed=0)
    opt = ss.adamw(m, lr=1e-3)
    losses = []
    for epoch in range(epochs):
        for batch in train_set.batches(64, shuffle=epoch):
            logs = prog.train_step(m, opt, batch)
            losses.append(logs.loss)
        n = len(train_set.batches(64))
        print(f"epoch {epoch}: mean loss {sum(losses[-n:]) / n:.4f}")
    print(ss.mean_logs(prog.evaluate, m, test_set.batches(1000)))
    return prog, m, losses


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--devices", help="e.g. 'cpu[0 1 2]'")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--plot", metavar="PNG", help="draw the loss curve here")
    ap.add_argument("--losses", metavar="FILE",
                    help="write each step's loss here, one per line")
    args = ap.parse_args()
    prog, m, losses = train(args.devices, args.epochs)
    if args.losses:
        with open(args.losses, "w") as f:
            for loss in losses:
                f.write(f"{loss!r}\n")
    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(6, 3.5))
        ax.plot(losses, linewidth=0.8)
        ax.set_xlabel("step")
        ax.set_ylabel("loss")
        ax.set_yscale("log")
        ax.set_title("readme_mlp.ss, trained from Python")
        fig.tight_layout()
        fig.savefig(args.plot, dpi=100)
    prog.close()


if __name__ == "__main__":
    main()
