dim A = 4294967296
dim B = 4294967296
fn main():
    print(zeros([A B A]))
