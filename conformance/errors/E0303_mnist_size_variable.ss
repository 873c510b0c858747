# mnist gives every image the sizes its IDX file declares, so a field with
# a size variable binds it to nothing: it reached the loader as a size of
# -1 and failed there with "expected [-1 -1] (1 values), found [28 28]"
# (issue 32 item 11). Now a static error at the record argument.
# expect: error E0303 at 12:19

data Digit:
    img: [h w] f32
    label: i64

fn count(dir: str) -> i64:
    let d = mnist(Digit, dir)
    return len(d)
