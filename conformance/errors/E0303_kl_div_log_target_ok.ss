# The fix for E0303_kl_div_log_target: log_target= a bool. torch:
# kl_div(log p, p, reduction="sum") of p = [0.25 0.75] is 0 (each term
# p (log p - log p)), and with log_target=True, e^log p (log p - log p)
# is 0 too.
# expect: ok
# output: f32 0
# output: f32 0

fn main():
    let p = tensor([0.25, 0.75])
    print(kl_div(log(p), p, reduction="sum", log_target=false))
    print(kl_div(log(p), log(p), reduction="sum", log_target=true))
