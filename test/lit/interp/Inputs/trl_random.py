"""An independent Python reimplementation of dsl/README.md §8 (the random streams), written from
the text, used by the lit tests to check the interpreter's numbers bit for bit."""
import math
import struct

M32 = 0xFFFFFFFF


def philox(c, k):
    c, k = list(c), list(k)
    for r in range(10):
        if r:
            k = [(k[0] + 0x9E3779B9) & M32, (k[1] + 0xBB67AE85) & M32]
        p0 = 0xD2511F53 * c[0]
        p1 = 0xCD9E8D57 * c[2]
        c = [((p1 >> 32) ^ c[1] ^ k[0]) & M32, p1 & M32, ((p0 >> 32) ^ c[3] ^ k[1]) & M32, p0 & M32]
    return c


def fnv1a32(s):
    h = 0x811C9DC5
    for b in s.encode():
        h = ((h ^ b) * 0x01000193) & M32
    return h


def rng(seed, name, *coords):
    w = philox([seed & M32, seed >> 32, fnv1a32(name), 0], [0, 0])
    h = 0xcbf29ce484222325
    for c in coords:
        for b in struct.pack("<i", c):
            h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return (w[0], w[1], h)


def block(key, j):
    k0, k1, h = key
    return philox([j & M32, j >> 32, h & M32, h >> 32], [k0, k1])


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def uniform_f32(key, e):
    return (block(key, e // 4)[e % 4] >> 8) * 2.0 ** -24


def u53(a, b):
    return ((a >> 5) * 2.0 ** 26 + (b >> 6)) * 2.0 ** -53


def uniform_f64(key, e):
    w = block(key, e // 2)
    m = e % 2
    return u53(w[2 * m], w[2 * m + 1])


def normal_f64(key, e):
    w = block(key, e)
    u1 = ((w[0] >> 5) * 2.0 ** 26 + (w[1] >> 6) + 1) * 2.0 ** -53
    u2 = u53(w[2], w[3])
    return math.sqrt(-2.0 * math.log(u1)) * math.cos(6.283185307179586 * u2)


def categorical(key, r, logits):
    m = max(logits)
    e = [math.exp(l - m) for l in logits]
    s = 0.0
    for x in e:
        s += x
    w = block(key, r)
    t = u53(w[0], w[1]) * s
    c = 0.0
    last = 0
    for i, x in enumerate(e):
        c += x
        if x > 0:
            last = i
        if t < c:
            return i
    return last
