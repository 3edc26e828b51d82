// autodiff_builders — the IR that autodiff writes (passes/autodiff_impl.h): node builders that
// compute each node's type (constants, zeros, elementwise ops, casts, builtins, sums, reshapes,
// transposes, matmuls, numpy's broadcasting and its reverse), index and count nodes, affine forms
// over an equation's variables and guards over them (substitution, negation, truth on a box).
#include <algorithm>

#include "passes/autodiff_impl.h"

namespace trlc::autodiff_detail {

// ---- node builders ---------------------------------------------------------------------------

NodePtr mk(Node n) { return std::make_shared<const Node>(std::move(n)); }

Extent sext(int64_t v) { return Extent{v, nullptr}; }

bool ext_eq(const Extent &a, const Extent &b) {
    if (a.is_static() != b.is_static()) return false;
    if (a.is_static()) return a.max_value == b.max_value;
    return index_expr_to_string(*a.dynamic) == index_expr_to_string(*b.dynamic);
}

bool is_one(const Extent &e) { return e.is_static() && e.max_value == 1; }

Type arr_type(DType d, std::vector<Extent> shape) {
    Type t;
    t.dtype = d;
    t.shape = std::move(shape);
    return t;
}

bool is_float_dtype(DType d) { return d == DType::F32 || d == DType::F64; }

bool has_float(const Type &t) {
    if (!t.is_tuple) return is_float_dtype(t.dtype);
    for (const Type &e : t.elems)
        if (has_float(e)) return true;
    return false;
}

NodePtr cst(DType d, double v, Loc loc) {
    Node n;
    n.kind = NodeKind::Const;
    n.type = arr_type(d, {});
    n.data = {v};
    n.loc = loc;
    return mk(std::move(n));
}

NodePtr zeros_of(const Type &t, Loc loc) {
    Node n;
    n.loc = loc;
    n.type = t;
    if (t.is_tuple) {
        n.kind = NodeKind::Tuple;
        for (const Type &e : t.elems) n.args.push_back(zeros_of(e, loc));
        return mk(std::move(n));
    }
    if (t.shape.empty()) return cst(t.dtype, 0.0, loc);
    n.kind = NodeKind::Builtin;
    n.builtin = BuiltinOp::Zeros;
    return mk(std::move(n));
}

std::vector<Extent> broadcast(const std::vector<Extent> &a, const std::vector<Extent> &b) {
    size_t r = std::max(a.size(), b.size());
    std::vector<Extent> out(r);
    for (size_t k = 0; k < r; ++k) {
        const Extent *ea = k + a.size() >= r ? &a[k + a.size() - r] : nullptr;
        const Extent *eb = k + b.size() >= r ? &b[k + b.size() - r] : nullptr;
        if (!ea)
            out[k] = *eb;
        else if (!eb)
            out[k] = *ea;
        else
            out[k] = is_one(*ea) ? *eb : *ea;
    }
    return out;
}

bool is_cmp(BinaryOp op) {
    return op == BinaryOp::Lt || op == BinaryOp::Le || op == BinaryOp::Gt || op == BinaryOp::Ge || op == BinaryOp::Eq ||
           op == BinaryOp::Ne;
}

NodePtr bin(BinaryOp op, NodePtr a, NodePtr b, Loc loc) {
    Node n;
    n.kind = NodeKind::Binary;
    n.bop = op;
    n.loc = loc;
    DType d = a->type.dtype;
    n.type = arr_type(is_cmp(op) || op == BinaryOp::And || op == BinaryOp::Or ? DType::Bool : d,
                      broadcast(a->type.shape, b->type.shape));
    n.args = {std::move(a), std::move(b)};
    return mk(std::move(n));
}

NodePtr un(UnaryOp op, NodePtr a, Loc loc) {
    Node n;
    n.kind = NodeKind::Unary;
    n.uop = op;
    n.loc = loc;
    n.type = a->type;
    n.args = {std::move(a)};
    return mk(std::move(n));
}

NodePtr where_(NodePtr c, NodePtr a, NodePtr b, Loc loc) {
    Node n;
    n.kind = NodeKind::Where;
    n.loc = loc;
    n.type = arr_type(a->type.dtype, broadcast(c->type.shape, broadcast(a->type.shape, b->type.shape)));
    n.args = {std::move(c), std::move(a), std::move(b)};
    return mk(std::move(n));
}

NodePtr cast_(NodePtr a, DType d, Loc loc) {
    if (a->type.dtype == d) return a;
    Node n;
    n.kind = NodeKind::Cast;
    n.loc = loc;
    n.type = arr_type(d, a->type.shape);
    n.args = {std::move(a)};
    return mk(std::move(n));
}

NodePtr builtin(BuiltinOp op, Type t, std::vector<NodePtr> args, Loc loc, std::vector<int64_t> axes, bool has_axes) {
    Node n;
    n.kind = NodeKind::Builtin;
    n.builtin = op;
    n.type = std::move(t);
    n.args = std::move(args);
    n.loc = loc;
    n.axes = std::move(axes);
    n.has_axes = has_axes;
    return mk(std::move(n));
}

/** sum over "axes" (sorted, distinct); no axes: "x" itself. */
NodePtr sum_axes(NodePtr x, std::vector<int64_t> axes, Loc loc) {
    if (axes.empty()) return x;
    std::sort(axes.begin(), axes.end());
    std::vector<Extent> s;
    for (size_t k = 0; k < x->type.shape.size(); ++k)
        if (!std::binary_search(axes.begin(), axes.end(), static_cast<int64_t>(k))) s.push_back(x->type.shape[k]);
    Type t = arr_type(x->type.dtype, s);
    return builtin(BuiltinOp::Sum, t, {std::move(x)}, loc, std::move(axes), true);
}

NodePtr reshape_(NodePtr x, const std::vector<Extent> &shape, Loc loc) {
    bool same = x->type.shape.size() == shape.size();
    for (size_t k = 0; same && k < shape.size(); ++k) same = ext_eq(x->type.shape[k], shape[k]);
    if (same) return x;
    // A dynamic extent may only pass through unchanged, with unit axes added or removed
    // around it ([t + 1] <-> [t + 1, 1], the vector cases of matmul): the same elements in
    // the same order, whatever t.
    std::vector<const Extent *> from, to;
    bool dynamic = false;
    for (const Extent &e : x->type.shape) {
        dynamic = dynamic || !e.is_static();
        if (!is_one(e)) from.push_back(&e);
    }
    for (const Extent &e : shape) {
        dynamic = dynamic || !e.is_static();
        if (!is_one(e)) to.push_back(&e);
    }
    if (dynamic) {
        bool units_only = from.size() == to.size();
        for (size_t k = 0; units_only && k < from.size(); ++k) units_only = ext_eq(*from[k], *to[k]);
        if (!units_only) throw AdError{loc, "grad through a reshape of a dynamic shape is not supported yet"};
    }
    Type t = arr_type(x->type.dtype, shape);
    return builtin(BuiltinOp::Reshape, t, {std::move(x)}, loc);
}

NodePtr transpose_(NodePtr x, const std::vector<int64_t> &perm, Loc loc) {
    std::vector<Extent> s;
    for (int64_t p : perm) s.push_back(x->type.shape[p]);
    Type t = arr_type(x->type.dtype, s);
    return builtin(BuiltinOp::Transpose, t, {std::move(x)}, loc, perm, true);
}

NodePtr swap_last2(NodePtr x, Loc loc) {
    size_t r = x->type.shape.size();
    std::vector<int64_t> perm;
    for (size_t k = 0; k < r; ++k) perm.push_back(static_cast<int64_t>(k));
    std::swap(perm[r - 1], perm[r - 2]);
    return transpose_(std::move(x), perm, loc);
}

NodePtr matmul_(NodePtr a, NodePtr b, Loc loc) {
    const auto &sa = a->type.shape, &sb = b->type.shape;
    std::vector<Extent> ba(sa.begin(), sa.end() - 2), bb(sb.begin(), sb.end() - 2);
    std::vector<Extent> s = broadcast(ba, bb);
    s.push_back(sa[sa.size() - 2]);
    s.push_back(sb.back());
    Type t = arr_type(a->type.dtype, s);
    return builtin(BuiltinOp::MatMul, t, {std::move(a), std::move(b)}, loc);
}

/** Sum "g" down to the shape "target" (numpy broadcasting in reverse). */
NodePtr unbroadcast(NodePtr g, const std::vector<Extent> &target, Loc loc) {
    size_t r = g->type.shape.size(), tr = target.size();
    std::vector<int64_t> axes;
    for (size_t k = 0; k + tr < r; ++k) axes.push_back(static_cast<int64_t>(k));
    bool ones = false;
    for (size_t k = 0; k < tr; ++k)
        if (is_one(target[k]) && !is_one(g->type.shape[k + r - tr])) {
            axes.push_back(static_cast<int64_t>(k + r - tr));
            ones = true;
        }
    if (axes.empty()) return g;
    NodePtr s = sum_axes(std::move(g), axes, loc);
    return ones ? reshape_(s, target, loc) : s;
}

/** The i32 scalar value of an affine form over the equation's variables. */
NodePtr affine_node(const Affine &a, Loc loc) {
    NodePtr acc = cst(DType::I32, static_cast<double>(a.constant), loc);
    for (size_t v = 0; v < a.coef.size(); ++v) {
        if (!a.coef[v]) continue;
        Node c;
        c.kind = NodeKind::Coord;
        c.var = static_cast<int>(v);
        c.type = arr_type(DType::I32, {});
        c.loc = loc;
        NodePtr term = mk(std::move(c));
        if (a.coef[v] != 1) term = bin(BinaryOp::Mul, cst(DType::I32, static_cast<double>(a.coef[v]), loc), term, loc);
        acc = bin(BinaryOp::Add, acc, term, loc);
    }
    return acc;
}

NodePtr index_expr_node(const IndexExpr &e, Loc loc) {
    if (e.kind == IndexExpr::Aff) return affine_node(e.aff, loc);
    return bin(e.kind == IndexExpr::Min ? BinaryOp::Min : BinaryOp::Max, index_expr_node(*e.a, loc),
               index_expr_node(*e.b, loc), loc);
}

/** The number of elements of the axes "axes" of "shape", as a float scalar of dtype "d". */
NodePtr count_node(const std::vector<Extent> &shape, const std::vector<int64_t> &axes, DType d, Loc loc) {
    int64_t st = 1;
    NodePtr dyn;
    for (int64_t a : axes) {
        const Extent &e = shape[a];
        if (e.is_static()) {
            st *= e.max_value;
        } else {
            NodePtr v = cast_(index_expr_node(*e.dynamic, loc), d, loc);
            dyn = dyn ? bin(BinaryOp::Mul, dyn, v, loc) : v;
        }
    }
    NodePtr c = cst(d, static_cast<double>(st), loc);
    return dyn ? bin(BinaryOp::Mul, c, dyn, loc) : c;
}

IndexExprPtr aff_ix(Affine a) {
    auto e = std::make_shared<IndexExpr>();
    e->aff = std::move(a);
    return e;
}

Affine aff_const(int64_t c) { return Affine{c, {}}; }

Affine aff_add(const Affine &a, const Affine &b, int64_t sb) {
    Affine r;
    r.constant = a.constant + sb * b.constant;
    r.coef.assign(std::max(a.coef.size(), b.coef.size()), 0);
    for (size_t k = 0; k < r.coef.size(); ++k)
        r.coef[k] = a.coef_of(static_cast<int>(k)) + sb * b.coef_of(static_cast<int>(k));
    return r;
}

Affine aff_var(int v, int64_t c) {
    Affine a;
    a.constant = c;
    a.coef.assign(v + 1, 0);
    a.coef[v] = 1;
    return a;
}

/** "a" (over some variables) with variable v replaced by map[v] (affine forms over others). */
Affine aff_subst(const Affine &a, const std::vector<Affine> &map) {
    Affine r = aff_const(a.constant);
    for (size_t v = 0; v < a.coef.size(); ++v)
        if (a.coef[v]) {
            Affine t = map.at(v);
            for (int64_t &c : t.coef) c *= a.coef[v];
            t.constant *= a.coef[v];
            r = aff_add(r, t);
        }
    return r;
}

GuardPtr guard_subst(const GuardPtr &g, const std::vector<Affine> &map) {
    if (!g) return nullptr;
    auto r = std::make_shared<Guard>(*g);
    if (g->kind == Guard::Cmp) {
        r->lhs = aff_subst(g->lhs, map);
        r->rhs = aff_subst(g->rhs, map);
    }
    r->a = guard_subst(g->a, map);
    r->b = guard_subst(g->b, map);
    return r;
}

GuardPtr guard_not(GuardPtr a) {
    auto g = std::make_shared<Guard>();
    g->kind = Guard::Not;
    g->a = std::move(a);
    return g;
}

bool mentions(const GuardPtr &g, int v) {
    if (!g) return false;
    if (g->kind == Guard::Cmp) return g->lhs.coef_of(v) || g->rhs.coef_of(v);
    return mentions(g->a, v) || mentions(g->b, v);
}

/** 1 = true at every point of the box [0, bound_v) of the variables, 0 = false at every
 *  point, -1 = depends. */
int guard_on_box(const GuardPtr &g, const std::vector<int64_t> &bounds) {
    if (!g) return 1;
    switch (g->kind) {
    case Guard::True: return 1;
    case Guard::Cmp: {
        if (g->quasi()) return -1;  // t % 10 == 0 holds at some points of most boxes
        Affine d = aff_add(g->lhs, g->rhs, -1);
        int64_t lo = d.constant, hi = d.constant;
        for (size_t v = 0; v < d.coef.size(); ++v) {
            int64_t c = d.coef[v], m = bounds.at(v) - 1;
            if (c > 0)
                hi += c * m;
            else
                lo += c * m;
        }
        auto tri = [&](bool always, bool never) { return always ? 1 : never ? 0 : -1; };
        switch (g->cmp) {
        case BinaryOp::Lt: return tri(hi < 0, lo >= 0);
        case BinaryOp::Le: return tri(hi <= 0, lo > 0);
        case BinaryOp::Gt: return tri(lo > 0, hi <= 0);
        case BinaryOp::Ge: return tri(lo >= 0, hi < 0);
        case BinaryOp::Eq: return tri(lo == 0 && hi == 0, lo > 0 || hi < 0);
        case BinaryOp::Ne: return tri(lo > 0 || hi < 0, lo == 0 && hi == 0);
        default: return -1;
        }
    }
    case Guard::And: {
        int a = guard_on_box(g->a, bounds), b = guard_on_box(g->b, bounds);
        if (a == 0 || b == 0) return 0;
        return a == 1 && b == 1 ? 1 : -1;
    }
    case Guard::Or: {
        int a = guard_on_box(g->a, bounds), b = guard_on_box(g->b, bounds);
        if (a == 1 || b == 1) return 1;
        return a == 0 && b == 0 ? 0 : -1;
    }
    case Guard::Not: {
        int a = guard_on_box(g->a, bounds);
        return a < 0 ? -1 : 1 - a;
    }
    }
    return -1;
}

}  // namespace trlc::autodiff_detail
