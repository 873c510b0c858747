dim D = -1
dim E = 0
fn main():
    print(zeros([D E]))
