import sys, time
x = bytearray(2048 << 20)
x[::4096] = b"\x01" * len(range(0, len(x), 4096))  # every page written: resident
time.sleep(12)
open(sys.argv[1], "w").close()
