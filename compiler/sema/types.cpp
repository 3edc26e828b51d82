// types — dtype promotion, weak literals, broadcasting, index-expression
// arithmetic, and print_types (--emit=types).
//
// Tuples are pytrees (as in JAX): elementwise operations on tuples map over the leaves
// (map_leaves), with tuple arguments of one structure and non-tuples broadcast to every leaf.
//
// Promotion: bool < i32 < f32 < f64.  A weak value (made of literals only)
// takes the other operand's dtype when that is at least as wide in kind
// (bool < int < float); converting a weak value re-types its literals instead
// of inserting a Cast, so `0.1` used with an f64 keeps its f64 value.
#include <algorithm>
#include <ostream>

#include "sema/sema_impl.h"

namespace trlc::sema {

ir::NodePtr make_node(ir::Node n) { return std::make_shared<const ir::Node>(std::move(n)); }

ir::IndexExprPtr aff_expr(ir::Affine a) {
    auto e = std::make_shared<ir::IndexExpr>();
    e->kind = ir::IndexExpr::Aff;
    e->aff = std::move(a);
    return e;
}

ir::IndexExprPtr idx_add(const ir::IndexExprPtr &a, const ir::IndexExprPtr &b, int64_t sign_b) {
    using K = ir::IndexExpr::Kind;
    if (a->kind == K::Aff && b->kind == K::Aff) {
        ir::Affine r = a->aff;
        r.constant += sign_b * b->aff.constant;
        if (r.coef.size() < b->aff.coef.size()) r.coef.resize(b->aff.coef.size(), 0);
        for (size_t v = 0; v < b->aff.coef.size(); ++v) r.coef[v] += sign_b * b->aff.coef[v];
        return aff_expr(r);
    }
    if (a->kind != K::Aff) {  // min(x, y) ± b = min(x ± b, y ± b)
        return idx_minmax(a->kind, idx_add(a->a, b, sign_b), idx_add(a->b, b, sign_b));
    }
    // a ± min(x, y): + keeps min, - turns it into max (and vice versa)
    K k = sign_b > 0 ? b->kind : (b->kind == K::Min ? K::Max : K::Min);
    return idx_minmax(k, idx_add(a, b->a, sign_b), idx_add(a, b->b, sign_b));
}

ir::IndexExprPtr idx_minmax(ir::IndexExpr::Kind k, ir::IndexExprPtr a, ir::IndexExprPtr b) {
    using K = ir::IndexExpr::Kind;
    if (a->kind == K::Aff && b->kind == K::Aff && a->aff.is_constant() && b->aff.is_constant()) {
        int64_t x = a->aff.constant, y = b->aff.constant;
        return aff_expr(ir::Affine{k == K::Min ? std::min(x, y) : std::max(x, y), {}});
    }
    if (idx_equal(*a, *b)) return a;
    auto e = std::make_shared<ir::IndexExpr>();
    e->kind = k;
    e->a = std::move(a);
    e->b = std::move(b);
    return e;
}

ir::IndexExprPtr idx_scale(const ir::IndexExprPtr &e, int64_t c) {
    using K = ir::IndexExpr::Kind;
    if (e->kind == K::Aff) {
        ir::Affine r = e->aff;
        r.constant *= c;
        for (int64_t &x : r.coef) x *= c;
        return aff_expr(r);
    }
    // c·min(x, y) = min(c·x, c·y) for c ≥ 0, max(c·x, c·y) for c < 0
    K k = c >= 0 ? e->kind : (e->kind == K::Min ? K::Max : K::Min);
    return idx_minmax(k, idx_scale(e->a, c), idx_scale(e->b, c));
}

ir::IndexExprPtr idx_substitute(const ir::IndexExprPtr &e, const std::vector<ir::IndexExprPtr> &by) {
    using K = ir::IndexExpr::Kind;
    if (e->kind != K::Aff) return idx_minmax(e->kind, idx_substitute(e->a, by), idx_substitute(e->b, by));
    ir::IndexExprPtr r = aff_expr(ir::Affine{e->aff.constant, {}});
    for (size_t v = 0; v < e->aff.coef.size(); ++v) {
        if (e->aff.coef[v] == 0) continue;
        if (v >= by.size() || !by[v]) return nullptr;
        r = idx_add(r, idx_scale(by[v], e->aff.coef[v]), 1);
    }
    return r;
}

bool idx_equal(const ir::IndexExpr &a, const ir::IndexExpr &b) {
    if (a.kind != b.kind) return false;
    if (a.kind == ir::IndexExpr::Aff) return a.aff == b.aff;
    return idx_equal(*a.a, *b.a) && idx_equal(*a.b, *b.b);
}

bool extent_equal(const ir::Extent &a, const ir::Extent &b) {
    if (a.is_static() != b.is_static()) return false;
    if (a.is_static()) return a.max_value == b.max_value;
    return idx_equal(*a.dynamic, *b.dynamic);
}

bool type_equal(const ir::Type &a, const ir::Type &b) {
    if (a.is_tuple != b.is_tuple) return false;
    if (a.is_tuple) {
        if (a.elems.size() != b.elems.size()) return false;
        for (size_t k = 0; k < a.elems.size(); ++k)
            if (!type_equal(a.elems[k], b.elems[k])) return false;
        return true;
    }
    if (a.dtype != b.dtype || a.shape.size() != b.shape.size()) return false;
    for (size_t k = 0; k < a.shape.size(); ++k)
        if (!extent_equal(a.shape[k], b.shape[k])) return false;
    return true;
}

ir::Type scalar(ir::DType d) {
    ir::Type t;
    t.dtype = d;
    return t;
}

bool is_float(ir::DType d) { return d == ir::DType::F32 || d == ir::DType::F64; }
bool is_int_like(ir::DType d) { return d == ir::DType::Bool || d == ir::DType::I32; }

int dtype_kind(ir::DType d) {
    switch (d) {
    case ir::DType::Bool: return 0;
    case ir::DType::I32: return 1;
    case ir::DType::F32:
    case ir::DType::F64: return 2;
    case ir::DType::Key: return 3;
    }
    return 3;
}

ir::DType promote(ir::DType a, ir::DType b) { return static_cast<int>(a) >= static_cast<int>(b) ? a : b; }

ir::Type with_dtype(ir::Type t, ir::DType d) {
    if (t.is_tuple) return t;
    t.dtype = d;
    return t;
}

ir::Type Sema::join_shapes(const ir::Type &a, const ir::Type &b, bool *ok) const {
    ir::Type r;
    r.dtype = a.dtype;
    *ok = true;
    size_t n = std::max(a.shape.size(), b.shape.size());
    r.shape.resize(n);
    for (size_t k = 0; k < n; ++k) {
        const ir::Extent *x = k + a.shape.size() >= n ? &a.shape[k + a.shape.size() - n] : nullptr;
        const ir::Extent *y = k + b.shape.size() >= n ? &b.shape[k + b.shape.size() - n] : nullptr;
        auto is_one = [](const ir::Extent *e) { return !e || (e->is_static() && e->max_value == 1); };
        if (is_one(x))
            r.shape[k] = y ? *y : *x;
        else if (is_one(y))
            r.shape[k] = *x;
        else if (extent_equal(*x, *y))
            r.shape[k] = *x;
        else
            *ok = false;
    }
    return r;
}

namespace {

double convert_value(double v, ir::DType d) {
    switch (d) {
    case ir::DType::Bool: return v != 0.0 ? 1.0 : 0.0;
    case ir::DType::I32: return static_cast<double>(static_cast<int64_t>(v));
    case ir::DType::F32: return static_cast<double>(static_cast<float>(v));
    default: return v;
    }
}

/* Whether "n" is i32 arithmetic on a bound's literal left unfolded (ir::Node::bound). */
bool bound_arith(const ir::Node &n) {
    if (n.kind == ir::NodeKind::Const) return !n.bound.empty();
    if (n.type.dtype != ir::DType::I32 || (n.kind != ir::NodeKind::Unary && n.kind != ir::NodeKind::Binary))
        return false;
    for (const auto &a : n.args)
        if (bound_arith(*a)) return true;
    return false;
}

/* Re-type the weak subtree "n" (literals combined elementwise) to dtype "d".  Integer
 * arithmetic on a bound's literal is converted as a whole (a Cast), as its fold would be. */
ir::NodePtr retype(const ir::NodePtr &n, ir::DType d) {
    if (n->type.is_tuple || n->type.dtype == d) return n;
    ir::Node c = *n;
    c.type.dtype = d;
    switch (n->kind) {
    case ir::NodeKind::Const:
        // Keep the literal's exact value: a weak 0.1 that becomes f64 is the double 0.1.
        if (d == ir::DType::Bool || d == ir::DType::I32)
            for (double &v : c.data) v = convert_value(v, d);
        return make_node(std::move(c));
    case ir::NodeKind::Unary:
    case ir::NodeKind::Where:
        if (n->kind == ir::NodeKind::Unary && bound_arith(*n)) break;
        for (size_t k = n->kind == ir::NodeKind::Where ? 1 : 0; k < c.args.size(); ++k)
            c.args[k] = retype(c.args[k], d);
        return make_node(std::move(c));
    case ir::NodeKind::Binary:
        if (n->bop >= ir::BinaryOp::Lt) break;
        if (n->bop == ir::BinaryOp::Div && !is_float(d)) break;
        if (bound_arith(*n)) break;
        for (auto &a : c.args) a = retype(a, d);
        return make_node(std::move(c));
    default: break;
    }
    ir::Node cast;
    cast.kind = ir::NodeKind::Cast;
    cast.type = with_dtype(n->type, d);
    cast.loc = n->loc;
    cast.args = {n};
    return make_node(std::move(cast));
}

}  // namespace

Val Sema::convert(const Val &v, ir::DType d) const {
    if (!v.ok() || v.type().is_tuple || v.type().dtype == d) return v;
    Val r = v;
    if (v.weak) {
        r.node = retype(v.node, d);
    } else if (v.node->kind == ir::NodeKind::Const) {
        ir::Node c = *v.node;
        c.type.dtype = d;
        for (double &x : c.data) x = convert_value(x, d);
        r.node = make_node(std::move(c));
    } else {
        ir::Node cast;
        cast.kind = ir::NodeKind::Cast;
        cast.type = with_dtype(v.type(), d);
        cast.loc = v.node->loc;
        cast.args = {v.node};
        r.node = make_node(std::move(cast));
    }
    if (d != ir::DType::I32) r.idx = nullptr;
    return r;
}

int64_t Sema::max_value(const ir::IndexExpr &e, const std::vector<int> &vars) const {
    if (e.kind == ir::IndexExpr::Min) return std::min(max_value(*e.a, vars), max_value(*e.b, vars));
    if (e.kind == ir::IndexExpr::Max) return std::max(max_value(*e.a, vars), max_value(*e.b, vars));
    int64_t m = e.aff.constant;
    for (size_t v = 0; v < e.aff.coef.size() && v < vars.size(); ++v)
        if (e.aff.coef[v] > 0) m += e.aff.coef[v] * (prog_.dims[vars[v]].bound - 1);
    return m;
}

ir::Extent Sema::extent_of(ir::IndexExprPtr e, const Scope &scope) const {
    ir::Extent x;
    if (e->kind == ir::IndexExpr::Aff && e->aff.is_constant()) {
        x.max_value = e->aff.constant;
        return x;
    }
    x.max_value = max_value(*e, scope.vars);
    x.dynamic = std::move(e);
    return x;
}

std::string Sema::type_str(const ir::Type &t, const Scope &scope) const {
    return ir::type_to_string(t, scope.var_names);
}

Val tuple_get(const Val &v, size_t k) {
    if (v.node->kind == ir::NodeKind::Tuple) return {v.node->args[k], false, nullptr};
    ir::Node g;
    g.kind = ir::NodeKind::TupleGet;
    g.type = v.type().elems[k];
    g.loc = v.node->loc;
    g.args = {v.node};
    g.int_attr = static_cast<int64_t>(k);
    return {make_node(std::move(g)), false, nullptr};
}

bool same_structure(const ir::Type &a, const ir::Type &b) {
    if (a.is_tuple != b.is_tuple) return false;
    if (!a.is_tuple) return true;
    if (a.elems.size() != b.elems.size()) return false;
    for (size_t k = 0; k < a.elems.size(); ++k)
        if (!same_structure(a.elems[k], b.elems[k])) return false;
    return true;
}

Val Sema::map_leaves(const std::vector<Val> &args, Loc loc, const Scope &scope, const std::string &what,
                     const std::function<Val(const std::vector<Val> &)> &f) {
    const Val *first = nullptr;
    for (const Val &a : args) {
        if (!a.ok()) return {};
        if (!a.type().is_tuple) continue;
        if (!first) {
            first = &a;
        } else if (!same_structure(first->type(), a.type())) {
            error(loc, what + " needs tuples of the same structure, got " + type_str(first->type(), scope) + " and " +
                           type_str(a.type(), scope));
            return {};
        }
    }
    if (!first) return f(args);
    ir::Node t;
    t.kind = ir::NodeKind::Tuple;
    t.loc = loc;
    t.type.is_tuple = true;
    size_t n = first->type().elems.size();
    for (size_t k = 0; k < n; ++k) {
        std::vector<Val> leaf;
        for (const Val &a : args) leaf.push_back(a.type().is_tuple ? tuple_get(a, k) : a);
        Val r = map_leaves(leaf, loc, scope, what, f);
        if (!r.ok()) return {};
        t.type.elems.push_back(r.type());
        t.args.push_back(r.node);
    }
    return {make_node(std::move(t)), false, nullptr};
}

}  // namespace trlc::sema

namespace trlc {

void print_types(const ir::Program &prog, std::ostream &out) {
    for (const ir::Dim &d : prog.dims) {
        out << "dim " << d.name << " < ";
        if (!d.bound_name.empty()) out << d.bound_name << " = ";
        out << d.bound << "\n";
    }
    std::vector<const ir::Tensor *> ts;
    for (const ir::Tensor &t : prog.tensors)
        if (!t.is_hidden) ts.push_back(&t);
    std::stable_sort(ts.begin(), ts.end(), [](const ir::Tensor *a, const ir::Tensor *b) { return a->name < b->name; });
    for (const ir::Tensor *t : ts) {
        out << t->name;
        std::vector<std::string> names;  // a point-dependent extent is in the coordinates
        for (int d : t->dims) names.push_back(prog.dims[d].name);
        if (!t->dims.empty()) {
            out << "[";
            for (size_t k = 0; k < names.size(); ++k) out << (k ? ", " : "") << names[k];
            out << "]";
        }
        out << " : " << ir::type_to_string(t->type, names) << "\n";
    }
}

}  // namespace trlc
