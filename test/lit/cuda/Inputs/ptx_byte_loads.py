"""ptx_byte_loads.py PROG.ptx — word-sized values read a byte at a time in a kernel's PTX (issue
18 point 6: a memcpy of 4 bytes from the arena became four ld.global.u8 and a permute on the
GPU).  Counts, per function, the byte loads (ld[.global][.nc].u8) and those among four
consecutive offsets from one base register (the bytes of one word); prints "byte loads: N,
in words: W" and one "WORD: function base+offset" line per such load.  A bool element is one
byte load (counted; a loop over bools unrolled by two is not a word)."""
import re
import sys
from collections import defaultdict

func = None
loads = []
for line in open(sys.argv[1]):
    m = re.match(r"\s*(?:\.(?:visible|weak|extern)\s+)?\.(?:entry|func)\s+(?:\([^)]*\)\s*)?(\w+)", line)
    if m:
        func = m.group(1)
    m = re.search(r"\bld(?:\.global)?(?:\.nc)?\.u8\s+%\w+,\s*\[(%\w+)(?:\+(-?\d+))?\]", line)
    if m:
        loads.append((func, m.group(1), int(m.group(2) or 0)))
offsets = defaultdict(set)
for f, base, off in loads:
    offsets[f, base].add(off)
def in_word(f, b, o):
    """Whether o is one of four consecutive offsets loaded from base b in function f."""
    return any(all(s + k in offsets[f, b] for k in range(4)) for s in range(o - 3, o + 1))


words = [(f, b, o) for f, b, o in loads if in_word(f, b, o)]
print(f"byte loads: {len(loads)}, in words: {len(words)}")
for f, b, o in words:
    print(f"WORD: {f} {b}+{o}")
