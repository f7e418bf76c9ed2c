"""A 100,000-file build tree for bench/SCALE.md: JavaScript-like files of
200-4,000 bytes from a fixed seed, `OUT/pkgNNN/modN/fileI.js` (100 folders of
10 x 100 files).

    python3 bench/lib/tree100k.py /tmp/scale/tree
"""
import os
import random
import sys

out = sys.argv[1]
rng = random.Random(100000)
words = ["function", "return", "const", "let", "this", "null", "=>", "if(", "else",
         "for(", "item", "state", "props", "render", "update", "node", "list", "map"]
for i in range(100000):
    folder = f"{out}/pkg{i // 1000:03d}/mod{(i // 100) % 10}"
    os.makedirs(folder, exist_ok=True)
    n = rng.randint(200, 4000)
    body = " ".join(rng.choice(words) + str(rng.randint(0, 999)) for _ in range(n // 6))
    with open(f"{folder}/file{i}.js", "w") as f:
        f.write(f"/*{i}*/" + body)
