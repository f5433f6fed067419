#!/usr/bin/env python3
"""bench/gentree.py ROOT N: writes the generated tree of N small Python
modules, 200 to a package, that bench/scale.sh and bench/index.sh index (a
repository of monorepo size whose every file is alike)."""
import os
import sys

root, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    d = os.path.join(root, "pkg%03d" % (i // 200))
    if i % 200 == 0:
        os.makedirs(d)
        open(os.path.join(d, "__init__.py"), "w").close()
    with open(os.path.join(d, "mod%05d.py" % i), "w") as f:
        f.write('"""Module %d of the generated tree."""\n\nLIMIT_%d = %d\n\n\nclass Widget%d:\n'
                '    def value(self):\n        return helper_%d(LIMIT_%d)\n\n\ndef helper_%d(x):\n'
                '    return x * 2 + %d\n' % (i, i, i, i, i, i, i, i))
