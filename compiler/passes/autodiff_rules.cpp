// autodiff_rules — the adjoint rules: the spatial reverse sweep over one expression (class Sweep,
// passes/autodiff_impl.h), standard reverse accumulation over the expression DAG with shared
// nodes accumulating, and per operation the adjoint of its gradient-carrying arguments (unary
// rows of ir/ops.def, binary operators, indexing, builtins).  Also the adjoint values of tuples
// (Adj) and which arguments carry a gradient.  Derivative conventions follow PyTorch/JAX (see
// autodiff.cpp's file comment).
#include <algorithm>

#include "ir/ops.h"
#include "passes/autodiff_impl.h"

namespace trlc::autodiff_detail {

// ---- adjoint values (a tree for tuples) ------------------------------------------------------

void accumulate(Adj &acc, const Adj &g, Loc loc) {
    if (g.zero()) return;
    if (g.v) {
        acc.v = acc.v ? bin(BinaryOp::Add, acc.v, g.v, loc) : g.v;
        return;
    }
    if (acc.elems.size() < g.elems.size()) acc.elems.resize(g.elems.size());
    for (size_t k = 0; k < g.elems.size(); ++k) accumulate(acc.elems[k], g.elems[k], loc);
}

/** Leaves of a (tuple) type: paths of element indices. */
void leaves(const Type &t, std::vector<int> &path, std::vector<std::vector<int>> &out) {
    if (!t.is_tuple) {
        out.push_back(path);
        return;
    }
    for (size_t k = 0; k < t.elems.size(); ++k) {
        path.push_back(static_cast<int>(k));
        leaves(t.elems[k], path, out);
        path.pop_back();
    }
}

const Type &leaf_type(const Type &t, const std::vector<int> &path) {
    const Type *c = &t;
    for (int k : path) c = &c->elems[k];
    return *c;
}

NodePtr leaf_adj(const Adj &a, const std::vector<int> &path) {
    const Adj *c = &a;
    for (int k : path) {
        if (k >= static_cast<int>(c->elems.size())) return nullptr;
        c = &c->elems[k];
    }
    return c->v;
}

// ---- gradient-carrying arguments -----------------------------------------------------------

/** The argument positions of "n" through which a gradient flows. */
std::vector<size_t> grad_args(const Node &n) {
    std::vector<size_t> out;
    if (!n.type.is_tuple && !is_float_dtype(n.type.dtype) && n.kind != NodeKind::Tuple) return out;
    switch (n.kind) {
    case NodeKind::Const:
    case NodeKind::Coord:
    case NodeKind::Read:
    case NodeKind::Rng: return out;
    case NodeKind::Unary:
        if (n.uop == UnaryOp::StopGrad) return out;
        return {0};
    case NodeKind::Where: return {1, 2};
    case NodeKind::Index: return {0};
    case NodeKind::Builtin:
        switch (n.builtin) {
        case BuiltinOp::Gather: return {0};
        case BuiltinOp::ScatterAdd: return {1};
        case BuiltinOp::Full: return n.args.empty() ? out : std::vector<size_t>{n.args.size() - 1};
        case BuiltinOp::Argmax:
        case BuiltinOp::OneHot:
        case BuiltinOp::Arange:
        case BuiltinOp::Zeros:
        case BuiltinOp::Ones:
        case BuiltinOp::Uniform:
        case BuiltinOp::Normal:
        case BuiltinOp::Categorical:
        case BuiltinOp::FoldIn: return out;
        default: break;
        }
        break;
    case NodeKind::Grad: return {0, 1};
    default: break;
    }
    for (size_t k = 0; k < n.args.size(); ++k) out.push_back(k);
    return out;
}

bool contains_rng(const NodePtr &n, std::unordered_map<const Node *, bool> &memo) {
    auto it = memo.find(n.get());
    if (it != memo.end()) return it->second;
    bool r = n->kind == NodeKind::Rng;
    for (const NodePtr &a : n->args) r = r || contains_rng(a, memo);
    for (const SpatialIndex &s : n->sindex)
        if (s.value) r = r || contains_rng(s.value, memo);
    return memo[n.get()] = r;
}

/** The tensors read through gradient-carrying positions of "body". */
void carried_reads(const NodePtr &n, std::set<const Node *> &seen, std::set<int> &out) {
    if (!seen.insert(n.get()).second) return;
    if (n->kind == NodeKind::Read) {
        if (has_float(n->type)) out.insert(n->tensor);
        return;
    }
    for (size_t k : grad_args(*n)) carried_reads(n->args[k], seen, out);
}

// ---- the spatial reverse sweep over one expression ------------------------------------------

/** Reverse accumulation from "root" with adjoint "seed"; fills reads (read node, adjoint). */
void Sweep::run(const NodePtr &root, Adj seed) {
    if (!active(root)) return;
    std::vector<NodePtr> order;
    std::set<const Node *> seen;
    std::function<void(const NodePtr &)> dfs = [&](const NodePtr &n) {
        if (!seen.insert(n.get()).second) return;
        for (size_t k : grad_args(*n))
            if (active(n->args[k])) dfs(n->args[k]);
        order.push_back(n);
    };
    dfs(root);
    adj_[root.get()] = std::move(seed);
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
        const NodePtr &n = *it;
        auto a = adj_.find(n.get());
        if (a == adj_.end() || a->second.zero()) continue;
        Adj g = a->second;
        if (n->kind == NodeKind::Read) {
            reads.push_back({n, g});
            continue;
        }
        back(n, g);
    }
}

bool Sweep::active(const NodePtr &n) {
    auto it = active_.find(n.get());
    if (it != active_.end()) return it->second;
    bool r = false;
    if (n->kind == NodeKind::Read) {
        r = diff_[n->tensor] && has_float(n->type);
    } else {
        for (size_t k : grad_args(*n)) r = active(n->args[k]) || r;
    }
    if (r && n->kind == NodeKind::Grad)
        throw AdError{n->loc, "grad of a value that depends on grad(…) is not supported"};
    if (r && n->kind == NodeKind::Extern)
        throw AdError{n->loc, "grad through the extern function '" + n->name + "' is not supported"};
    if (r && n->kind == NodeKind::Builtin && n->builtin == BuiltinOp::DiscountedCumsum)
        throw AdError{n->loc, "grad through discounted_cumsum is not supported yet"};
    if (r) {
        for (size_t k = 0; k < n->args.size(); ++k)
            if (contains_rng(n->args[k], rng_))
                throw AdError{n->loc, "grad through an expression that draws random numbers "
                                      "(rng) is not supported yet; compute the random value "
                                      "in a tensor of its own and read it"};
    }
    return active_[n.get()] = r;
}

void Sweep::give(const NodePtr &arg, NodePtr g) {
    if (!g || !active(arg)) return;
    Adj a;
    a.v = std::move(g);
    accumulate(adj_[arg.get()], a, arg->loc);
}

void Sweep::give(const NodePtr &arg, const Adj &g) {
    if (!active(arg)) return;
    accumulate(adj_[arg.get()], g, arg->loc);
}

NodePtr Sweep::keepdims(NodePtr g, const Type &like, const std::vector<int64_t> &axes, Loc loc) {
    if (axes.size() == like.shape.size()) return g;  // a scalar broadcasts as it is
    std::vector<Extent> keep = like.shape;
    for (int64_t a : axes) keep[a] = sext(1);
    return reshape_(std::move(g), keep, loc);
}

/** g as a full array of shape "like" (g has x's shape with "axes" removed). */
NodePtr Sweep::expand(NodePtr g, const Type &like, const std::vector<int64_t> &axes, Loc loc) {
    NodePtr gk = keepdims(std::move(g), like, axes, loc);
    return bin(BinaryOp::Add, zeros_of(like, loc), gk, loc);
}

std::vector<int64_t> Sweep::red_axes(const Node &n, size_t rank) {
    std::vector<int64_t> ax;
    if (n.has_axes && !n.axes.empty()) {
        for (int64_t a : n.axes) ax.push_back(a < 0 ? a + static_cast<int64_t>(rank) : a);
    } else {
        for (size_t k = 0; k < rank; ++k) ax.push_back(static_cast<int64_t>(k));
    }
    std::sort(ax.begin(), ax.end());
    return ax;
}

/** Scatter "g" (the adjoint of an indexing of x, shaped as its result) into x's static
 *  shape: "apply" (the same indexing) applied to an iota of x's flat positions says where
 *  each element of g came from, and scatter_add sums g's elements into those positions in
 *  row-major order: for x[:, 0] of an [N, 1] x, adj_x = scatter_add(iota[:, 0], g, N),
 *  O(N) where the one_hot product it replaced was O(N²) (same bits: the one_hot sum added
 *  the same terms in the same order, plus exact zeros). */
NodePtr Sweep::scatter_via_iota(const NodePtr &x, const std::function<NodePtr(NodePtr)> &apply, NodePtr g, Loc loc) {
    const Type &xt = x->type;
    int64_t N = 1;
    for (const Extent &e : xt.shape) {
        if (!e.is_static())
            throw AdError{loc, "grad through indexing of an array with a dynamic shape is not supported yet"};
        N *= e.max_value;
    }
    Node io;
    io.kind = NodeKind::Const;
    io.type = arr_type(DType::I32, xt.shape);
    io.loc = loc;
    for (int64_t k = 0; k < N; ++k) io.data.push_back(static_cast<double>(k));
    NodePtr idx = apply(mk(std::move(io)));
    bool same = g->type.shape.size() == idx->type.shape.size();
    for (size_t k = 0; same && k < g->type.shape.size(); ++k)
        same = g->type.shape[k].max_value == idx->type.shape[k].max_value;
    if (!same)  // one value per index (g broadcast, e.g. a scalar adjoint)
        g = bin(BinaryOp::Add, zeros_of(arr_type(g->type.dtype, idx->type.shape), loc), g, loc);
    Node sc;
    sc.kind = NodeKind::Builtin;
    sc.builtin = BuiltinOp::ScatterAdd;
    sc.int_attr = N;
    sc.type = arr_type(g->type.dtype, {sext(N)});
    sc.args = {idx, g};
    sc.loc = loc;
    return reshape_(mk(std::move(sc)), xt.shape, loc);
}

void Sweep::back(const NodePtr &np, const Adj &ga) {
    const Node &n = *np;
    Loc loc = n.loc;
    switch (n.kind) {
    case NodeKind::Tuple:
        for (size_t k = 0; k < n.args.size(); ++k)
            if (k < ga.elems.size()) give(n.args[k], ga.elems[k]);
        return;
    case NodeKind::TupleGet: {
        Adj t;
        t.elems.resize(n.args[0]->type.elems.size());
        t.elems[n.int_attr] = ga;
        give(n.args[0], t);
        return;
    }
    default: break;
    }
    if (n.type.is_tuple) throw AdError{loc, "grad through this tuple-valued expression is not supported yet"};
    NodePtr g = ga.v;
    if (!g) return;
    DType d = n.type.dtype;
    auto one = [&] { return cst(d, 1.0, loc); };
    auto A = [&](size_t k) { return n.args[k]; };
    switch (n.kind) {
    case NodeKind::Unary: {
        // x's adjoint: the formula of ir/ops.def's adjoint column, in these builders.
        const NodePtr &x = A(0), &y = np;
        auto C = [&](double v) { return cst(d, v, loc); };
#define TRL_UNARY(E, ...)                                                                                              \
    auto E = [&](NodePtr a) { return un(UnaryOp::E, std::move(a), loc); };                                             \
    (void)E;
#include "ir/ops.def"
        auto Mul = [&](NodePtr a, NodePtr b) { return bin(BinaryOp::Mul, a, b, loc); };
        auto Div = [&](NodePtr a, NodePtr b) { return bin(BinaryOp::Div, a, b, loc); };
        auto Sub = [&](NodePtr a, NodePtr b) { return bin(BinaryOp::Sub, a, b, loc); };
        auto Gt = [&](NodePtr a, NodePtr b) { return bin(BinaryOp::Gt, a, b, loc); };
        auto Where = [&](NodePtr c, NodePtr a, NodePtr b) { return where_(c, a, b, loc); };
        (void)Mul, (void)Div, (void)Sub, (void)Gt, (void)Where, (void)y;
        NodePtr dx;
        switch (n.uop) {
#define TRL_UNARY(E, name, typing, f32, f64, i32, check, adjoint, ...)                                                 \
    case UnaryOp::E:                                                                                                   \
        dx = adjoint;                                                                                                  \
        break;
#include "ir/ops.def"
        }
        if (dx) give(x, dx);  // none: zero almost everywhere (floor, sign, …)
        return;
    }
    case NodeKind::Binary: {
        const NodePtr &a = A(0), &b = A(1);
        auto ga_ = [&](NodePtr v) { give(a, unbroadcast(v, a->type.shape, loc)); };
        auto gb_ = [&](NodePtr v) { give(b, unbroadcast(v, b->type.shape, loc)); };
        switch (n.bop) {
        case BinaryOp::Add:
            ga_(g);
            gb_(g);
            return;
        case BinaryOp::Sub:
            ga_(g);
            gb_(un(UnaryOp::Neg, g, loc));
            return;
        case BinaryOp::Mul:
            if (active(a)) ga_(bin(BinaryOp::Mul, g, b, loc));
            if (active(b)) gb_(bin(BinaryOp::Mul, g, a, loc));
            return;
        case BinaryOp::Div:
            if (active(a)) ga_(bin(BinaryOp::Div, g, b, loc));
            if (active(b)) gb_(un(UnaryOp::Neg, bin(BinaryOp::Div, bin(BinaryOp::Mul, g, np, loc), b, loc), loc));
            return;
        case BinaryOp::Mod:
            ga_(g);
            if (active(b))
                gb_(un(UnaryOp::Neg, bin(BinaryOp::Mul, g, un(UnaryOp::Floor, bin(BinaryOp::Div, a, b, loc), loc), loc),
                       loc));
            return;
        case BinaryOp::Pow:
            if (active(a))
                ga_(bin(BinaryOp::Mul, g,
                        bin(BinaryOp::Mul, b, bin(BinaryOp::Pow, a, bin(BinaryOp::Sub, b, one(), loc), loc), loc),
                        loc));
            if (active(b)) gb_(bin(BinaryOp::Mul, g, bin(BinaryOp::Mul, np, un(UnaryOp::Log, a, loc), loc), loc));
            return;
        case BinaryOp::Min:
        case BinaryOp::Max: {
            BinaryOp wins = n.bop == BinaryOp::Max ? BinaryOp::Gt : BinaryOp::Lt;
            NodePtr half = bin(BinaryOp::Mul, g, cst(d, 0.5, loc), loc), z = cst(d, 0, loc);
            NodePtr tie = bin(BinaryOp::Eq, a, b, loc);
            if (active(a)) ga_(where_(bin(wins, a, b, loc), g, where_(tie, half, z, loc), loc));
            if (active(b)) gb_(where_(bin(wins, b, a, loc), g, where_(tie, half, z, loc), loc));
            return;
        }
        default: return;
        }
    }
    case NodeKind::Where: {
        const NodePtr &c = A(0), &a = A(1), &b = A(2);
        NodePtr z = cst(d, 0, loc);
        if (active(a)) give(a, unbroadcast(where_(c, g, z, loc), a->type.shape, loc));
        if (active(b)) give(b, unbroadcast(where_(c, z, g, loc), b->type.shape, loc));
        return;
    }
    case NodeKind::Cast: give(A(0), cast_(g, A(0)->type.dtype, loc)); return;
    case NodeKind::Index: scatter_back(n, g, loc); return;
    case NodeKind::Builtin: builtin_back(np, g); return;
    default: return;
    }
}

/** The adjoint "g" of an indexing node "n" (spatial Index, gather) given to n.args[0]: the
 *  same indexing applied to an iota of args[0]'s positions says where each element came
 *  from. */
void Sweep::scatter_back(const Node &n, NodePtr g, Loc loc) {
    const NodePtr &x = n.args[0];
    if (!active(x)) return;
    Node copy = n;
    auto apply = [copy](NodePtr iota) {
        Node c = copy;
        c.args[0] = iota;
        c.type.dtype = DType::I32;
        return mk(std::move(c));
    };
    give(x, scatter_via_iota(x, apply, std::move(g), loc));
}

void Sweep::builtin_back(const NodePtr &np, NodePtr g) {
    const Node &n = *np;
    Loc loc = n.loc;
    DType d = n.type.dtype;
    const NodePtr &x = n.args.empty() ? np : n.args[0];
    size_t rank = x->type.shape.size();
    switch (n.builtin) {
    case BuiltinOp::Sum:
    case BuiltinOp::Mean: {
        auto ax = red_axes(n, rank);
        NodePtr e = expand(g, x->type, ax, loc);
        if (n.builtin == BuiltinOp::Mean) e = bin(BinaryOp::Div, e, count_node(x->type.shape, ax, d, loc), loc);
        give(x, e);
        return;
    }
    case BuiltinOp::ReduceMax:
    case BuiltinOp::ReduceMin: {
        auto ax = red_axes(n, rank);
        NodePtr mask = cast_(bin(BinaryOp::Eq, x, keepdims(np, x->type, ax, loc), loc), d, loc);
        NodePtr cnt = keepdims(sum_axes(mask, ax, loc), x->type, ax, loc);
        give(x, bin(BinaryOp::Div, bin(BinaryOp::Mul, mask, keepdims(g, x->type, ax, loc), loc), cnt, loc));
        return;
    }
    case BuiltinOp::Logsumexp: {
        auto ax = red_axes(n, rank);
        NodePtr p = un(UnaryOp::Exp, bin(BinaryOp::Sub, x, keepdims(np, x->type, ax, loc), loc), loc);
        give(x, bin(BinaryOp::Mul, p, keepdims(g, x->type, ax, loc), loc));
        return;
    }
    case BuiltinOp::Softmax:
    case BuiltinOp::LogSoftmax: {
        int64_t a = n.has_axes && !n.axes.empty() ? n.axes[0] : -1;
        if (a < 0) a += static_cast<int64_t>(rank);
        std::vector<int64_t> ax = {a};
        if (n.builtin == BuiltinOp::Softmax) {
            NodePtr s = keepdims(sum_axes(bin(BinaryOp::Mul, g, np, loc), ax, loc), x->type, ax, loc);
            give(x, bin(BinaryOp::Mul, np, bin(BinaryOp::Sub, g, s, loc), loc));
        } else {
            NodePtr s = keepdims(sum_axes(g, ax, loc), x->type, ax, loc);
            give(x, bin(BinaryOp::Sub, g, bin(BinaryOp::Mul, un(UnaryOp::Exp, np, loc), s, loc), loc));
        }
        return;
    }
    case BuiltinOp::MatMul: {
        NodePtr a = n.args[0], b = n.args[1];
        bool a1 = a->type.shape.size() == 1, b1 = b->type.shape.size() == 1;
        NodePtr a2 = a1 ? reshape_(a, {sext(1), a->type.shape[0]}, loc) : a;
        NodePtr b2 = b1 ? reshape_(b, {b->type.shape[0], sext(1)}, loc) : b;
        std::vector<Extent> gs = g->type.shape;
        if (a1) gs.insert(gs.end() - (b1 ? 0 : 1), sext(1));
        if (b1) gs.push_back(sext(1));
        NodePtr g2 = reshape_(g, gs, loc);
        if (active(a))
            give(a,
                 reshape_(unbroadcast(matmul_(g2, swap_last2(b2, loc), loc), a2->type.shape, loc), a->type.shape, loc));
        if (active(b))
            give(b,
                 reshape_(unbroadcast(matmul_(swap_last2(a2, loc), g2, loc), b2->type.shape, loc), b->type.shape, loc));
        return;
    }
    case BuiltinOp::Transpose: {
        std::vector<int64_t> perm = n.has_axes ? n.axes : std::vector<int64_t>{};
        if (perm.empty())
            for (size_t k = rank; k-- > 0;) perm.push_back(static_cast<int64_t>(k));
        std::vector<int64_t> inv(perm.size());
        for (size_t k = 0; k < perm.size(); ++k) inv[perm[k]] = static_cast<int64_t>(k);
        give(x, transpose_(g, inv, loc));
        return;
    }
    case BuiltinOp::Reshape: give(x, reshape_(g, x->type.shape, loc)); return;
    case BuiltinOp::Concat:
    case BuiltinOp::Stack: {
        int64_t axis = n.has_axes && !n.axes.empty() ? n.axes[0] : 0;
        if (axis < 0) axis += static_cast<int64_t>(g->type.shape.size());
        int64_t off = 0;
        for (const NodePtr &a : n.args) {
            Node ix;
            ix.kind = NodeKind::Index;
            ix.loc = loc;
            ix.args = {g};
            ix.type = arr_type(d, {});
            for (int64_t k = 0; k < axis; ++k) {
                SpatialIndex s;
                s.kind = SpatialIndex::Full;
                ix.sindex.push_back(s);
            }
            SpatialIndex s;
            if (n.builtin == BuiltinOp::Stack) {
                s.kind = SpatialIndex::Scalar;
                s.value = cst(DType::I32, static_cast<double>(off), loc);
                ix.args.push_back(s.value);
                off += 1;
            } else {
                const Extent &e = a->type.shape[axis];
                if (!e.is_static()) throw AdError{loc, "grad through concat of dynamic extents is not supported yet"};
                s.kind = SpatialIndex::Slice;
                s.lo = aff_ix(aff_const(off));
                s.hi = aff_ix(aff_const(off + e.max_value));
                off += e.max_value;
            }
            ix.sindex.push_back(s);
            ix.type.shape = a->type.shape;
            if (active(a)) give(a, mk(std::move(ix)));
        }
        return;
    }
    case BuiltinOp::Gather: scatter_back(n, g, loc); return;
    case BuiltinOp::Cumsum: {
        if (!(n.has_axes && !n.axes.empty()) && rank != 1)
            throw AdError{loc, "grad through cumsum without axis= is not supported yet"};
        int64_t a = n.has_axes && !n.axes.empty() ? n.axes[0] : 0;
        if (a < 0) a += static_cast<int64_t>(rank);
        std::vector<int64_t> ax = {a};
        // reverse cumsum: Σ_{j >= k} g_j = total - cumsum(g)_k + g_k
        NodePtr tot = keepdims(sum_axes(g, ax, loc), x->type, ax, loc);
        NodePtr cs = builtin(BuiltinOp::Cumsum, g->type, {g}, loc, ax, true);
        give(x, bin(BinaryOp::Add, bin(BinaryOp::Sub, tot, cs, loc), g, loc));
        return;
    }
    case BuiltinOp::Clamp: {
        const NodePtr &lo = n.args[1], &hi = n.args[2];
        NodePtr z = cst(d, 0, loc);
        NodePtr in = bin(BinaryOp::And, bin(BinaryOp::Ge, x, lo, loc), bin(BinaryOp::Le, x, hi, loc), loc);
        if (active(x)) give(x, unbroadcast(where_(in, g, z, loc), x->type.shape, loc));
        if (active(lo)) give(lo, unbroadcast(where_(bin(BinaryOp::Lt, x, lo, loc), g, z, loc), lo->type.shape, loc));
        if (active(hi))
            give(hi, unbroadcast(
                         where_(bin(BinaryOp::And, bin(BinaryOp::Gt, x, hi, loc), bin(BinaryOp::Ge, x, lo, loc), loc),
                                g, z, loc),
                         hi->type.shape, loc));
        return;
    }
    case BuiltinOp::Full: {
        const NodePtr &v = n.args.back();
        std::vector<int64_t> all;
        for (size_t k = 0; k < g->type.shape.size(); ++k) all.push_back(static_cast<int64_t>(k));
        give(v, cast_(sum_axes(g, all, loc), v->type.dtype, loc));
        return;
    }
    default: throw AdError{loc, "grad through this builtin is not supported yet"};
    }
}

}  // namespace trlc::autodiff_detail
