# Extern fns written in Python (python/tests/externs_helper.py).
dim D = 4

extern fn flip(x: [b D] f64) -> [b D] f64 = "externs_helper.flip"
extern fn boom(x: [b D] f64) -> [b D] f64 = "externs_helper.boom"
extern fn wrong_shape(x: [b D] f64) -> [b D] f64 = "externs_helper.wrong_shape"
extern fn pid_rows(x: [b D] f64) -> [b D] f64 = "externs_helper.pid_rows"

fn flipped_sum(x: [b D] f64) -> f64:
    return sum(flip(x) * 2.0)

fn via_wrong(x: [b D] f64) -> [b D] f64:
    return wrong_shape(x) + 1.0

data Row:
    x: [D] f64

fn pids_of(batch: [b] Row) -> [b D] f64:
    return pid_rows(batch.x) + 0.0

fn boom_of(batch: [b] Row) -> [b D] f64:
    return boom(batch.x) + 1.0

extern fn timeout_rows(x: [b D] f64) -> [b D] f64 = "externs_helper.timeout_rows"

fn timeout_of(batch: [b] Row) -> [b D] f64:
    return timeout_rows(batch.x) + 0.0
