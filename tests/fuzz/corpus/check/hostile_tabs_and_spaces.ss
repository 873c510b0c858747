fn main():
	let a = 1
        print(a)
