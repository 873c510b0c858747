# A sink on a full disk (issue 32, item 1): each line is flushed as it is
# written, and a line the disk will not take is an IOError at the write,
# where it used to be lost in silence (exit 0). /dev/full refuses every
# write with ENOSPC. What main printed before it is kept.
# expect: runtime IOError

fn main():
    let s = jsonl("/dev/full")
    print("before")
    s.write(logs(loss=1.0))
    print("not reached")
