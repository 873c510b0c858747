# collective_timeout takes at most 31622400 seconds (366 days, as
# SHAPESCRIPT_COLLECTIVE_TIMEOUT): 1e308 passed its
# check and overflowed the devices' count of milliseconds to a negative
# timeout, so the next run in the same process (a host language's, the
# fuzzer's) failed to start its workers (issue 32's runtime fuzzer). A
# ValueError at its line on every device list; 30 seconds is taken.
# expect: runtime ValueError
# output: 1

fn main():
    collective_timeout(30.0)
    print(1)
    collective_timeout(31622401.0)
