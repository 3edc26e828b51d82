"""Prints the members of DIR/nested.npz and DIR/deep.npz (name, shape, distinct values) and
whether nested.npz equals flat.npz member by member (lit programs/save-nested.trl)."""
import sys

import numpy as np

d = sys.argv[1]


def describe(path):
    z = np.load(path)
    out = []
    for k in sorted(z.files, key=lambda n: int(n.split("_")[1])):
        a = z[k]
        out.append(f"{k} {a.shape} {sorted(set(float(x) for x in np.ravel(a)))}")
    return "; ".join(out)


nested, flat = np.load(f"{d}/nested.npz"), np.load(f"{d}/flat.npz")
print("nested:", describe(f"{d}/nested.npz"))
print("nested == flat:", nested.files == flat.files and all(
    nested[k].dtype == flat[k].dtype and np.array_equal(nested[k], flat[k]) for k in nested.files))
print("deep:", describe(f"{d}/deep.npz"))
