import "fuzz.ss"
fn main():
    print(1)
