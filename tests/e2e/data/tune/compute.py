import multiprocessing, sys

def burn(n):
    s = 0
    for i in range(n):
        s += i * i
    return s

if __name__ == "__main__":
    with multiprocessing.Pool(2) as pool:
        pool.map(burn, [60_000_000, 60_000_000])
    open(sys.argv[1], "w").close()
