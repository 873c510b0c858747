# The fix of E0303_param_group_hyperparameter.ss: Adam's own
# hyperparameters only (betas= for its momentum).
# expect: ok

dim D = 4

model M:
    w: [D D] = zeros()
    b: [D] = zeros()

fn groups(mut opt: Adam[M]):
    add_param_group(opt, "no_decay", ["b"], weight_decay=0.0, betas=(0.9, 0.95))
