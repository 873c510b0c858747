# f-strings print numbers whole and bound their specs (issue 32, item 7):
# a number longer than 127 characters is printed whole, as Python prints
# it (a fixed buffer cut it), and a precision past 1,100 digits (Note
# [Format bounds] in interp/eval/format.h) is a ValueError at the value,
# where `.99999999999f` overflowed the parse and grew the string until
# memory ran out. The expected lines are Python's own f-strings.
# expect: runtime ValueError
# output: 99999999999999996973312221251036165947450327545502362648241750950346848435554075534196338404706251868027512415973882408182135734368278484639385041047239877871023591066789981811181813306167128854888448
# output: 1.5000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000
# output:                               -2.500e-07|

fn main():
    print(f"{1e200:.0f}")
    print(f"{1.5:.130f}")
    print(f"{-2.5e-7:>40.3e}|")
    print(f"{1.5:.99999999999f}")
