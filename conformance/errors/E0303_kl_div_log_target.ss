# E0303: kl_div's log_target= is true or false. A dtype (or any value not
# a bool) passed the checker and stopped the run with an internal error
# when the flag was read (issue 32's runtime fuzzer).
# expect: error E0303 at 8:40

fn main():
    let p = tensor([0.25, 0.75])
    print(kl_div(log(p), p, log_target=f32))
