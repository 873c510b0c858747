# E0303: a param group takes its optimizer's hyperparameters only: Adam
# has no momentum= (torch.optim.Adam would ignore it silently).
# expect: error E0303 at 12:72

dim D = 4

model M:
    w: [D D] = zeros()
    b: [D] = zeros()

fn groups(mut opt: Adam[M]):
    add_param_group(opt, "no_decay", ["b"], weight_decay=0.0, momentum=0.9)
