# A csv sink on a full disk (issue 32, item 1), behind a tee with stdout:
# stdout's line is written, then the csv's failure is an IOError at the
# write, where it used to be lost in silence (exit 0).
# expect: runtime IOError

fn main():
    let s = tee(stdout(), csv("/dev/full"))
    s.write(logs(loss=1.0, n=3))
    print("not reached")
