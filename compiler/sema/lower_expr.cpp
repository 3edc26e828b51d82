// lower_expr — an AST expression becomes a typed ir::Node, evaluated at one
// point of the enclosing equation's variables.
//
// Names resolve, innermost first: fn parameters and `let`s, then the names of
// the expression's module (dims → Coord, bounds and consts → weak literals,
// tensors with an empty domain → Read), then builtins.  `x[e1, …, ek]` on a
// tensor with k domain dims is a Read whose indices must be affine in the
// variables (or min/max of such, or slices lo:hi, which prepend spatial
// dims); any other bracket is numpy-style spatial indexing.
#include <cmath>

#include "sema/sema_impl.h"
#include "trl_math.h"

namespace trlc::sema {

namespace {

const char *op_spelling(ast::OpKind op) {
    switch (op) {
    case ast::OpKind::Neg: return "-";
    case ast::OpKind::Not: return "!";
    case ast::OpKind::Plus: return "+";
    case ast::OpKind::Add: return "+";
    case ast::OpKind::Sub: return "-";
    case ast::OpKind::Mul: return "*";
    case ast::OpKind::Div: return "/";
    case ast::OpKind::Mod: return "%";
    case ast::OpKind::MatMul: return "@";
    case ast::OpKind::Pow: return "**";
    case ast::OpKind::Lt: return "<";
    case ast::OpKind::Le: return "<=";
    case ast::OpKind::Gt: return ">";
    case ast::OpKind::Ge: return ">=";
    case ast::OpKind::Eq: return "==";
    case ast::OpKind::Ne: return "!=";
    case ast::OpKind::And: return "&&";
    case ast::OpKind::Or: return "||";
    }
    return "?";
}

ir::BinaryOp binary_of(ast::OpKind op) {
    switch (op) {
    case ast::OpKind::Add: return ir::BinaryOp::Add;
    case ast::OpKind::Sub: return ir::BinaryOp::Sub;
    case ast::OpKind::Mul: return ir::BinaryOp::Mul;
    case ast::OpKind::Div: return ir::BinaryOp::Div;
    case ast::OpKind::Mod: return ir::BinaryOp::Mod;
    case ast::OpKind::Pow: return ir::BinaryOp::Pow;
    case ast::OpKind::Lt: return ir::BinaryOp::Lt;
    case ast::OpKind::Le: return ir::BinaryOp::Le;
    case ast::OpKind::Gt: return ir::BinaryOp::Gt;
    case ast::OpKind::Ge: return ir::BinaryOp::Ge;
    case ast::OpKind::Eq: return ir::BinaryOp::Eq;
    case ast::OpKind::Ne: return ir::BinaryOp::Ne;
    case ast::OpKind::And: return ir::BinaryOp::And;
    case ast::OpKind::Or: return ir::BinaryOp::Or;
    default: return ir::BinaryOp::Add;
    }
}

bool is_const_scalar(const Val &v) {
    return v.ok() && v.node->kind == ir::NodeKind::Const && !v.type().is_tuple && v.type().shape.empty() &&
           v.node->data.size() == 1;
}

/* An i32 scalar whose value is known at compile time: a literal, or integer arithmetic on a
 * bound's literal left unfolded (its affine form is a constant). */
bool const_int_scalar(const Val &v, int64_t *out) {
    if (!v.ok() || v.type().is_tuple || !v.type().shape.empty() || v.type().dtype != ir::DType::I32) return false;
    if (is_const_scalar(v)) {
        *out = static_cast<int64_t>(v.node->data[0]);
        return true;
    }
    if (v.idx && v.idx->kind == ir::IndexExpr::Aff && v.idx->aff.is_constant()) {
        *out = v.idx->aff.constant;
        return true;
    }
    return false;
}

/* Whether the i32 fold of "a" and "b" is left to run time: one of them is a bound's literal
 * (ir::Node::bound), which a run-time bound's kernel reads as `TRLG_BOUND(k)`; the integer
 * operation there is exact, as the fold would be. */
bool keep_bound_arith(const Val &a, const Val &b, ir::DType d) {
    return d == ir::DType::I32 && ((a.ok() && !a.node->bound.empty()) || (b.ok() && !b.node->bound.empty()));
}

/* Fold "op" on two scalar constants of dtype "d"; false when not foldable.
 * A weak result keeps full double precision (like a `const`): its dtype is not
 * final yet, and `f64(1.0) * (4.0 / 3.0)` must see the double 4/3. */
bool fold(ir::BinaryOp op, double x, double y, ir::DType d, bool weak, double *out) {
    bool ints = !is_float(d);
    switch (op) {
    case ir::BinaryOp::Add: *out = x + y; break;
    case ir::BinaryOp::Sub: *out = x - y; break;
    case ir::BinaryOp::Mul: *out = x * y; break;
    case ir::BinaryOp::Div:
        if (y == 0.0) return false;
        *out = x / y;
        break;
    case ir::BinaryOp::Mod:
        if (y == 0.0) return false;
        *out = x - std::floor(x / y) * y;
        break;
    case ir::BinaryOp::Min: *out = std::min(x, y); break;
    case ir::BinaryOp::Max: *out = std::max(x, y); break;
    case ir::BinaryOp::Pow:
        if (ints && y < 0) return false;
        *out = trl::pow_f64(x, y);  // the bits generated code computes (f32: pow_f32 is this, rounded)
        break;
    default: return false;
    }
    if (ints && std::fabs(*out) > 2147483647.0) return false;
    if (d == ir::DType::F32 && !weak) *out = static_cast<double>(static_cast<float>(*out));
    return std::isfinite(*out);
}

}  // namespace

Val Sema::const_val(double v, ir::DType d, bool weak, Loc loc) {
    ir::Node n;
    n.kind = ir::NodeKind::Const;
    n.type = scalar(d);
    n.loc = loc;
    n.data = {v};
    Val r{make_node(std::move(n)), weak, nullptr};
    if (d == ir::DType::I32) r.idx = aff_expr(ir::Affine{static_cast<int64_t>(v), {}});
    return r;
}

Val Sema::lower(const ast::Expr &e, Scope &scope) {
    using ast::ExprKind;
    switch (e.kind) {
    case ExprKind::IntLit:
        if (e.int_value > 2147483647 || e.int_value < -2147483648LL) {
            error(e.loc, "integer literal " + std::to_string(e.int_value) + " does not fit in i32");
            return {};
        }
        return const_val(static_cast<double>(e.int_value), ir::DType::I32, true, e.loc);
    case ExprKind::FloatLit: return const_val(e.float_value, ir::DType::F32, true, e.loc);
    case ExprKind::BoolLit: return const_val(e.bool_value ? 1 : 0, ir::DType::Bool, false, e.loc);
    case ExprKind::StrLit: error(e.loc, "a string is not a value"); return {};
    case ExprKind::ArrayLit: return lower_array(e, scope);
    case ExprKind::Name: return lower_name(e, scope);
    case ExprKind::Member: {
        const ast::Expr &obj = *e.args[0];
        const Entity *m = nullptr;
        if (obj.kind == ExprKind::Name && !scope.locals.count(obj.name)) m = lookup(scope.module, obj.name);
        if (!m || m->kind != EntityKind::Module) {
            if (obj.kind == ExprKind::Name && !m && !scope.locals.count(obj.name))
                error(obj.loc, "unknown name '" + obj.name + "'");
            else
                error(e.loc, "'" + text(obj.loc) + "' is not a module");
            return {};
        }
        const Entity *ent = lookup(m->index, e.name);
        if (!ent) {
            error(e.loc, "module '" + obj.name + "' has no member '" + e.name + "'");
            return {};
        }
        if (ent->kind != EntityKind::Const) {
            error(e.loc, "'" + obj.name + "." + e.name + "' is not a value; call it");
            return {};
        }
        auto c = const_value(ent->index, e.loc);
        if (!c) return {};
        return const_val(c->as_double(), c->is_int ? ir::DType::I32 : ir::DType::F32, true, e.loc);
    }
    case ExprKind::Index: return lower_index(e, scope);
    case ExprKind::Call: return lower_call(e, scope);
    case ExprKind::Unary: return lower_unary(e, scope);
    case ExprKind::Binary: return lower_binary(e, scope);
    case ExprKind::Tuple: {
        ir::Node n;
        n.kind = ir::NodeKind::Tuple;
        n.loc = e.loc;
        n.type.is_tuple = true;
        for (const ast::ExprPtr &a : e.args) {
            Val v = lower(*a, scope);
            if (!v.ok()) return {};
            if (v.weak && !v.type().is_tuple) v = convert(v, v.type().dtype);
            n.args.push_back(v.node);
            n.type.elems.push_back(v.type());
        }
        return {make_node(std::move(n)), false, nullptr};
    }
    }
    return {};
}

Val Sema::lower_name(const ast::Expr &e, Scope &scope) {
    auto local = scope.locals.find(e.name);
    if (local != scope.locals.end()) return local->second;
    const Entity *ent = lookup(scope.module, e.name);
    if (!ent) {
        if (is_builtin(e.name))
            error(e.loc, "builtin '" + e.name + "' is not a value; call it");
        else
            error(e.loc, "unknown name '" + e.name + "'");
        return {};
    }
    switch (ent->kind) {
    case EntityKind::Dim: {
        if (!scope.dims_visible) {
            error(e.loc, "dim '" + e.name + "' cannot be used inside fn '" + scope.fn_name +
                             "': fns are spatial; pass the coordinate as an argument");
            return {};
        }
        int var = -1;
        for (size_t v = 0; v < scope.vars.size(); ++v)
            if (scope.vars[v] == ent->index) var = static_cast<int>(v);
        if (var < 0) {
            error(e.loc, "dim '" + e.name + "' is not bound by " + scope.binder);
            return {};
        }
        ir::Node n;
        n.kind = ir::NodeKind::Coord;
        n.type = scalar(ir::DType::I32);
        n.loc = e.loc;
        n.var = var;
        ir::Affine a;
        a.coef.assign(var + 1, 0);
        a.coef[var] = 1;
        return {make_node(std::move(n)), false, aff_expr(a)};
    }
    case EntityKind::Bound: {  // a literal that remembers its bound (ir::Node::bound)
        Val r = const_val(static_cast<double>(prog_.bounds[e.name]), ir::DType::I32, true, e.loc);
        ir::Node n = *r.node;
        n.bound = e.name;
        r.node = make_node(std::move(n));
        return r;
    }
    case EntityKind::Const: {
        auto c = const_value(ent->index, e.loc);
        if (!c) return {};
        if (c->is_int && (c->i > 2147483647 || c->i < -2147483648LL)) {
            error(e.loc, "const '" + e.name + "' = " + std::to_string(c->i) + " does not fit in i32");
            return {};
        }
        return const_val(c->as_double(), c->is_int ? ir::DType::I32 : ir::DType::F32, true, e.loc);
    }
    case EntityKind::Tensor: {
        const ir::Tensor &t = prog_.tensors[ent->index];
        if (!t.dims.empty()) {
            std::string dims;
            for (int d : t.dims) dims += (dims.empty() ? "" : ", ") + prog_.dims[d].name;
            error(e.loc, e.name + " is a recurrent tensor over (" + dims + "): read it with indices, e.g. " + e.name +
                             "[" + dims + "]");
            return {};
        }
        if (!tinfo_[ent->index].dims_ok) return {};
        auto ty = tensor_type_for_read(ent->index, e.loc);
        if (!ty) return {};
        ir::Node n;
        n.kind = ir::NodeKind::Read;
        n.type = *ty;
        n.loc = e.loc;
        n.tensor = ent->index;
        return {make_node(std::move(n)), false, nullptr};
    }
    case EntityKind::Fn:
    case EntityKind::Extern: error(e.loc, "fn '" + e.name + "' is not a value; call it: " + e.name + "(…)"); return {};
    case EntityKind::Module: error(e.loc, "module '" + e.name + "' is not a value"); return {};
    }
    return {};
}

Val Sema::lower_index(const ast::Expr &e, Scope &scope) {
    const ast::Expr &base = *e.args[0];
    if (base.kind == ast::ExprKind::Name && !scope.locals.count(base.name)) {
        const Entity *ent = lookup(scope.module, base.name);
        if (ent && ent->kind == EntityKind::Tensor && !prog_.tensors[ent->index].dims.empty())
            return lower_read(ent->index, e, scope);
    }
    Val b = lower(base, scope);
    if (!b.ok()) return {};
    return lower_spatial_index(b, e.indices, e.loc, scope);
}

std::vector<std::string> Sema::tensor_dim_names(const ir::Tensor &t) const {
    std::vector<std::string> names;
    for (int d : t.dims) names.push_back(prog_.dims[d].name);
    return names;
}

std::optional<ir::Type> Sema::read_type(const ir::Type &tensor_type, const ir::Tensor &tensor,
                                        const std::vector<ir::ReadIndex> &index, Loc loc, const Scope &scope) {
    ir::Type out = tensor_type;
    std::vector<ir::IndexExprPtr> by;
    for (const ir::ReadIndex &ri : index) by.push_back(ri.is_slice ? nullptr : ri.point);
    for (ir::Extent &x : out.shape) {
        if (x.is_static()) continue;
        ir::IndexExprPtr e = idx_substitute(x.dynamic, by);
        if (!e) {
            error(loc, "cannot read a range of " + tensor.name + ": its shape " +
                           ir::type_to_string(tensor_type, tensor_dim_names(tensor)) +
                           " depends on the point, so the values would not form one array");
            return std::nullopt;
        }
        x = extent_of(e, scope);
    }
    return out;
}

Val Sema::lower_read(int tensor, const ast::Expr &e, Scope &scope) {
    const ir::Tensor &t = prog_.tensors[tensor];
    if (!tinfo_[tensor].dims_ok) return {};
    size_t k = t.dims.size();
    if (e.indices.size() != k) {
        std::string dims;
        for (int d : t.dims) dims += (dims.empty() ? "" : ", ") + prog_.dims[d].name;
        error(e.loc, "wrong number of indices for " + t.name + ": expected " + std::to_string(k) + " (" + dims +
                         "), got " + std::to_string(e.indices.size()));
        note(t.loc, t.name + " is defined here");
        return {};
    }
    auto affine = [&](const ast::Expr &ix) -> ir::IndexExprPtr {
        Val v = lower(ix, scope);
        if (!v.ok()) return nullptr;
        if (!v.idx) {
            error(ix.loc, "non-affine index: '" + text(ix.loc) +
                              "'; a domain index must be affine in the dims (t-1, T-1, 2*t), "
                              "min/max of such, or a slice lo:hi");
            return nullptr;
        }
        return v.idx;
    };
    ir::Node n;
    n.kind = ir::NodeKind::Read;
    n.loc = e.loc;
    n.tensor = tensor;
    std::vector<ir::Extent> prefix;
    bool ok = true;
    for (size_t p = 0; p < k; ++p) {
        const ast::IndexItem &it = e.indices[p];
        ir::ReadIndex ri;
        if (!it.is_slice) {
            ri.point = affine(*it.value);
            ok = ok && ri.point;
        } else {
            ri.is_slice = true;
            ri.lo = it.lo ? affine(*it.lo) : aff_expr(ir::Affine{0, {}});
            ri.hi = it.hi ? affine(*it.hi) : aff_expr(ir::Affine{prog_.dims[t.dims[p]].bound, {}});
            if (!ri.lo || !ri.hi) {
                ok = false;
            } else {
                ir::Extent x = extent_of(idx_add(ri.hi, ri.lo, -1), scope);
                if (x.max_value < 0 || (x.is_static() && x.max_value == 0)) {
                    error(it.loc, "empty slice '" + text(it.loc) + "' of " + t.name);
                    ok = false;
                }
                prefix.push_back(x);
            }
        }
        n.index.push_back(ri);
    }
    if (!ok) return {};
    auto ty = tensor_type_for_read(tensor, e.loc);
    if (!ty) return {};
    ty = read_type(*ty, t, n.index, e.loc, scope);
    if (!ty) return {};
    if (ty->is_tuple && !prefix.empty()) {
        error(e.loc, "cannot slice " + t.name + ": its values are tuples " + type_str(*ty, scope));
        return {};
    }
    n.type = *ty;
    n.type.shape.insert(n.type.shape.begin(), prefix.begin(), prefix.end());
    return {make_node(std::move(n)), false, nullptr};
}

Val Sema::lower_spatial_index(Val base, const std::vector<ast::IndexItem> &items, Loc loc, Scope &scope) {
    const ir::Type &bt = base.type();
    if (bt.is_tuple) {
        Val k = items.size() == 1 && !items[0].is_slice ? lower(*items[0].value, scope) : Val{};
        int64_t ki = 0;
        if (items.size() != 1 || items[0].is_slice || !k.ok() || !const_int_scalar(k, &ki)) {
            if (items.size() != 1 || items[0].is_slice || k.ok())
                error(loc, "a tuple " + type_str(bt, scope) + " is indexed by one integer constant, e.g. x[0]");
            return {};
        }
        int64_t i = ki;
        int64_t n = static_cast<int64_t>(bt.elems.size());
        if (i < 0) i += n;
        if (i < 0 || i >= n) {
            error(items[0].loc, "tuple index " + text(items[0].loc) + " is out of range for " + type_str(bt, scope));
            return {};
        }
        if (base.node->kind == ir::NodeKind::Tuple) return {base.node->args[i], false, nullptr};
        ir::Node g;
        g.kind = ir::NodeKind::TupleGet;
        g.type = bt.elems[i];
        g.loc = loc;
        g.args = {base.node};
        g.int_attr = i;
        return {make_node(std::move(g)), false, nullptr};
    }
    if (items.size() > bt.shape.size()) {
        error(loc,
              "too many indices for a value of type " + type_str(bt, scope) + ": got " + std::to_string(items.size()));
        return {};
    }
    ir::Node n;
    n.kind = ir::NodeKind::Index;
    n.loc = loc;
    n.args = {base.node};
    n.type.dtype = bt.dtype;
    bool all_const = base.node->kind == ir::NodeKind::Const;
    int gathers = 0;
    std::vector<int64_t> const_pos;
    for (size_t ax = 0; ax < items.size(); ++ax) {
        const ast::IndexItem &it = items[ax];
        const ir::Extent &ext = bt.shape[ax];
        ir::SpatialIndex si;
        if (it.is_slice) {
            all_const = false;
            if (!it.lo && !it.hi) {
                si.kind = ir::SpatialIndex::Full;
                n.type.shape.push_back(ext);
                n.sindex.push_back(si);
                continue;
            }
            si.kind = ir::SpatialIndex::Slice;
            auto end = [&](const ast::ExprPtr &x, bool is_hi) -> ir::IndexExprPtr {
                if (!x)
                    return is_hi ? (ext.is_static() ? aff_expr(ir::Affine{ext.max_value, {}}) : ext.dynamic)
                                 : aff_expr(ir::Affine{0, {}});
                Val v = lower(*x, scope);
                if (!v.ok()) return nullptr;
                if (!v.idx) {
                    error(x->loc, "a slice end must be an integer constant or affine in the "
                                  "dims: '" +
                                      text(x->loc) + "'");
                    return nullptr;
                }
                ir::IndexExprPtr r = v.idx;
                if (r->kind == ir::IndexExpr::Aff && r->aff.is_constant() && r->aff.constant < 0 && ext.is_static())
                    r = aff_expr(ir::Affine{r->aff.constant + ext.max_value, {}});
                return r;
            };
            si.lo = end(it.lo, false);
            si.hi = end(it.hi, true);
            if (!si.lo || !si.hi) return {};
            ir::Extent x = extent_of(idx_add(si.hi, si.lo, -1), scope);
            if (x.max_value <= 0 || (ext.is_static() && max_value(*si.hi, scope.vars) > ext.max_value)) {
                error(it.loc, "slice '" + text(it.loc) + "' is out of range for axis " + std::to_string(ax) + " of " +
                                  type_str(bt, scope));
                return {};
            }
            n.type.shape.push_back(x);
        } else {
            Val v = lower(*it.value, scope);
            if (!v.ok()) return {};
            if (v.type().is_tuple || !(v.type().dtype == ir::DType::I32)) {
                error(it.loc, "an index must be i32, got " + type_str(v.type(), scope));
                return {};
            }
            si.kind = ir::SpatialIndex::Scalar;
            if (v.type().shape.empty()) {
                int64_t i = 0;
                if (const_int_scalar(v, &i) && ext.is_static()) {
                    if (i < 0) i += ext.max_value;
                    if (i < 0 || i >= ext.max_value) {
                        error(it.loc, "index " + text(it.loc) + " is out of range for axis " + std::to_string(ax) +
                                          " of " + type_str(bt, scope));
                        return {};
                    }
                    v = const_val(static_cast<double>(i), ir::DType::I32, false, v.node->loc);
                    const_pos.push_back(i);
                } else {
                    all_const = false;
                }
            } else {
                all_const = false;
                if (++gathers > 1) {
                    error(it.loc, "at most one index may be an array (a gather)");
                    return {};
                }
                for (const ir::Extent &x : v.type().shape) n.type.shape.push_back(x);
            }
            si.value = v.node;
            n.args.push_back(v.node);
        }
        n.sindex.push_back(si);
    }
    for (size_t ax = items.size(); ax < bt.shape.size(); ++ax) n.type.shape.push_back(bt.shape[ax]);
    if (all_const) {  // fold: sizes[0] of a literal array is a literal
        size_t inner = 1;
        for (size_t ax = items.size(); ax < bt.shape.size(); ++ax) inner *= bt.shape[ax].max_value;
        size_t off = 0;
        for (size_t ax = 0; ax < items.size(); ++ax) off = off * bt.shape[ax].max_value + const_pos[ax];
        off *= inner;
        ir::Node c;
        c.kind = ir::NodeKind::Const;
        c.type = n.type;
        c.loc = loc;
        c.data.assign(base.node->data.begin() + off, base.node->data.begin() + off + inner);
        Val r{make_node(std::move(c)), base.weak, nullptr};
        if (r.type().shape.empty() && r.type().dtype == ir::DType::I32)
            r.idx = aff_expr(ir::Affine{static_cast<int64_t>(r.node->data[0]), {}});
        return r;
    }
    return {make_node(std::move(n)), base.weak, nullptr};
}

Val Sema::lower_unary(const ast::Expr &e, Scope &scope) {
    Val a = lower(*e.args[0], scope);
    if (!a.ok()) return {};
    if (e.op == ast::OpKind::Plus) return a;
    if (a.type().is_tuple)  // pytree: the operator applies to every leaf
        return map_leaves({a}, e.loc, scope, std::string("operator ") + op_spelling(e.op),
                          [&](const std::vector<Val> &x) { return unary_leaf(e, x[0], scope); });
    return unary_leaf(e, a, scope);
}

Val Sema::unary_leaf(const ast::Expr &e, Val a, const Scope &scope) {
    const ir::Type &t = a.type();
    if (t.is_tuple || t.dtype == ir::DType::Key) {
        error(e.loc, std::string("operator ") + op_spelling(e.op) + " cannot be applied to " + type_str(t, scope));
        return {};
    }
    ir::Node n;
    n.kind = ir::NodeKind::Unary;
    n.loc = e.loc;
    if (e.op == ast::OpKind::Not) {
        if (t.dtype != ir::DType::Bool) {
            error(e.loc, "operator ! needs a bool operand, got " + type_str(t, scope));
            return {};
        }
        n.uop = ir::UnaryOp::Not;
        n.type = t;
        n.args = {a.node};
        return {make_node(std::move(n)), false, nullptr};
    }
    if (t.dtype == ir::DType::Bool) a = convert(a, ir::DType::I32);
    if (is_const_scalar(a) && !keep_bound_arith(a, Val{}, a.type().dtype)) {
        Val r = const_val(-a.node->data[0], a.type().dtype, a.weak, e.loc);
        return r;
    }
    n.uop = ir::UnaryOp::Neg;
    n.type = a.type();
    n.args = {a.node};
    Val r{make_node(std::move(n)), a.weak, nullptr};
    if (a.idx) r.idx = idx_add(aff_expr(ir::Affine{0, {}}), a.idx, -1);
    return r;
}

Val Sema::lower_binary(const ast::Expr &e, Scope &scope) {
    Val a = lower(*e.args[0], scope);
    Val b = lower(*e.args[1], scope);
    if (!a.ok() || !b.ok()) return {};
    if (e.op == ast::OpKind::MatMul) return matmul(a, b, e.loc, scope);
    return binary_op(binary_of(e.op), a, b, e.loc, scope, op_spelling(e.op));
}

Val Sema::binary_op(ir::BinaryOp op, Val a, Val b, Loc loc, const Scope &scope, const char *spelling) {
    if (!a.ok() || !b.ok()) return {};
    if (a.type().is_tuple || b.type().is_tuple)  // pytree: map over the leaves
        return map_leaves({a, b}, loc, scope, std::string("operator ") + spelling,
                          [&](const std::vector<Val> &x) { return binary_op(op, x[0], x[1], loc, scope, spelling); });
    const ir::Type &ta = a.type(), &tb = b.type();
    if (ta.dtype == ir::DType::Key || tb.dtype == ir::DType::Key) {
        error(loc, std::string("operator ") + spelling + " cannot be applied to " + type_str(ta, scope) + " and " +
                       type_str(tb, scope));
        return {};
    }
    bool logical = op == ir::BinaryOp::And || op == ir::BinaryOp::Or;
    if (logical && (ta.dtype != ir::DType::Bool || tb.dtype != ir::DType::Bool)) {
        error(loc, std::string("operator ") + spelling + " needs bool operands, got " + ir::dtype_name(ta.dtype) +
                       " and " + ir::dtype_name(tb.dtype));
        return {};
    }
    bool ok = true;
    ir::Type shape = join_shapes(ta, tb, &ok);
    if (!ok) {
        error(loc, "shapes " + type_str(ta, scope) + " and " + type_str(tb, scope) + " cannot be broadcast");
        return {};
    }
    // The operands' common dtype.
    ir::DType d;
    if (a.weak && b.weak)
        d = promote(ta.dtype, tb.dtype);
    else if (a.weak)
        d = dtype_kind(tb.dtype) >= dtype_kind(ta.dtype) ? tb.dtype : ta.dtype;
    else if (b.weak)
        d = dtype_kind(ta.dtype) >= dtype_kind(tb.dtype) ? ta.dtype : tb.dtype;
    else
        d = promote(ta.dtype, tb.dtype);
    bool compare = op >= ir::BinaryOp::Lt && op <= ir::BinaryOp::Ne;
    if (!compare && !logical && d == ir::DType::Bool) d = ir::DType::I32;
    if (op == ir::BinaryOp::Div && !is_float(d)) d = ir::DType::F32;
    bool weak = a.weak && b.weak && !compare && !logical;
    Val ca = convert(a, d), cb = convert(b, d);
    ir::Node n;
    n.kind = ir::NodeKind::Binary;
    n.bop = op;
    n.loc = loc;
    n.type = shape;
    n.type.dtype = compare ? ir::DType::Bool : d;
    n.args = {ca.node, cb.node};
    // Affine forms of integer scalars: +, -, * by a constant, min, max, constant % constant.
    ir::IndexExprPtr idx;
    if (ca.idx && cb.idx && n.type.dtype == ir::DType::I32) {
        const ir::IndexExpr &x = *ca.idx, &y = *cb.idx;
        bool xc = x.kind == ir::IndexExpr::Aff && x.aff.is_constant();
        bool yc = y.kind == ir::IndexExpr::Aff && y.aff.is_constant();
        if (op == ir::BinaryOp::Add) idx = idx_add(ca.idx, cb.idx, 1);
        if (op == ir::BinaryOp::Sub) idx = idx_add(ca.idx, cb.idx, -1);
        if (op == ir::BinaryOp::Min) idx = idx_minmax(ir::IndexExpr::Min, ca.idx, cb.idx);
        if (op == ir::BinaryOp::Max) idx = idx_minmax(ir::IndexExpr::Max, ca.idx, cb.idx);
        if (op == ir::BinaryOp::Mul && (xc || yc)) {
            const ir::IndexExpr &other = xc ? y : x;
            int64_t c = xc ? x.aff.constant : y.aff.constant;
            if (other.kind == ir::IndexExpr::Aff) {
                ir::Affine r = other.aff;
                r.constant *= c;
                for (int64_t &k : r.coef) k *= c;
                idx = aff_expr(r);
            }
        }
    }
    if (is_const_scalar(ca) && is_const_scalar(cb) && !compare && !logical && !keep_bound_arith(ca, cb, n.type.dtype)) {
        double out;
        if (fold(op, ca.node->data[0], cb.node->data[0], n.type.dtype, weak, &out)) {
            Val r = const_val(out, n.type.dtype, weak, loc);
            return r;
        }
    }
    return {make_node(std::move(n)), weak, idx};
}

Val Sema::lower_array(const ast::Expr &e, Scope &scope) {
    std::vector<Val> elems;
    for (const ast::ExprPtr &a : e.args) {
        Val v = lower(*a, scope);
        if (!v.ok()) return {};
        if (v.type().is_tuple || v.type().dtype == ir::DType::Key) {
            error(a->loc, "an array element must be a number or an array, got " + type_str(v.type(), scope));
            return {};
        }
        elems.push_back(v);
    }
    if (elems.empty()) {
        ir::Node c;
        c.kind = ir::NodeKind::Const;
        c.loc = e.loc;
        c.type = scalar(ir::DType::F32);
        c.type.shape.push_back(ir::Extent{0, nullptr});
        return {make_node(std::move(c)), true, nullptr};
    }
    // Common dtype and shape, as if the elements were combined by a binary operator.
    Val acc = elems[0];
    bool weak = true;
    ir::DType d = elems[0].type().dtype;
    for (size_t k = 0; k < elems.size(); ++k) {
        const Val &v = elems[k];
        if (!type_equal(with_dtype(v.type(), ir::DType::F32), with_dtype(elems[0].type(), ir::DType::F32))) {
            error(e.args[k]->loc, "array elements have different shapes: " + type_str(elems[0].type(), scope) +
                                      " and " + type_str(v.type(), scope));
            return {};
        }
        if (k == 0) continue;
        bool aw = weak, bw = v.weak;
        ir::DType vd = v.type().dtype;
        if (aw && bw)
            d = promote(d, vd);
        else if (aw)
            d = dtype_kind(vd) >= dtype_kind(d) ? vd : d;
        else if (!bw)
            d = promote(d, vd);
        weak = aw && bw;
    }
    weak = true;
    for (const Val &v : elems) weak = weak && v.weak;
    bool all_const = true;
    for (Val &v : elems) {
        v = convert(v, d);
        all_const = all_const && v.node->kind == ir::NodeKind::Const;
    }
    ir::Type t = elems[0].type();
    t.dtype = d;
    t.shape.insert(t.shape.begin(), ir::Extent{static_cast<int64_t>(elems.size()), nullptr});
    if (all_const) {
        ir::Node c;
        c.kind = ir::NodeKind::Const;
        c.loc = e.loc;
        c.type = t;
        for (const Val &v : elems) c.data.insert(c.data.end(), v.node->data.begin(), v.node->data.end());
        return {make_node(std::move(c)), weak, nullptr};
    }
    ir::Node s;
    s.kind = ir::NodeKind::Builtin;
    s.builtin = ir::BuiltinOp::Stack;
    s.axes = {0};
    s.has_axes = true;
    s.loc = e.loc;
    s.type = t;
    for (const Val &v : elems) s.args.push_back(v.node);
    return {make_node(std::move(s)), weak, nullptr};
}

Val Sema::lower_call(const ast::Expr &e, Scope &scope) {
    const ast::Expr &callee = *e.args[0];
    if (callee.kind == ast::ExprKind::Name) {
        const Entity *ent = lookup(scope.module, callee.name);
        if (ent && ent->kind == EntityKind::Fn) return inline_fn(ent->index, e, scope);
        if (ent && ent->kind == EntityKind::Extern) return call_extern(ent->index, e, scope);
        if (is_builtin(callee.name)) return lower_builtin(callee.name, e, scope);
        if (ent)
            error(callee.loc, "'" + callee.name + "' is not a function");
        else
            error(callee.loc, "unknown function '" + callee.name + "'");
        return {};
    }
    if (callee.kind == ast::ExprKind::Member && callee.args[0]->kind == ast::ExprKind::Name) {
        const ast::Expr &obj = *callee.args[0];
        const Entity *m = lookup(scope.module, obj.name);
        if (!m) {
            error(obj.loc, "unknown name '" + obj.name + "'");
            return {};
        }
        if (m->kind != EntityKind::Module) {
            error(obj.loc, "'" + obj.name + "' is not a module");
            return {};
        }
        const Entity *ent = lookup(m->index, callee.name);
        if (!ent) {
            error(callee.loc, "module '" + obj.name + "' has no member '" + callee.name + "'");
            return {};
        }
        if (ent->kind == EntityKind::Fn) return inline_fn(ent->index, e, scope);
        if (ent->kind == EntityKind::Extern) return call_extern(ent->index, e, scope);
        error(callee.loc, "'" + obj.name + "." + callee.name + "' is not a function");
        return {};
    }
    error(callee.loc, "this expression cannot be called");
    return {};
}

}  // namespace trlc::sema
