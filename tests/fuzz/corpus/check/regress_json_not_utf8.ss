fn main():
    print(x”y)
