// builtins — the builtin functions of dsl/README.md §5, with their typing rules.
//
// Reductions (sum mean max min argmax logsumexp) take `axis=` (an int, or a
// list of ints; none = all axes); max/min with two arguments are elementwise.
// softmax/log_softmax work over the last axis unless `axis=` says otherwise.
// Math functions that are not exact on integers (exp, log, tanh, …, mean,
// softmax) compute in f32 for i32/bool inputs.  Shapes given as arguments
// (`zeros([4, 64])`, `arange(T - t)`) may be dynamic: an extent affine in the
// equation's variables.  `grad(y, x)` stays an ir::NodeKind::Grad node (a scalar float y, a
// float tensor or tuple x); passes/autodiff replaces it by adjoint tensors.
// Elementwise builtins (math, casts, where, clamp, zeros_like/ones_like) map over the leaves
// of tuples (map_leaves, types.cpp); sum of a tuple adds every leaf (sum_leaves).  The std
// library's builtins: orthogonal, permutation (runtime/trl_linalg.h), shape (a constant list),
// uniform_like/normal_like, and discounted_cumsum with an array gamma (dsl/README.md §9.3).
// The builtins are lowered by family: lower_builtin below dispatches a call (sema/builtin_call.h)
// to builtins_math.cpp (elementwise, reductions), builtins_shapes.cpp and builtins_make.cpp
// (constructors, randomness, pytree helpers, initializers).
#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "ir/ops.h"
#include "sema/builtin_call.h"

namespace trlc::sema {

namespace {

// Besides the unary elementwise builtins of ir/ops.def (exp, log, …, stop_grad).
const std::set<std::string> kBuiltins = {"sum",
                                         "mean",
                                         "max",
                                         "min",
                                         "argmax",
                                         "logsumexp",
                                         "softmax",
                                         "log_softmax",
                                         "matmul",
                                         "transpose",
                                         "reshape",
                                         "concat",
                                         "stack",
                                         "one_hot",
                                         "gather",
                                         "cumsum",
                                         "discounted_cumsum",
                                         "arange",
                                         "zeros",
                                         "ones",
                                         "full",
                                         "pow",
                                         "clamp",
                                         "rng",
                                         "uniform",
                                         "normal",
                                         "categorical",
                                         "fold_in",
                                         "f32",
                                         "f64",
                                         "i32",
                                         "bool",
                                         "where",
                                         "grad",
                                         "zeros_like",
                                         "ones_like",
                                         "shape",
                                         "orthogonal",
                                         "permutation",
                                         "uniform_like",
                                         "normal_like"};

}  // namespace

bool Sema::is_builtin(const std::string &name) const {
    return kBuiltins.count(name) > 0 || ir::unary_by_name(name) != nullptr;
}

std::optional<std::vector<ir::Extent>> Sema::shape_arg(const ast::Expr &e, Scope &scope) {
    std::vector<ir::Extent> out;
    auto one = [&](const ast::Expr &x) -> bool {
        Val v = lower(x, scope);
        if (!v.ok()) return false;
        if (!v.idx) {
            error(x.loc, "an extent must be an integer constant or affine in the dims, got '" + text(x.loc) + "'");
            return false;
        }
        ir::Extent ext = extent_of(v.idx, scope);
        if (ext.max_value < 0 || (ext.is_static() && ext.max_value < 0)) {
            error(x.loc, "bad extent '" + text(x.loc) + "' = " + std::to_string(ext.max_value));
            return false;
        }
        out.push_back(ext);
        return true;
    };
    if (e.kind == ast::ExprKind::ArrayLit || e.kind == ast::ExprKind::Tuple) {
        for (const ast::ExprPtr &x : e.args)
            if (!one(*x)) return std::nullopt;
        return out;
    }
    Val v = lower(e, scope);
    if (!v.ok()) return std::nullopt;
    if (v.idx) {
        ir::Extent ext = extent_of(v.idx, scope);
        if (ext.max_value < 0) {
            error(e.loc, "bad extent '" + text(e.loc) + "' = " + std::to_string(ext.max_value));
            return std::nullopt;
        }
        return std::vector<ir::Extent>{ext};
    }
    // An empty list passed through a fn parameter (`randint(key, [], n)`) is an f32[0] constant:
    // the shape of a scalar.
    if (v.node->kind == ir::NodeKind::Const && v.type().shape.size() == 1 && v.node->data.empty() &&
        !v.type().is_tuple)
        return out;
    if (v.node->kind == ir::NodeKind::Const && v.type().dtype == ir::DType::I32 && v.type().shape.size() == 1) {
        for (double x : v.node->data) {
            if (x < 0) {
                error(e.loc, "bad extent " + std::to_string(static_cast<int64_t>(x)));
                return std::nullopt;
            }
            out.push_back(ir::Extent{static_cast<int64_t>(x), nullptr});
        }
        return out;
    }
    error(e.loc, "a shape must be a list of integers such as [4, 64], got " + type_str(v.type(), scope));
    return std::nullopt;
}

Val Sema::matmul(Val a, Val b, Loc loc, const Scope &scope) {
    if (!a.ok() || !b.ok()) return {};
    const ir::Type ta = a.type(), tb = b.type();
    if (ta.is_tuple || tb.is_tuple || ta.shape.empty() || tb.shape.empty() || ta.dtype == ir::DType::Key ||
        tb.dtype == ir::DType::Key) {
        error(loc, "matmul needs arrays of rank >= 1, got " + type_str(ta, scope) + " and " + type_str(tb, scope));
        return {};
    }
    std::vector<ir::Extent> sa = ta.shape, sb = tb.shape;
    bool a1 = sa.size() == 1, b1 = sb.size() == 1;
    if (a1) sa.insert(sa.begin(), ir::Extent{1, nullptr});
    if (b1) sb.push_back(ir::Extent{1, nullptr});
    const ir::Extent &ka = sa.back(), &kb = sb[sb.size() - 2];
    if (!extent_equal(ka, kb)) {
        error(loc, "shapes " + type_str(ta, scope) + " and " + type_str(tb, scope) +
                       " cannot be multiplied: the contracted extents differ");
        return {};
    }
    ir::Type ba, bb;
    ba.shape.assign(sa.begin(), sa.end() - 2);
    bb.shape.assign(sb.begin(), sb.end() - 2);
    bool ok = true;
    ir::Type batch = join_shapes(ba, bb, &ok);
    if (!ok) {
        error(loc, "shapes " + type_str(ta, scope) + " and " + type_str(tb, scope) + " cannot be broadcast");
        return {};
    }
    ir::DType d;
    if (a.weak && !b.weak)
        d = tb.dtype;
    else if (b.weak && !a.weak)
        d = ta.dtype;
    else
        d = promote(ta.dtype, tb.dtype);
    if (d == ir::DType::Bool) d = ir::DType::I32;
    if (a.weak && !b.weak && dtype_kind(ta.dtype) > dtype_kind(d)) d = float_of(ta.dtype);
    if (b.weak && !a.weak && dtype_kind(tb.dtype) > dtype_kind(d)) d = float_of(tb.dtype);
    a = convert(a, d);
    b = convert(b, d);
    ir::Node n;
    n.kind = ir::NodeKind::Builtin;
    n.builtin = ir::BuiltinOp::MatMul;
    n.loc = loc;
    n.type = batch;
    n.type.dtype = d;
    if (!a1) n.type.shape.push_back(sa[sa.size() - 2]);
    if (!b1) n.type.shape.push_back(sb.back());
    n.args = {a.node, b.node};
    return {make_node(std::move(n)), a.weak && b.weak, nullptr};
}

Val Sema::lower_builtin(const std::string &name, const ast::Expr &call, Scope &scope) {
    Loc loc = call.loc;
    if (name == "grad") {  // stays a Grad node: y a scalar float, x float (tuple) values
        if (call.args.size() != 3 || !call.kwargs.empty()) {
            error(loc, "grad takes 2 arguments (grad(y, x)), got " + std::to_string(call.args.size() - 1) +
                           (call.kwargs.empty() ? "" : " and keywords"));
            return {};
        }
        Val y = lower(*call.args[1], scope), x = lower(*call.args[2], scope);
        if (!y.ok() || !x.ok()) return {};
        const ir::Type &ty = y.type();
        if (ty.is_tuple || !ty.shape.empty() || !is_float(ty.dtype)) {
            error(call.args[1]->loc, "grad needs a scalar f32 or f64 y, got " + type_str(ty, scope));
            return {};
        }
        std::function<bool(const ir::Type &)> float_type = [&](const ir::Type &t) {
            if (!t.is_tuple) return is_float(t.dtype);
            for (const ir::Type &e : t.elems)
                if (!float_type(e)) return false;
            return true;
        };
        if (!float_type(x.type())) {
            error(call.args[2]->loc,
                  "grad needs x of a float type (or a tuple of them), got " + type_str(x.type(), scope));
            return {};
        }
        ir::Node n;
        n.kind = ir::NodeKind::Grad;
        n.loc = loc;
        n.type = x.type();
        n.args = {y.node, x.node};
        return {make_node(std::move(n)), false, nullptr};
    }
    // One family of builtins after the other (their names are distinct).
    BuiltinCall bc(*this, name, call, scope);
    if (std::optional<Val> v = lower_elementwise_builtin(bc)) return *v;
    if (std::optional<Val> v = lower_reduction_builtin(bc)) return *v;
    if (std::optional<Val> v = lower_shape_builtin(bc)) return *v;
    if (std::optional<Val> v = lower_constructor_builtin(bc)) return *v;
    if (std::optional<Val> v = lower_random_builtin(bc)) return *v;
    if (std::optional<Val> v = lower_pytree_builtin(bc)) return *v;
    error(loc, "builtin '" + name + "' is not supported");
    return {};
}

// ---- the checks every family uses (sema/builtin_call.h) ---------------------------------------

bool BuiltinCall::arity(size_t lo, size_t hi) const {
    if (npos >= lo && npos <= hi) return true;
    std::string want = lo == hi       ? std::to_string(lo)
                       : hi == lo + 1 ? std::to_string(lo) + " or " + std::to_string(hi)
                                      : std::to_string(lo) + " to " + std::to_string(hi);
    if (hi > 100) want = "at least " + std::to_string(lo);
    s.error(loc,
            name + " takes " + want + " argument" + (hi == 1 && lo == 1 ? "" : "s") + ", got " + std::to_string(npos));
    return false;
}

bool BuiltinCall::keywords(std::initializer_list<const char *> allowed) const {
    for (const ast::KeywordArg &k : call.kwargs) {
        bool found = false;
        std::string list;
        for (const char *a : allowed) {
            found = found || k.name == a;
            list += (list.empty() ? "" : ", ") + std::string(a);
        }
        if (!found) {
            s.error(k.loc, "unknown keyword '" + k.name + "' for " + name +
                               (list.empty() ? " (it takes no keywords)" : "; expected " + list));
            return false;
        }
    }
    return true;
}

const ast::KeywordArg *BuiltinCall::kw(const char *k) const {
    for (const ast::KeywordArg &a : call.kwargs)
        if (a.name == k) return &a;
    return nullptr;
}

bool BuiltinCall::numeric(const Val &v, Loc at) const {
    if (!v.ok()) return false;
    if (v.type().is_tuple || v.type().dtype == ir::DType::Key) {
        s.error(at, name + " needs a numeric array, got " + s.type_str(v.type(), scope));
        return false;
    }
    return true;
}

Val BuiltinCall::make(ir::Node n, const Val &like, bool weak) const {
    n.loc = loc;
    (void)like;
    return {make_node(std::move(n)), weak, nullptr};
}

bool BuiltinCall::axes_of(const ast::KeywordArg *k, size_t rank, std::vector<int64_t> *out) const {
    if (!k) return true;
    std::vector<const ast::Expr *> items;
    if (k->value->kind == ast::ExprKind::ArrayLit || k->value->kind == ast::ExprKind::Tuple)
        for (const ast::ExprPtr &x : k->value->args) items.push_back(x.get());
    else
        items.push_back(k->value.get());
    for (const ast::Expr *x : items) {
        Val v = s.lower(*x, scope);
        if (!v.ok()) return false;
        if (!v.idx || v.idx->kind != ir::IndexExpr::Aff || !v.idx->aff.is_constant()) {
            s.error(x->loc, "axis must be an integer constant");
            return false;
        }
        int64_t a = v.idx->aff.constant;
        int64_t r = static_cast<int64_t>(rank);
        if (a < -r || a >= r) {
            s.error(x->loc, "axis " + std::to_string(a) + " is out of range for rank " + std::to_string(rank));
            return false;
        }
        out->push_back(a < 0 ? a + r : a);
    }
    std::sort(out->begin(), out->end());
    if (std::adjacent_find(out->begin(), out->end()) != out->end()) {
        s.error(k->loc, "repeated axis");
        return false;
    }
    return true;
}

bool BuiltinCall::dtype_kw(ir::DType def, ir::DType *out) const {
    *out = def;
    const ast::KeywordArg *k = kw("dtype");
    if (!k) return true;
    static const std::map<std::string, ir::DType> names = {
        {"f32", ir::DType::F32}, {"f64", ir::DType::F64}, {"i32", ir::DType::I32}, {"bool", ir::DType::Bool}};
    auto it = k->value->kind == ast::ExprKind::Name ? names.find(k->value->name) : names.end();
    if (it == names.end()) {
        s.error(k->value->loc, "dtype must be one of f32, f64, i32, bool");
        return false;
    }
    *out = it->second;
    return true;
}

ir::Node BuiltinCall::builtin_node(ir::BuiltinOp op, ir::Type t, std::vector<ir::NodePtr> args) const {
    ir::Node n;
    n.kind = ir::NodeKind::Builtin;
    n.builtin = op;
    n.type = std::move(t);
    n.args = std::move(args);
    n.loc = loc;
    return n;
}

bool BuiltinCall::key_arg(const Val &k, Loc at) const {
    if (!k.ok()) return false;
    if (k.type().is_tuple || k.type().dtype != ir::DType::Key || !k.type().shape.empty()) {
        s.error(at, name + " needs a random key made by rng(…), got " + s.type_str(k.type(), scope));
        return false;
    }
    return true;
}

Val Sema::sum_leaves(const Val &x, const ast::Expr &call, Scope &scope) {
    if (!call.kwargs.empty()) {
        error(call.kwargs[0].loc, "sum of a tuple adds every element of every leaf; it takes no axis");
        return {};
    }
    std::vector<Val> leaves;
    std::function<bool(const Val &)> flatten = [&](const Val &v) {
        if (!v.type().is_tuple) {
            if (v.type().dtype == ir::DType::Key) {
                error(call.loc, "sum needs numeric leaves, got " + type_str(x.type(), scope));
                return false;
            }
            leaves.push_back(v);
            return true;
        }
        for (size_t k = 0; k < v.type().elems.size(); ++k)
            if (!flatten(tuple_get(v, k))) return false;
        return true;
    };
    if (!flatten(x)) return {};
    if (leaves.empty()) {
        error(call.loc, "sum of an empty tuple");
        return {};
    }
    ir::DType d = ir::DType::F32;  // the widest float dtype of the leaves
    for (const Val &v : leaves)
        if (v.type().dtype == ir::DType::F64) d = ir::DType::F64;
    Val acc;
    for (const Val &v0 : leaves) {
        Val v = convert(v0, d);
        ir::Node n;
        n.kind = ir::NodeKind::Builtin;
        n.builtin = ir::BuiltinOp::Sum;
        n.type = scalar(d);
        n.args = {v.node};
        n.loc = call.loc;
        Val s{make_node(std::move(n)), false, nullptr};
        acc = acc.ok() ? binary_op(ir::BinaryOp::Add, acc, s, call.loc, scope, "+") : s;
    }
    return acc;
}

}  // namespace trlc::sema
