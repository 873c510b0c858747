# E0303: an optimizer's hyperparameters are host numbers >= 0, as
# torch.optim checks them: RMSprop's momentum= cannot be negative. The
# error is at the argument.
# expect: error E0303 at 12:32

dim D = 4

model M:
    w: [D] = zeros()

fn make(m: M) -> RMSprop[M]:
    return rmsprop(m, momentum=-0.5, centered=true)
