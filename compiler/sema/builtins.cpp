// builtins — the builtin functions of LANGUAGE.md §4, with their typing rules.
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
#include <algorithm>
#include <functional>
#include <set>

#include "ir/ops.h"
#include "sema/sema_impl.h"

namespace trlc::sema {

namespace {

// Besides the unary elementwise builtins of ir/ops.def (exp, log, …, stop_grad).
const std::set<std::string> kBuiltins = {
    "sum", "mean", "max", "min", "argmax", "logsumexp", "softmax", "log_softmax", "matmul",
    "transpose", "reshape", "concat", "stack", "one_hot", "gather", "cumsum",
    "discounted_cumsum", "arange", "zeros", "ones", "full", "pow", "clamp", "rng",
    "uniform", "normal", "categorical", "fold_in", "f32", "f64", "i32", "bool",
    "where", "grad", "zeros_like", "ones_like", "shape", "orthogonal", "permutation",
    "uniform_like", "normal_like"};

ir::DType float_of(ir::DType d) { return d == ir::DType::F64 ? d : ir::DType::F32; }

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
            error(x.loc, "an extent must be an integer constant or affine in the dims, got '" +
                             text(x.loc) + "'");
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
    if (v.node->kind == ir::NodeKind::Const && v.type().dtype == ir::DType::I32 &&
        v.type().shape.size() == 1) {
        for (double x : v.node->data) {
            if (x < 0) {
                error(e.loc, "bad extent " + std::to_string(static_cast<int64_t>(x)));
                return std::nullopt;
            }
            out.push_back(ir::Extent{static_cast<int64_t>(x), nullptr});
        }
        return out;
    }
    error(e.loc, "a shape must be a list of integers such as [4, 64], got " +
                     type_str(v.type(), scope));
    return std::nullopt;
}

Val Sema::matmul(Val a, Val b, Loc loc, const Scope &scope) {
    if (!a.ok() || !b.ok()) return {};
    const ir::Type ta = a.type(), tb = b.type();
    if (ta.is_tuple || tb.is_tuple || ta.shape.empty() || tb.shape.empty() ||
        ta.dtype == ir::DType::Key || tb.dtype == ir::DType::Key) {
        error(loc, "matmul needs arrays of rank >= 1, got " + type_str(ta, scope) + " and " +
                       type_str(tb, scope));
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
        error(loc, "shapes " + type_str(ta, scope) + " and " + type_str(tb, scope) +
                       " cannot be broadcast");
        return {};
    }
    ir::DType d;
    if (a.weak && !b.weak) d = tb.dtype;
    else if (b.weak && !a.weak) d = ta.dtype;
    else d = promote(ta.dtype, tb.dtype);
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
    size_t npos = call.args.size() - 1;
    auto pos = [&](size_t k) -> const ast::Expr & { return *call.args[k + 1]; };
    if (name == "grad") {  // stays a Grad node: y a scalar float, x float (tuple) values
        if (call.args.size() != 3 || !call.kwargs.empty()) {
            error(loc, "grad takes 2 arguments (grad(y, x)), got " +
                           std::to_string(call.args.size() - 1) +
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
            error(call.args[2]->loc, "grad needs x of a float type (or a tuple of them), got " +
                                         type_str(x.type(), scope));
            return {};
        }
        ir::Node n;
        n.kind = ir::NodeKind::Grad;
        n.loc = loc;
        n.type = x.type();
        n.args = {y.node, x.node};
        return {make_node(std::move(n)), false, nullptr};
    }
    // ---- arity and keywords
    auto arity = [&](size_t lo, size_t hi) {
        if (npos >= lo && npos <= hi) return true;
        std::string want = lo == hi ? std::to_string(lo)
                           : hi == lo + 1 ? std::to_string(lo) + " or " + std::to_string(hi)
                                          : std::to_string(lo) + " to " + std::to_string(hi);
        if (hi > 100) want = "at least " + std::to_string(lo);
        error(loc, name + " takes " + want + " argument" + (hi == 1 && lo == 1 ? "" : "s") +
                       ", got " + std::to_string(npos));
        return false;
    };
    auto keywords = [&](std::initializer_list<const char *> allowed) {
        for (const ast::KeywordArg &k : call.kwargs) {
            bool found = false;
            std::string list;
            for (const char *a : allowed) {
                found = found || k.name == a;
                list += (list.empty() ? "" : ", ") + std::string(a);
            }
            if (!found) {
                error(k.loc, "unknown keyword '" + k.name + "' for " + name +
                                 (list.empty() ? " (it takes no keywords)" : "; expected " + list));
                return false;
            }
        }
        return true;
    };
    auto kw = [&](const char *k) -> const ast::KeywordArg * {
        for (const ast::KeywordArg &a : call.kwargs)
            if (a.name == k) return &a;
        return nullptr;
    };
    auto value = [&](size_t k) { return lower(pos(k), scope); };
    auto numeric = [&](const Val &v, Loc at) {
        if (!v.ok()) return false;
        if (v.type().is_tuple || v.type().dtype == ir::DType::Key) {
            error(at, name + " needs a numeric array, got " + type_str(v.type(), scope));
            return false;
        }
        return true;
    };
    auto make = [&](ir::Node n, const Val &like, bool weak) -> Val {
        n.loc = loc;
        (void)like;
        return {make_node(std::move(n)), weak, nullptr};
    };
    // axis=: one int or a list; normalized against "rank".
    auto axes_of = [&](const ast::KeywordArg *k, size_t rank, std::vector<int64_t> *out) {
        if (!k) return true;
        std::vector<const ast::Expr *> items;
        if (k->value->kind == ast::ExprKind::ArrayLit || k->value->kind == ast::ExprKind::Tuple)
            for (const ast::ExprPtr &x : k->value->args) items.push_back(x.get());
        else
            items.push_back(k->value.get());
        for (const ast::Expr *x : items) {
            Val v = lower(*x, scope);
            if (!v.ok()) return false;
            if (!v.idx || v.idx->kind != ir::IndexExpr::Aff || !v.idx->aff.is_constant()) {
                error(x->loc, "axis must be an integer constant");
                return false;
            }
            int64_t a = v.idx->aff.constant;
            int64_t r = static_cast<int64_t>(rank);
            if (a < -r || a >= r) {
                error(x->loc, "axis " + std::to_string(a) + " is out of range for rank " +
                                  std::to_string(rank));
                return false;
            }
            out->push_back(a < 0 ? a + r : a);
        }
        std::sort(out->begin(), out->end());
        if (std::adjacent_find(out->begin(), out->end()) != out->end()) {
            error(k->loc, "repeated axis");
            return false;
        }
        return true;
    };
    auto dtype_kw = [&](ir::DType def, ir::DType *out) {
        *out = def;
        const ast::KeywordArg *k = kw("dtype");
        if (!k) return true;
        static const std::map<std::string, ir::DType> names = {
            {"f32", ir::DType::F32}, {"f64", ir::DType::F64}, {"i32", ir::DType::I32},
            {"bool", ir::DType::Bool}};
        auto it = k->value->kind == ast::ExprKind::Name ? names.find(k->value->name) : names.end();
        if (it == names.end()) {
            error(k->value->loc, "dtype must be one of f32, f64, i32, bool");
            return false;
        }
        *out = it->second;
        return true;
    };
    auto builtin_node = [&](ir::BuiltinOp op, ir::Type t, std::vector<ir::NodePtr> args) {
        ir::Node n;
        n.kind = ir::NodeKind::Builtin;
        n.builtin = op;
        n.type = std::move(t);
        n.args = std::move(args);
        n.loc = loc;
        return n;
    };

    // ---- casts
    static const std::map<std::string, ir::DType> casts = {
        {"f32", ir::DType::F32}, {"f64", ir::DType::F64}, {"i32", ir::DType::I32},
        {"bool", ir::DType::Bool}};
    if (casts.count(name)) {
        if (!arity(1, 1) || !keywords({})) return {};
        return map_leaves({value(0)}, loc, scope, name, [&](const std::vector<Val> &x) -> Val {
            Val v = x[0];
            if (!numeric(v, pos(0).loc)) return {};
            v.weak = false;  // a cast makes the dtype explicit
            Val r = convert(v, casts.at(name));
            r.weak = false;
            return r;
        });
    }
    // ---- elementwise math: the unary rows of ir/ops.def
    if (const ir::UnaryInfo *u = ir::unary_by_name(name)) {
        if (!arity(1, 1) || !keywords({})) return {};
        Val v0 = value(0);
        if (!v0.ok()) return {};
        const bool any = u->typing == ir::UnaryTyping::Any;  // stop_grad: tuple or bool unchanged
        // The operation on one value.
        auto unary = [&](Val v) -> Val {
            if (!any && !numeric(v, pos(0).loc)) return {};
            ir::Node n;
            n.kind = ir::NodeKind::Unary;
            n.uop = u->op;
            if (u->typing == ir::UnaryTyping::Float)
                v = convert(v, float_of(v.type().dtype));
            else if (!any && v.type().dtype == ir::DType::Bool)
                v = convert(v, ir::DType::I32);
            n.type = v.type();
            n.args = {v.node};
            return make(std::move(n), v, v.weak);
        };
        if (v0.type().is_tuple && !any)  // pytree: every leaf
            return map_leaves({v0}, loc, scope, name,
                              [&](const std::vector<Val> &x) -> Val { return unary(x[0]); });
        return unary(v0);
    }
    if (name == "pow") {
        if (!arity(2, 2) || !keywords({})) return {};
        return binary_op(ir::BinaryOp::Pow, value(0), value(1), loc, scope, "pow");
    }
    if (name == "where") {
        if (!arity(3, 3) || !keywords({})) return {};
        Val c = value(0), a0 = value(1), b0 = value(2);
        if (!c.ok() || !a0.ok() || !b0.ok()) return {};
        if (c.type().is_tuple || c.type().dtype != ir::DType::Bool) {
            error(pos(0).loc, "where needs a bool condition, got " + type_str(c.type(), scope));
            return {};
        }
        return map_leaves({a0, b0}, loc, scope, "where", [&](const std::vector<Val> &ab_) -> Val {
        Val a = ab_[0], b = ab_[1];
        // Type the branches as a + b would (same promotion and broadcasting).
        Val ab = binary_op(ir::BinaryOp::Add, a, b, loc, scope, "where");
        if (!ab.ok()) return {};
        ir::DType d = ab.type().dtype;
        if (ab.node->kind == ir::NodeKind::Binary) {
            a.node = ab.node->args[0];
            b.node = ab.node->args[1];
        } else {
            a = convert(a, d);
            b = convert(b, d);
        }
        if (d == ir::DType::I32 && a.type().dtype == ir::DType::Bool) {
            a = convert(a, d);
            b = convert(b, d);
        }
        bool ok = true;
        ir::Type t = join_shapes(ab.type(), c.type(), &ok);
        if (!ok) {
            error(loc, "shapes " + type_str(c.type(), scope) + " and " +
                           type_str(ab.type(), scope) + " cannot be broadcast");
            return {};
        }
        ir::Node n;
        n.kind = ir::NodeKind::Where;
        n.type = t;
        n.type.dtype = a.type().dtype;
        n.args = {c.node, a.node, b.node};
        return make(std::move(n), a, a.weak && b.weak);
        });
    }
    if (name == "clamp") {
        if (!arity(3, 3) || !keywords({})) return {};
        return map_leaves({value(0), value(1), value(2)}, loc, scope, "clamp",
                          [&](const std::vector<Val> &xs) -> Val {
        Val x = xs[0], lo = xs[1], hi = xs[2];
        Val t1 = binary_op(ir::BinaryOp::Min, x, lo, loc, scope, "clamp");
        if (!t1.ok()) return {};
        Val t2 = binary_op(ir::BinaryOp::Min, t1, hi, loc, scope, "clamp");
        if (!t2.ok()) return {};
        ir::DType d = t2.type().dtype;
        x = convert(x, d), lo = convert(lo, d), hi = convert(hi, d);
        return make(builtin_node(ir::BuiltinOp::Clamp, t2.type(), {x.node, lo.node, hi.node}), x,
                    x.weak && lo.weak && hi.weak);
        });
    }
    // ---- reductions
    if ((name == "max" || name == "min") && npos == 2) {
        if (!keywords({})) return {};
        return binary_op(name == "max" ? ir::BinaryOp::Max : ir::BinaryOp::Min, value(0), value(1),
                         loc, scope, name.c_str());
    }
    static const std::map<std::string, ir::BuiltinOp> reductions = {
        {"sum", ir::BuiltinOp::Sum}, {"mean", ir::BuiltinOp::Mean},
        {"max", ir::BuiltinOp::ReduceMax}, {"min", ir::BuiltinOp::ReduceMin},
        {"argmax", ir::BuiltinOp::Argmax}, {"logsumexp", ir::BuiltinOp::Logsumexp}};
    if (reductions.count(name)) {
        if (!arity(1, (name == "max" || name == "min") ? 2 : 1) || !keywords({"axis"})) return {};
        Val x = value(0);
        if (x.ok() && x.type().is_tuple && name == "sum") return sum_leaves(x, call, scope);
        if (!numeric(x, pos(0).loc)) return {};
        std::vector<int64_t> axes;
        if (!axes_of(kw("axis"), x.type().shape.size(), &axes)) return {};
        ir::BuiltinOp op = reductions.at(name);
        ir::DType in = x.type().dtype;
        if (op == ir::BuiltinOp::Mean || op == ir::BuiltinOp::Logsumexp) in = float_of(in);
        if (op == ir::BuiltinOp::Sum && in == ir::DType::Bool) in = ir::DType::I32;
        x = convert(x, in);
        ir::Type t = x.type();
        t.shape.clear();
        if (kw("axis"))
            for (size_t k = 0; k < x.type().shape.size(); ++k)
                if (!std::binary_search(axes.begin(), axes.end(), static_cast<int64_t>(k)))
                    t.shape.push_back(x.type().shape[k]);
        if (op == ir::BuiltinOp::Argmax) t.dtype = ir::DType::I32;
        ir::Node n = builtin_node(op, t, {x.node});
        n.axes = axes;
        n.has_axes = kw("axis") != nullptr;
        return make(std::move(n), x, x.weak && op != ir::BuiltinOp::Argmax);
    }
    if (name == "softmax" || name == "log_softmax" || name == "cumsum") {
        if (!arity(1, 1) || !keywords({"axis"})) return {};
        Val x = value(0);
        if (!numeric(x, pos(0).loc)) return {};
        if (x.type().shape.empty()) {
            error(pos(0).loc, name + " needs an array, got " + type_str(x.type(), scope));
            return {};
        }
        std::vector<int64_t> axes;
        if (!axes_of(kw("axis"), x.type().shape.size(), &axes)) return {};
        if (axes.size() > 1) {
            error(kw("axis")->loc, name + " takes one axis");
            return {};
        }
        if (axes.empty()) axes = {name == "cumsum" ? 0 : static_cast<int64_t>(x.type().shape.size()) - 1};
        ir::DType d = x.type().dtype;
        d = name == "cumsum" ? (d == ir::DType::Bool ? ir::DType::I32 : d) : float_of(d);
        x = convert(x, d);
        ir::Node n = builtin_node(name == "softmax"       ? ir::BuiltinOp::Softmax
                                  : name == "log_softmax" ? ir::BuiltinOp::LogSoftmax
                                                          : ir::BuiltinOp::Cumsum,
                                  x.type(), {x.node});
        n.axes = axes;
        n.has_axes = true;
        return make(std::move(n), x, x.weak);
    }
    if (name == "discounted_cumsum") {
        if (!arity(2, 2) || !keywords({"axis"})) return {};
        Val x = value(0), g = value(1);
        if (!numeric(x, pos(0).loc) || !numeric(g, pos(1).loc)) return {};
        if (x.type().shape.empty()) {
            error(pos(0).loc, name + " needs an array, got " + type_str(x.type(), scope));
            return {};
        }
        {  // gamma: a scalar, or an array that broadcasts to x's shape (gamma[k] scales y[k+1])
            bool ok = true;
            ir::Type j = join_shapes(x.type(), g.type(), &ok);
            if (!ok || j.shape.size() != x.type().shape.size() ||
                !type_equal(with_dtype(j, ir::DType::F32), with_dtype(x.type(), ir::DType::F32))) {
                error(pos(1).loc, "the discount of discounted_cumsum must be a scalar or broadcast "
                                  "to " + type_str(x.type(), scope) + ", got " +
                                  type_str(g.type(), scope));
                return {};
            }
        }
        std::vector<int64_t> axes;
        if (!axes_of(kw("axis"), x.type().shape.size(), &axes)) return {};
        if (axes.empty()) axes = {0};
        ir::DType d = float_of(x.type().dtype);
        if (!x.weak && g.type().dtype == ir::DType::F64 && !g.weak) d = ir::DType::F64;
        x = convert(x, d);
        g = convert(g, d);
        ir::Node n = builtin_node(ir::BuiltinOp::DiscountedCumsum, x.type(), {x.node, g.node});
        n.axes = axes;
        n.has_axes = true;
        return make(std::move(n), x, x.weak && g.weak);
    }
    if (name == "matmul") {
        if (!arity(2, 2) || !keywords({})) return {};
        return matmul(value(0), value(1), loc, scope);
    }
    if (name == "transpose") {
        if (!arity(1, 2) || !keywords({"axes"})) return {};
        Val x = value(0);
        if (!numeric(x, pos(0).loc)) return {};
        size_t r = x.type().shape.size();
        std::vector<int64_t> perm;
        const ast::Expr *px = npos == 2 ? &pos(1) : (kw("axes") ? kw("axes")->value.get() : nullptr);
        if (px) {
            std::vector<const ast::Expr *> items;
            if (px->kind == ast::ExprKind::ArrayLit || px->kind == ast::ExprKind::Tuple)
                for (const ast::ExprPtr &a : px->args) items.push_back(a.get());
            for (const ast::Expr *a : items) {
                Val v = lower(*a, scope);
                if (!v.ok()) return {};
                if (!v.idx || !v.idx->aff.is_constant() || v.idx->kind != ir::IndexExpr::Aff) {
                    error(a->loc, "axes must be integer constants");
                    return {};
                }
                int64_t ax = v.idx->aff.constant;
                perm.push_back(ax < 0 ? ax + static_cast<int64_t>(r) : ax);
            }
            std::vector<int64_t> sorted = perm;
            std::sort(sorted.begin(), sorted.end());
            bool ok = sorted.size() == r;
            for (size_t k = 0; ok && k < r; ++k) ok = sorted[k] == static_cast<int64_t>(k);
            if (!ok) {
                error(px->loc, "axes " + text(px->loc) + " are not a permutation of the " +
                                   std::to_string(r) + " axes of " + type_str(x.type(), scope));
                return {};
            }
        } else {
            for (size_t k = 0; k < r; ++k) perm.push_back(static_cast<int64_t>(r - 1 - k));
        }
        ir::Type t = x.type();
        for (size_t k = 0; k < r; ++k) t.shape[k] = x.type().shape[perm[k]];
        ir::Node n = builtin_node(ir::BuiltinOp::Transpose, t, {x.node});
        n.axes = perm;
        n.has_axes = true;
        return make(std::move(n), x, x.weak);
    }
    if (name == "reshape") {
        if (!arity(2, 2) || !keywords({})) return {};
        Val x = value(0);
        if (!numeric(x, pos(0).loc)) return {};
        for (const ir::Extent &e : x.type().shape)
            if (!e.is_static()) {
                error(pos(0).loc, "cannot reshape " + type_str(x.type(), scope) +
                                      ": its shape is dynamic");
                return {};
            }
        auto shape = shape_arg(pos(1), scope);
        if (!shape) return {};
        int64_t have = 1, want = 1;
        for (const ir::Extent &e : x.type().shape) have *= e.max_value;
        for (const ir::Extent &e : *shape) {
            if (!e.is_static()) {
                error(pos(1).loc, "the shape of reshape must be static");
                return {};
            }
            want *= e.max_value;
        }
        ir::Type t = x.type();
        t.shape = *shape;
        if (have != want) {
            error(loc, "cannot reshape " + type_str(x.type(), scope) + " (" + std::to_string(have) +
                           " elements) to " + type_str(t, scope) + " (" + std::to_string(want) +
                           " elements)");
            return {};
        }
        return make(builtin_node(ir::BuiltinOp::Reshape, t, {x.node}), x, x.weak);
    }
    if (name == "concat" || name == "stack") {
        if (!arity(1, 1000) || !keywords({"axis"})) return {};
        std::vector<Val> xs;
        for (size_t k = 0; k < npos; ++k) {
            Val v = value(k);
            if (!v.ok()) return {};
            if (npos == 1 && v.type().is_tuple) {
                for (size_t e = 0; e < v.type().elems.size(); ++e) {
                    ir::Node g;
                    g.kind = ir::NodeKind::TupleGet;
                    g.type = v.type().elems[e];
                    g.loc = v.node->loc;
                    g.args = {v.node};
                    g.int_attr = static_cast<int64_t>(e);
                    xs.push_back({make_node(std::move(g)), false, nullptr});
                }
            } else {
                xs.push_back(v);
            }
        }
        for (size_t k = 0; k < xs.size(); ++k)
            if (!numeric(xs[k], loc)) return {};
        // Common dtype, as a chain of binary operators would give.
        Val acc = xs[0];
        bool weak = xs[0].weak;
        ir::DType d = xs[0].type().dtype;
        for (size_t k = 1; k < xs.size(); ++k) {
            ir::DType vd = xs[k].type().dtype;
            if (weak && xs[k].weak) d = promote(d, vd);
            else if (weak) d = dtype_kind(vd) >= dtype_kind(d) ? vd : float_of(d);
            else if (!xs[k].weak) d = promote(d, vd);
            weak = weak && xs[k].weak;
        }
        size_t r = xs[0].type().shape.size();
        size_t out_rank = name == "stack" ? r + 1 : r;
        if (name == "concat" && r == 0) {
            error(loc, "concat needs arrays, got " + type_str(xs[0].type(), scope));
            return {};
        }
        std::vector<int64_t> axes;
        if (!axes_of(kw("axis"), out_rank, &axes)) return {};
        int64_t axis = axes.empty() ? 0 : axes[0];
        ir::Type t = xs[0].type();
        t.dtype = d;
        std::vector<ir::NodePtr> args;
        int64_t total = 0;
        bool dyn = false;
        for (size_t k = 0; k < xs.size(); ++k) {
            const ir::Type &tk = xs[k].type();
            bool same = tk.shape.size() == r;
            for (size_t a = 0; same && a < r; ++a)
                same = (name == "concat" && static_cast<int64_t>(a) == axis) ||
                       extent_equal(tk.shape[a], xs[0].type().shape[a]);
            if (!same) {
                error(loc, "shapes " + type_str(xs[0].type(), scope) + " and " +
                               type_str(tk, scope) + " cannot be " +
                               (name == "stack" ? "stacked" : "concatenated"));
                return {};
            }
            if (name == "concat") {
                dyn = dyn || !tk.shape[axis].is_static();
                total += tk.shape[axis].max_value;
            }
            args.push_back(convert(xs[k], d).node);
        }
        if (dyn) {
            error(loc, "concat of arrays with dynamic extents along the axis is not supported");
            return {};
        }
        if (name == "concat") t.shape[axis] = ir::Extent{total, nullptr};
        else t.shape.insert(t.shape.begin() + axis, ir::Extent{static_cast<int64_t>(xs.size()), nullptr});
        ir::Node n = builtin_node(name == "concat" ? ir::BuiltinOp::Concat : ir::BuiltinOp::Stack, t,
                                  args);
        n.axes = {axis};
        n.has_axes = true;
        return make(std::move(n), acc, weak);
    }
    if (name == "one_hot") {
        if (!arity(2, 2) || !keywords({"dtype"})) return {};
        Val i = value(0), depth = value(1);
        if (!i.ok() || !depth.ok()) return {};
        if (i.type().is_tuple || i.type().dtype != ir::DType::I32) {
            error(pos(0).loc, "one_hot needs i32 indices, got " + type_str(i.type(), scope));
            return {};
        }
        if (!depth.idx || depth.idx->kind != ir::IndexExpr::Aff || !depth.idx->aff.is_constant() ||
            depth.idx->aff.constant < 1) {
            error(pos(1).loc, "the depth of one_hot must be a positive integer constant");
            return {};
        }
        ir::DType d;
        if (!dtype_kw(ir::DType::F32, &d)) return {};
        ir::Type t = i.type();
        t.dtype = d;
        t.shape.push_back(ir::Extent{depth.idx->aff.constant, nullptr});
        ir::Node n = builtin_node(ir::BuiltinOp::OneHot, t, {convert(i, ir::DType::I32).node});
        n.int_attr = depth.idx->aff.constant;
        return make(std::move(n), i, false);
    }
    if (name == "gather") {
        if (!arity(2, 2) || !keywords({"axis"})) return {};
        Val x = value(0), i = value(1);
        if (!numeric(x, pos(0).loc) || !i.ok()) return {};
        if (i.type().is_tuple || i.type().dtype != ir::DType::I32) {
            error(pos(1).loc, "gather needs i32 indices, got " + type_str(i.type(), scope));
            return {};
        }
        if (x.type().shape.empty()) {
            error(pos(0).loc, "gather needs an array, got " + type_str(x.type(), scope));
            return {};
        }
        std::vector<int64_t> axes;
        if (!axes_of(kw("axis"), x.type().shape.size(), &axes)) return {};
        int64_t axis = axes.empty() ? 0 : axes[0];
        ir::Type t = x.type();
        t.shape.clear();
        for (int64_t k = 0; k < axis; ++k) t.shape.push_back(x.type().shape[k]);
        for (const ir::Extent &e : i.type().shape) t.shape.push_back(e);
        for (size_t k = axis + 1; k < x.type().shape.size(); ++k) t.shape.push_back(x.type().shape[k]);
        ir::Node n = builtin_node(ir::BuiltinOp::Gather, t, {x.node, convert(i, ir::DType::I32).node});
        n.axes = {axis};
        n.has_axes = true;
        return make(std::move(n), x, x.weak);
    }
    // ---- constructors
    if (name == "arange") {
        if (!arity(1, 1) || !keywords({"dtype"})) return {};
        auto shape = shape_arg(pos(0), scope);
        if (!shape) return {};
        if (shape->size() != 1) {
            error(pos(0).loc, "arange takes one length");
            return {};
        }
        ir::DType d;
        if (!dtype_kw(ir::DType::I32, &d)) return {};
        ir::Type t = scalar(d);
        t.shape = *shape;
        return make(builtin_node(ir::BuiltinOp::Arange, t, {}), Val{}, false);
    }
    if (name == "zeros" || name == "ones") {
        if (!arity(1, 1) || !keywords({"dtype"})) return {};
        auto shape = shape_arg(pos(0), scope);
        if (!shape) return {};
        ir::DType d;
        if (!dtype_kw(ir::DType::F32, &d)) return {};
        ir::Type t = scalar(d);
        t.shape = *shape;
        return make(builtin_node(name == "zeros" ? ir::BuiltinOp::Zeros : ir::BuiltinOp::Ones, t, {}),
                    Val{}, false);
    }
    if (name == "full") {
        if (!arity(2, 2) || !keywords({"dtype"})) return {};
        auto shape = shape_arg(pos(0), scope);
        if (!shape) return {};
        Val v = value(1);
        if (!numeric(v, pos(1).loc)) return {};
        if (!v.type().shape.empty()) {
            error(pos(1).loc, "the fill value of full must be a scalar, got " +
                                  type_str(v.type(), scope));
            return {};
        }
        ir::DType d = v.type().dtype;
        bool weak = v.weak && !kw("dtype");
        if (!dtype_kw(d, &d)) return {};
        v = convert(v, d);
        ir::Type t = scalar(d);
        t.shape = *shape;
        return make(builtin_node(ir::BuiltinOp::Full, t, {v.node}), v, weak);
    }
    // ---- randomness
    auto key_arg = [&](const Val &k, Loc at) {
        if (!k.ok()) return false;
        if (k.type().is_tuple || k.type().dtype != ir::DType::Key || !k.type().shape.empty()) {
            error(at, name + " needs a random key made by rng(…), got " + type_str(k.type(), scope));
            return false;
        }
        return true;
    };
    if (name == "rng") {
        if (!keywords({})) return {};
        ir::Node n;
        n.kind = ir::NodeKind::Rng;
        n.type = scalar(ir::DType::Key);
        for (size_t k = 0; k < npos; ++k) {
            Val v = value(k);
            if (!v.ok()) return {};
            if (v.type().is_tuple || !v.type().shape.empty() || v.type().dtype != ir::DType::I32) {
                error(pos(k).loc, "rng arguments must be i32 scalars, got " +
                                      type_str(v.type(), scope));
                return {};
            }
            n.args.push_back(v.node);
        }
        return make(std::move(n), Val{}, false);
    }
    if (name == "fold_in") {
        if (!arity(2, 2) || !keywords({})) return {};
        Val k = value(0), i = value(1);
        if (!key_arg(k, pos(0).loc) || !i.ok()) return {};
        if (i.type().is_tuple || !i.type().shape.empty() || i.type().dtype != ir::DType::I32) {
            error(pos(1).loc, "fold_in needs an i32 scalar, got " + type_str(i.type(), scope));
            return {};
        }
        return make(builtin_node(ir::BuiltinOp::FoldIn, scalar(ir::DType::Key), {k.node, i.node}),
                    k, false);
    }
    if (name == "uniform_like" || name == "normal_like") {  // draws of x's shape and float dtype
        if (!arity(2, 2) || !keywords({})) return {};
        Val k = value(0), x = value(1);
        if (!key_arg(k, pos(0).loc) || !numeric(x, pos(1).loc)) return {};
        ir::Type t = x.type();
        t.dtype = float_of(t.dtype);
        ir::BuiltinOp op = name == "uniform_like" ? ir::BuiltinOp::Uniform : ir::BuiltinOp::Normal;
        return make(builtin_node(op, t, {k.node}), k, false);
    }
    if (name == "uniform" || name == "normal") {
        if (!arity(1, 2) || !keywords({"dtype"})) return {};
        Val k = value(0);
        if (!key_arg(k, pos(0).loc)) return {};
        std::vector<ir::Extent> shape;
        if (npos == 2) {
            auto s = shape_arg(pos(1), scope);
            if (!s) return {};
            shape = *s;
        }
        ir::DType d;
        if (!dtype_kw(ir::DType::F32, &d)) return {};
        if (!is_float(d)) {
            error(kw("dtype")->value->loc, name + " gives f32 or f64");
            return {};
        }
        ir::Type t = scalar(d);
        t.shape = shape;
        return make(builtin_node(name == "uniform" ? ir::BuiltinOp::Uniform : ir::BuiltinOp::Normal,
                                 t, {k.node}),
                    k, false);
    }
    if (name == "categorical") {
        if (!arity(2, 2) || !keywords({})) return {};
        Val k = value(0), l = value(1);
        if (!key_arg(k, pos(0).loc) || !numeric(l, pos(1).loc)) return {};
        if (l.type().shape.empty()) {
            error(pos(1).loc, "categorical needs logits with at least one axis, got " +
                                  type_str(l.type(), scope));
            return {};
        }
        l = convert(l, float_of(l.type().dtype));
        ir::Type t = l.type();
        t.dtype = ir::DType::I32;
        t.shape.pop_back();
        return make(builtin_node(ir::BuiltinOp::Categorical, t, {k.node, l.node}), k, false);
    }
    // ---- pytree helpers and shapes
    if (name == "zeros_like" || name == "ones_like") {
        if (!arity(1, 1) || !keywords({})) return {};
        return map_leaves({value(0)}, loc, scope, name, [&](const std::vector<Val> &x) -> Val {
            if (!numeric(x[0], pos(0).loc)) return {};
            ir::BuiltinOp op = name == "zeros_like" ? ir::BuiltinOp::Zeros : ir::BuiltinOp::Ones;
            return make(builtin_node(op, x[0].type(), {}), Val{}, false);
        });
    }
    if (name == "shape") {
        if (!arity(1, 1) || !keywords({})) return {};
        Val x = value(0);
        if (!numeric(x, pos(0).loc)) return {};
        ir::Node c;
        c.kind = ir::NodeKind::Const;
        c.type = scalar(ir::DType::I32);
        c.type.shape.push_back(ir::Extent{static_cast<int64_t>(x.type().shape.size()), nullptr});
        for (const ir::Extent &e : x.type().shape) {
            if (!e.is_static()) {
                error(pos(0).loc, "shape of " + type_str(x.type(), scope) +
                                      " is not a constant: it has a dynamic extent");
                return {};
            }
            c.data.push_back(static_cast<double>(e.max_value));
        }
        return make(std::move(c), Val{}, false);
    }
    // ---- initializers and permutations (runtime/trl_linalg.h)
    if (name == "orthogonal") {
        if (!arity(2, 2) || !keywords({"gain", "dtype"})) return {};
        Val k = value(0);
        if (!key_arg(k, pos(0).loc)) return {};
        auto shape = shape_arg(pos(1), scope);
        if (!shape) return {};
        if (shape->size() != 2 || !(*shape)[0].is_static() || !(*shape)[1].is_static() ||
            (*shape)[0].max_value < 1 || (*shape)[1].max_value < 1) {
            error(pos(1).loc, "orthogonal needs a static matrix shape [rows, cols] with rows, cols "
                              ">= 1, got '" + text(pos(1).loc) + "'");
            return {};
        }
        ir::DType d;
        if (!dtype_kw(ir::DType::F32, &d)) return {};
        if (!is_float(d)) {
            error(kw("dtype")->value->loc, "orthogonal gives f32 or f64");
            return {};
        }
        Val gain = const_val(1.0, ir::DType::F64, false, loc);
        if (const ast::KeywordArg *gk = kw("gain")) {
            gain = lower(*gk->value, scope);
            if (!gain.ok()) return {};
            if (gain.type().is_tuple || !gain.type().shape.empty() ||
                dtype_kind(gain.type().dtype) == 3) {
                error(gk->value->loc, "the gain of orthogonal must be a number, got " +
                                          type_str(gain.type(), scope));
                return {};
            }
            gain = convert(gain, ir::DType::F64);
        }
        ir::Type t = scalar(d);
        t.shape = *shape;
        return make(builtin_node(ir::BuiltinOp::Orthogonal, t, {k.node, gain.node}), k, false);
    }
    if (name == "permutation") {
        if (!arity(2, 2) || !keywords({})) return {};
        Val k = value(0), n = value(1);
        if (!key_arg(k, pos(0).loc) || !n.ok()) return {};
        if (!n.idx || n.idx->kind != ir::IndexExpr::Aff || !n.idx->aff.is_constant() ||
            n.idx->aff.constant < 1) {
            error(pos(1).loc, "the length of permutation must be a positive integer constant, "
                              "got '" + text(pos(1).loc) + "'");
            return {};
        }
        ir::Type t = scalar(ir::DType::I32);
        t.shape.push_back(ir::Extent{n.idx->aff.constant, nullptr});
        return make(builtin_node(ir::BuiltinOp::Permutation, t, {k.node}), k, false);
    }
    error(loc, "builtin '" + name + "' is not supported");
    return {};
}

Val Sema::sum_leaves(const Val &x, const ast::Expr &call, Scope &scope) {
    if (!call.kwargs.empty()) {
        error(call.kwargs[0].loc,
              "sum of a tuple adds every element of every leaf; it takes no axis");
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
