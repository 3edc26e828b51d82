#!/usr/bin/env python3
"""math_fit — the coefficients of trl::tanh_f32's polynomial (runtime/trl_math.h).

tanh(x) ≈ x + x³·P(x²) on [0, C]; P of degree D is fitted to (tanh x - x) / x³ by Lawson's
iteratively reweighted least squares with the weight x³ / tanh(x), i.e. for the relative error of
tanh, on Chebyshev points; mpmath (120 bits) gives the reference values.  The coefficients are
then rounded to float32 and the max relative error with them is printed.

    python3 tools/bench/math_fit.py 0.625 5     # trl_math.h: C = 0.625, D = 5, 2^-28.48

(The measured error of the whole float evaluation is tools/bench/math_exhaustive.cpp's job.)
"""
import numpy as np, mpmath as mp, sys
mp.mp.prec = 120
c = float(sys.argv[1]); deg = int(sys.argv[2])
N = 4000
# Chebyshev-distributed points in x over (0, c]
xs = np.array([c*(1+np.cos(np.pi*(k+0.5)/N))/2 for k in range(N)])
xs = xs[xs > 1e-4]
t = xs*xs
ref = np.array([float(mp.tanh(mp.mpf(x))) for x in xs])
g = np.array([float((mp.tanh(mp.mpf(x)) - mp.mpf(x))/mp.mpf(x)**3) for x in xs])
# relative error of tanh: x^3 * dg / tanh(x); minimize max |w * (P(t)-g)| with w = x^3/tanh x
w = xs**3/ref
A = np.vstack([t**j for j in range(deg+1)]).T
u = np.ones(len(t))/len(t)
for it in range(300):
    W = np.sqrt(u)*w
    coef, *_ = np.linalg.lstsq(A*W[:,None], g*W, rcond=None)
    err = np.abs(w*(A@coef - g))
    u = u*err; u /= u.sum()
print("float64 coefficients: max relative error 2^%.2f" % np.log2(err.max()))
cf = np.float32(coef)
e = np.abs(w*(A@cf.astype(np.float64) - g)).max()
print("float32 coefficients (exact arithmetic): max relative error 2^%.2f" % np.log2(e))
for j, v in enumerate(cf):
    print("  c%d = %s  (%.9e)" % (j, float(v).hex(), v))  # P(t) = c0 + c1 t + ...
