"""cr_math — gymnasium's classic-control environments with correctly rounded elementary
functions, the reference the environment tests compare trlc against.

trlc's f64 sin, cos, exp, log and pow (runtime/trl_math_f64.h, trl_math_trig.h) are correctly
rounded, so that the interpreter, a host build and a GPU compute the same bits (issue 18 point
5).  glibc's are not everywhere: against MPFR, glibc 2.36's sin/cos differ in the last bit for
about 1 in 700 arguments below 100, and its powf(u, 2) is not u·u rounded once for some u.  Where
glibc is right both references agree; where it is wrong, trlc agrees with gymnasium's formulas
evaluated with correct rounding, which is what patch() makes gymnasium compute: the module-level
sin / cos of acrobot.py (numpy's), math.sin / math.cos of cartpole.py and np.sin / np.cos of
pendulum.py are replaced by correctly rounded ones (mpmath at 300 bits, rounded to the nearest
double by exact rational arithmetic), counting the calls whose libm result differs.  The
squares x ** 2 in pendulum.py's cost (numpy scalar powers: glibc's pow and powf, not x · x
rounded once for some x) cannot be patched: fidelity.py checks the cost itself
(pendulum_cost_cr)."""
import math
import types
from fractions import Fraction

import mpmath
import numpy as np

mpmath.mp.prec = 300
calls = {"n": 0, "differ": 0}


def nearest(v):
    """The double nearest to mpmath value v (ties to even), through an exact Fraction."""
    sign, man, exp, _ = v._mpf_
    f = Fraction(man) * (Fraction(2) ** exp) if exp >= 0 else Fraction(man, 2 ** -exp)
    return float(-f if sign else f)


def _cr(mp_fn, libm_fn):
    def fn(x):
        if isinstance(x, np.ndarray):
            return np.vectorize(fn, otypes=[np.float64])(x)
        xf = float(x)
        if not math.isfinite(xf):
            return libm_fn(xf)
        r = nearest(mp_fn(mpmath.mpf(xf)))
        calls["n"] += 1
        calls["differ"] += r != libm_fn(xf)
        return np.float64(r)
    return fn


sin = _cr(mpmath.sin, math.sin)
cos = _cr(mpmath.cos, math.cos)


class _Numpy(types.ModuleType):
    """numpy with sin and cos correctly rounded (everything else numpy's)."""

    def __getattr__(self, name):
        return getattr(np, name)


def patch():
    """Makes the classic-control environments of this process use correctly rounded sin/cos."""
    from gymnasium.envs.classic_control import acrobot, cartpole, pendulum
    acrobot.sin, acrobot.cos = sin, cos
    m = types.SimpleNamespace(**{k: getattr(math, k) for k in dir(math) if not k.startswith("_")})
    m.sin, m.cos = sin, cos
    cartpole.math = m
    npx = _Numpy("numpy_cr")
    npx.sin, npx.cos = sin, cos
    pendulum.np = npx


def pendulum_cost_cr(th, thdot, u):
    """gymnasium's Pendulum cost angle_normalize(th) ** 2 + 0.1 * thdot ** 2 + 0.001 * (u ** 2)
    with numpy's types (th, thdot float64; u a float32 scalar: u ** 2 and 0.001 * it in
    float32) but every square correctly rounded (x * x; the float64 square of a float32 is
    exact), and whether glibc's pow / powf gave those squares too."""
    from gymnasium.envs.classic_control.pendulum import angle_normalize
    an, thdot, u = np.float64(angle_normalize(th)), np.float64(thdot), np.float32(u)
    a2, t2, u2 = an * an, thdot * thdot, np.float32(np.float64(u) * np.float64(u))
    glibc_right = bool(an ** 2 == a2 and thdot ** 2 == t2 and u ** 2 == u2)
    return a2 + 0.1 * t2 + 0.001 * u2, glibc_right


def summary():
    """One line: how many patched calls glibc rounded otherwise."""
    return f"correctly rounded sin/cos: {calls['n']} calls, {calls['differ']} where glibc's last bit differs"
