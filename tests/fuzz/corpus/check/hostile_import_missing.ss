import "nowhere/else.ss"
fn main():
    print(1)
