dim D = 4

fn main():
    let a = 1
    print("abc
