# The fix of E2003_model_field_does_not_divide.ss: D = 8 rows make two
# for each of the 4 instances.
# expect: ok

devices cpu
mesh x=4

dim D = 8
dim F = 4

model Lin:
    w: [D F] = zeros()

spmd fn blocks(m: Lin/x) -> [D/x F]:
    return m.w

fn use(m: Lin) -> [D F] = blocks(m)
