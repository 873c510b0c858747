# E0306: an input group (K m) binds m = the axis's size / K, which must
# divide: T = 100 positions do not cut into K = 8 chunks.
# expect: error E0306 at 11:27

dim T = 100
dim D = 64
dim K = 8

# Cut each sequence into K equal chunks.
fn chunks(x: [b T D]) -> [b K m D]:
    return rearrange(x, b (K m) D -> b K m D)
