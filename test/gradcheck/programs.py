"""The gradient-check programs: each differentiates a loss with respect to `x` (loaded from
x.npy, f64) and emits `{y: loss, g: grad(loss, x)}` — one line, or one line per point of a dim
when the loss has one (`loss[i]`, `g[i] = grad(loss[i], p[i])` with `p[i] = x[i]`, so line k
holds the derivative of y_k with respect to x[k]).

A program is a dict: name, x (shape of x), pos (x must be positive: log, sqrt, pow), inputs
(other loaded f64 arrays: name -> shape; random, fixed seed), body (the .trl text defining `y`
or `loss[i]`).  `programs()` returns the hand-written list (every op, each temporal pattern)
followed by generated compositions, at least 50 in all.
"""
import random

UNARY = ["exp({})", "tanh({})", "sigmoid({})", "sin({})", "cos({})", "relu({}) * 1.5",
         "abs({}) * 0.5", "({}) ** 2", "({}) * ({})"]


def spatial():
    P = []

    def add(name, body, x=(3,), pos=False, **inputs):
        P.append(dict(name=name, body=body, x=list(x), pos=pos,
                      inputs={k: list(v) for k, v in inputs.items()}))

    add("sum-square", "y = sum(x * x)")
    add("mean-exp", "y = mean(exp(x))")
    add("log", "y = sum(log(x))", pos=True)
    add("sqrt", "y = sum(sqrt(x) * x)", pos=True)
    add("tanh", "y = sum(tanh(x))")
    add("sigmoid", "y = sum(sigmoid(x) * x)")
    add("relu", "y = sum(relu(x) * x)")
    add("abs", "y = sum(abs(x) * x)")
    add("sin-cos", "y = sum(sin(x) * cos(2.0 * x))")
    add("neg-sub", "y = sum(-x - (x - 1.0) * x)")
    add("div", "y = sum(w / x + x / (w * w + 1.0))", pos=True, w=(3,))
    add("pow-base", "y = sum(x ** 3.0 + pow(x, w * w))", pos=True, w=(3,))
    add("pow-exp", "y = sum(2.5 ** x)")
    add("mod", "y = sum((x * 3.0) % 0.7 + x % w)", pos=True, w=(3,))
    add("reduce-max", "y = max(x) + 0.1 * sum(x)", x=(5,))
    add("reduce-min", "y = min(x * w)", x=(4,), w=(4,))
    add("max-min-elem", "y = sum(max(x, w) * 2.0 + min(x, 0.1))", x=(4,), w=(4,))
    add("logsumexp", "y = logsumexp(x * 2.0)")
    add("logsumexp-axis", "y = sum(logsumexp(x, axis=1) * w)", x=(2, 3), w=(2,))
    add("softmax", "y = sum(softmax(x) * w)", w=(3,))
    add("softmax-axis0", "y = sum(softmax(x, axis=0) * w)", x=(2, 3), w=(2, 3))
    add("log-softmax", "y = sum(log_softmax(x) * w)", x=(2, 4), w=(2, 4))
    add("matmul-mm", "y = sum(tanh(x @ w))", x=(2, 3), w=(3, 4))
    add("matmul-mm-right", "y = sum(tanh(w @ x))", x=(3, 2), w=(4, 3))
    add("matmul-vm", "y = sum(sigmoid(x @ w))", x=(3,), w=(3, 2))
    add("matmul-mv", "y = sum(sigmoid(w @ x))", x=(3,), w=(2, 3))
    add("matmul-dot", "y = (x @ w) * (x @ x)", x=(3,), w=(3,))
    add("matmul-batch", "y = sum((x @ w) ** 2)", x=(2, 2, 3), w=(3, 2))
    add("transpose", "y = sum(transpose(x) * w)", x=(2, 3), w=(3, 2))
    add("transpose-axes", "y = sum(transpose(x, [1, 2, 0]) * w)", x=(2, 3, 2), w=(3, 2, 2))
    add("reshape", "y = sum(reshape(x, [6]) * w)", x=(2, 3), w=(6,))
    add("concat", "y = sum(concat(x, x * x, axis=0) * w)", x=(2,), w=(4,))
    add("stack", "y = sum(stack(x, x * w, axis=1) ** 2)", x=(3,), w=(3,))
    add("index-scalar", "y = x[1] * x[2] + x[-1]", x=(4,))
    add("index-2d", "y = sum(x[1, 0:2] * x[0, 1:3])", x=(2, 3))
    add("slice", "y = sum(x[1:3] ** 2)", x=(4,))
    add("gather-dup", "y = sum(gather(x, [2, 0, 2]) * w)", x=(3,), w=(3,))
    add("index-array", "y = sum(x[[1, 1, 0]] * w)", x=(3,), w=(3,))
    add("where", "y = sum(where(x > 0.0, x * x, -3.0 * x))", x=(5,))
    add("clamp", "y = sum(clamp(x, -0.5, 0.5) * x)", x=(5,))
    add("mean-axis", "y = sum(mean(x, axis=1) ** 2)", x=(2, 3))
    add("sum-axis0", "y = sum(sum(x, axis=0) ** 2)", x=(3, 2))
    add("max-axis", "y = sum(max(x, axis=1) * w)", x=(2, 3), w=(2,))
    add("cumsum", "y = sum(cumsum(x) ** 2)", x=(4,))
    add("cumsum-axis", "y = sum(cumsum(x, axis=1) ** 2)", x=(2, 3))
    add("broadcast", "y = sum((x + w) ** 2)", x=(3,), w=(2, 3))
    add("broadcast-ones", "y = sum((x * w) ** 2)", x=(2, 1), w=(2, 3))
    add("broadcast-scalar", "y = sum(w * x[0])", x=(2,), w=(2, 3))
    add("tuple-fn", "fn f(v) = (v * 2.0, exp(v))\ny = sum(f(x)[0] * f(x)[1])")
    add("argmax-mask", "y = sum(one_hot(argmax(x), 3, dtype=f64) * x * x)")
    add("mlp", "y = sum(tanh(tanh(x @ w1) @ w2))", x=(2, 3), w1=(3, 4), w2=(4, 2))
    add("full-zeros", "y = sum(full([3], x[0]) * w + zeros([3]))", x=(2,), w=(3,))
    add("cast-f64", "y = sum(f64(x > 0.0) * x + f64(3) * x)", x=(3,))
    return P


def temporal():
    P = []

    def add(name, body, x=(2,), pos=False, **inputs):
        P.append(dict(name=name, body=body, x=list(x), pos=pos,
                      inputs={k: list(v) for k, v in inputs.items()}))

    # forward recurrence (backprop through time), state read at t-1
    add("bptt-forward", """dim t < T = 5
h[0] = x * 0.5
h[t+1] = tanh(h[t] * w + 0.1 * f64(t))
y = mean(h[0:T+1])""", w=(2,))
    # a matrix recurrence with a loss at every step, x the weights
    add("bptt-matrix", """dim t < T = 4
h[0] = h0
h[t+1] = tanh(h[t] @ x + u[t])
y = sum(h[1:T+1]) + sum(h[T] ** 2)""", x=(2, 2), h0=(2,), u=(4, 2))
    # reverse recurrence (returns), read at t+1
    add("reverse-returns", """dim t < T = 5
r[t] = sum(x * o[t])
ret[T-1] = r[T-1]
ret[t] = r[t] + 0.9 * ret[t+1]
y = sum(ret[0:T] ** 2)""", x=(3,), o=(5, 3))
    # windows t-1 and t-2 with base cases
    add("window-t2", """dim t < T = 6
a[t] = x * f64(t + 1)
s[0] = a[0]
s[1] = a[1] + a[0]
s[t+2] = a[t+2] + 0.5 * a[t+1] + 0.25 * a[t] when t + 2 < T
y = sum(s[0:T] ** 2)""")
    # a read at a constant point and a read of the future
    add("const-and-future", """dim t < T = 4
a[t] = sin(x * f64(t))
c[t] = a[t] * a[0]
d[T-1] = c[T-1]
d[t] = c[t] * a[t+1]
y = sum(d[0:T])""")
    # clamped reads: the next step's value held at the end (a bootstrap), the window start
    # held at 0, and both ends clamped (pieces: constant, shifted, constant)
    add("clamped-next", """dim t < T = 5
v[t] = tanh(x * f64(t + 1))
b[t] = sum(v[min(t + 1, T - 1)] * v[t])
y = sum(b[0:T])""", x=(2,))
    add("clamped-prev", """dim t < T = 6
v[t] = sin(x * f64(t) + 0.3)
b[t] = sum(v[max(t - 2, 0)] * o[t])
y = sum(b[0:T] ** 2)""", x=(3,), o=(6, 3))
    add("clamped-both", """dim t < T = 7
v[t] = exp(x * 0.1 * f64(t))
b[t] = v[min(max(t - 1, 1), T - 2)] * f64(t + 1)
y = sum(b[0:T] * b[0:T])""", x=(2,))
    # a bootstrapped return: the value at min(t+1, T-1) inside a reverse recurrence
    add("clamped-bootstrap", """dim t < T = 5
val[t] = tanh(sum(x * o[t]))
ret[T-1] = val[T-1]
ret[t] = r[t] + 0.9 * val[min(t + 1, T - 1)] + 0.5 * ret[t+1]
y = sum(ret[0:T] ** 2)""", x=(3,), o=(5, 3), r=(5,))
    # a clamped read next to a batch dim, the loss summed over both
    add("clamped-batch", """dim b < B = 2
dim t < T = 4
h[b, t] = tanh(x * f64(t + b + 1))
l[b, t] = sum(h[b, min(t + 2, T - 1)] * o[b][t])
y = mean(l[0:B, 0:T])""", x=(2,), o=(2, 4, 2))
    # dynamic slices next to a static one: the block's adjoint placed along its own axis
    add("dynslice-next-to-batch", """dim b < B = 3
dim t < T = 4
h[b, t] = tanh(sum(x * o[b][t]))
m[t] = sum(h[0:B, t:T])
y = sum(m[0:T] ** 2)""", x=(2,), o=(3, 4, 2))
    add("dynslice-then-batch", """dim b < B = 2
dim t < T = 5
h[t, b] = sin(sum(x * o[t][b]) + 0.2)
m[t] = sum(h[max(t - 2, 0):t + 1, 0:B] * w[t])
y = sum(m[0:T] * m[0:T])""", x=(3,), o=(5, 2, 3), w=(5,))
    # guarded equations
    add("guards", """dim t < T = 6
a[t] = x * f64(t) when t < 3
a[t] = exp(x) otherwise
y = sum(a[0:T] ** 2)""")
    # the recurrence's own guards: h[t+1] only below 3, then constant
    add("guarded-recurrence", """dim t < T = 6
h[0] = x
h[t+1] = tanh(h[t] * 1.5) when t < 3
h[t+1] = h[t] * 0.5 otherwise
y = sum(h[T] * h[2])""")
    # reductions over dims: a batch b and a loss over (b, t)
    add("batch-mean", """dim b < B = 3
dim t < T = 4
l[b, t] = sum((x * o[b][t] - 0.3) ** 2)
y = mean(l[0:B, 0:T])""", x=(2,), o=(3, 4, 2))
    # a 2-d recurrence over (b, t) with per-b data, loss over the batch
    add("batch-bptt", """dim b < B = 2
dim t < T = 3
h[b, 0] = o[b]
h[b, t+1] = tanh(h[b, t] @ x)
y = sum(h[0:B, T] ** 2) + mean(h[0:B, 1])""", x=(2, 2), o=(2, 2))
    # slices inside a consumer with extra dims: each step reads a whole block
    add("slice-in-step", """dim t < T = 4
a[t] = x * f64(t + 1)
z[t] = sum(a[0:T] * f64(t))
y = sum(z[0:T] ** 2)""")
    # dynamic slices: suffix t:T, prefix 0:t+1, a clipped window, blocks of vectors
    add("dyn-suffix-prefix", """dim t < T = 4
h[t] = x * f64(t + 1)
m[t] = sum(h[t:T] * f64(t + 2)) + sum(h[0:t+1]) * 0.5
y = sum(m[0:T] ** 2)""", x=(3,))
    add("dyn-window", """dim t < T = 6
a[t] = sin(x * f64(t + 1))
w[t] = mean(a[max(t - 2, 0):t+1], axis=0)
y = sum(w[0:T] * w[0:T])""", x=(2,))
    add("dyn-recurrence", """dim t < T = 5
h[0] = x
h[t+1] = tanh(h[t] * 0.9 + 0.1)
r[t] = sum(h[t+1:T+1] ** 2) + sum(logsumexp(h[0:t+1], axis=0))
y = sum(r[0:T])""", x=(2,))
    add("dyn-scalar-blocks", """dim t < T = 5
a[t] = sum(x * x) * f64(t) + x[0]
c[t] = sum(a[t:T] * arange(T - t))
y = sum(c[0:T])""", x=(2,))
    # tuple-valued recurrence
    add("tuple-recurrence", """dim t < T = 3
(p, q)[0] = (x, x * x)
(p, q)[t+1] = (p[t] * q[t], q[t] + 0.5)
y = sum(p[T])""")
    # per-point grads: loss[i] with grad(loss[i], p[i]) where p[i] = x[i]
    add("per-point", """dim i < I = 3
dim t < T = 3
p[i] = x[i]
h[i, 0] = p[i]
h[i, t+1] = tanh(h[i, t] * p[i] + 0.1)
loss[i] = sum(h[i, T]) + mean(h[i, 0:T])
g[i] = grad(loss[i], p[i])""", x=(3, 2))
    # per-point grads through an iteration recurrence of parameters (the grad's own eq is
    # over i; p[i+1] uses it; the checked derivative is the one of loss[i] wrt net[i])
    add("per-point-mlp", """dim i < I = 2
dim b < B = 3
net[i] = (reshape(x[i][0:6], [2, 3]), x[i][6:9])
logits[b, i] = tanh(o[b] @ net[i][0]) * net[i][1]
lp[b, i] = log_softmax(logits[b, i])[a[b]]
loss[i] = -mean(lp[0:B, i] * r[0:B])
g[i] = grad(loss[i], net[i])""", x=(2, 9), o=(3, 2), r=(3,), a_int=(3,))
    return P


def generated(n, seed=0):
    """Random compositions: a chain of unary ops, a reduction, sometimes a recurrence."""
    rnd = random.Random(seed)
    P = []
    for k in range(n):
        e = "@"
        for _ in range(rnd.randint(2, 4)):
            op = rnd.choice(UNARY)
            e = op.format(e, e) if op.count("{}") == 2 else op.format(e)
            if rnd.random() < 0.3:
                e = "({} + w * {})".format(e, round(rnd.uniform(-1, 1), 3))
        red = rnd.choice(["sum({})", "mean({})", "logsumexp({})", "max({})"])
        if rnd.random() < 0.5:
            body = "y = " + red.format(e).replace("@", "x")
        else:
            T = rnd.randint(2, 5)
            body = ("dim t < T = {T}\nh[0] = x\nh[t+1] = tanh(h[t] * w + {c}) * 0.9 + 0.1 * h[t]\n"
                    "y = {r}").format(T=T, c=round(rnd.uniform(-1, 1), 3),
                                       r=red.format(e).replace("@", "h[T-{}]".format(rnd.randint(0, T))))
        P.append(dict(name="gen-%d" % k, body=body, x=[3], pos=False, inputs={"w": [3]}))
    return P


def programs():
    return spatial() + temporal() + generated(12)
