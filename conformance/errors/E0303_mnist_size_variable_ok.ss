# E0303_mnist_size_variable.ss with the images' sizes written: it checks.
# expect: ok

data Digit:
    img: [28 28] f32
    label: i64

fn count(dir: str) -> i64:
    let d = mnist(Digit, dir)
    return len(d)
