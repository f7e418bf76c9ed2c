"""Two trees with the same 2,500 files at different total sizes, for
bench/PUBLISH.md's "memory vs bytes at a fixed file count" check:

    python3 bench/lib/same_count_tree.py /tmp/memtest/t1 1   # about 22 MB
    python3 bench/lib/same_count_tree.py /tmp/memtest/t8 8   # about 136 MB

Sizes are log-normal (capped at 1 MiB before scaling), 30% random bytes,
the rest JS-like text; a fixed seed makes both trees the same file list.
"""
import os, random, sys
root, scale = sys.argv[1], int(sys.argv[2])
rng = random.Random(7)
words = [("fn%d" % i) for i in range(300)] + ["return", "function", "const", "{", "}", "(", ")", ";"]
for i in range(2500):
    d = os.path.join(root, "d%d" % (i % 50), "s%d" % (i % 7))
    os.makedirs(d, exist_ok=True)
    base = int(rng.lognormvariate(8.3, 1.0)) + 64
    size = min(base, 1 << 20) * scale
    if i % 10 < 3:
        data = os.urandom(size)
        name = "f%d.png" % i
    else:
        parts = []
        n = 0
        while n < size:
            w = rng.choice(words)
            parts.append(w); n += len(w) + 1
        data = " ".join(parts).encode()[:size]
        name = "f%d.js" % i
    open(os.path.join(d, name), "wb").write(data)
