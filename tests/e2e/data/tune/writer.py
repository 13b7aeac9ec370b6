import os, sys
fd = os.open("writer.data", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
block = b"x" * 4096
for _ in range(6000):
    os.write(fd, block)
    os.fsync(fd)
os.close(fd)
os.unlink("writer.data")
open(sys.argv[1], "w").close()
