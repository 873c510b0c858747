fn f(n: int) -> int:
    if n == 0:
        return 0
    return f(n - 1) + 1

fn main():
    print(f(1600))
