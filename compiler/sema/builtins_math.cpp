// builtins_math — the elementwise and reduction builtins (dsl/README.md §5), lowered from one call
// (sema/builtin_call.h) with their typing rules: casts, the unary math rows of ir/ops.def, pow,
// where, clamp; sum mean max min argmax logsumexp over `axis=`, softmax, log_softmax, cumsum and
// discounted_cumsum.  Math that is not exact on integers computes in f32 for i32/bool inputs;
// elementwise builtins map over the leaves of tuples.  The dispatch is in builtins.cpp.
#include <algorithm>
#include <functional>
#include <map>

#include "ir/ops.h"
#include "sema/builtin_call.h"

namespace trlc::sema {

/** Casts, the unary math builtins, pow, where and clamp; nullopt: not one of them. */
std::optional<Val> Sema::lower_elementwise_builtin(const BuiltinCall &bc) {
    const std::string &name = bc.name;
    const Loc loc = bc.loc;
    Scope &scope = bc.scope;
    // ---- casts
    static const std::map<std::string, ir::DType> casts = {
        {"f32", ir::DType::F32}, {"f64", ir::DType::F64}, {"i32", ir::DType::I32}, {"bool", ir::DType::Bool}};
    if (casts.count(name)) {
        if (!bc.arity(1, 1) || !bc.keywords({})) return Val{};
        return map_leaves({bc.value(0)}, loc, scope, name, [&](const std::vector<Val> &x) -> Val {
            Val v = x[0];
            if (!bc.numeric(v, bc.pos(0).loc)) return Val{};
            v.weak = false;  // a cast makes the dtype explicit
            Val r = convert(v, casts.at(name));
            r.weak = false;
            return r;
        });
    }
    // ---- elementwise math: the unary rows of ir/ops.def
    if (const ir::UnaryInfo *u = ir::unary_by_name(name)) {
        if (!bc.arity(1, 1) || !bc.keywords({})) return Val{};
        Val v0 = bc.value(0);
        if (!v0.ok()) return Val{};
        const bool any = u->typing == ir::UnaryTyping::Any;  // stop_grad: tuple or bool unchanged
        // The operation on one value.
        auto unary = [&](Val v) -> Val {
            if (!any && !bc.numeric(v, bc.pos(0).loc)) return Val{};
            ir::Node n;
            n.kind = ir::NodeKind::Unary;
            n.uop = u->op;
            if (u->typing == ir::UnaryTyping::Float)
                v = convert(v, float_of(v.type().dtype));
            else if (!any && v.type().dtype == ir::DType::Bool)
                v = convert(v, ir::DType::I32);
            n.type = v.type();
            n.args = {v.node};
            return bc.make(std::move(n), v, v.weak);
        };
        if (v0.type().is_tuple && !any)  // pytree: every leaf
            return map_leaves({v0}, loc, scope, name, [&](const std::vector<Val> &x) -> Val { return unary(x[0]); });
        return unary(v0);
    }
    if (name == "pow") {
        if (!bc.arity(2, 2) || !bc.keywords({})) return Val{};
        return binary_op(ir::BinaryOp::Pow, bc.value(0), bc.value(1), loc, scope, "pow");
    }
    if (name == "where") {
        if (!bc.arity(3, 3) || !bc.keywords({})) return Val{};
        Val c = bc.value(0), a0 = bc.value(1), b0 = bc.value(2);
        if (!c.ok() || !a0.ok() || !b0.ok()) return Val{};
        if (c.type().is_tuple || c.type().dtype != ir::DType::Bool) {
            error(bc.pos(0).loc, "where needs a bool condition, got " + type_str(c.type(), scope));
            return Val{};
        }
        return map_leaves({a0, b0}, loc, scope, "where", [&](const std::vector<Val> &ab_) -> Val {
            Val a = ab_[0], b = ab_[1];
            // Type the branches as a + b would (same promotion and broadcasting).
            Val ab = binary_op(ir::BinaryOp::Add, a, b, loc, scope, "where");
            if (!ab.ok()) return Val{};
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
                error(loc, "shapes " + type_str(c.type(), scope) + " and " + type_str(ab.type(), scope) +
                               " cannot be broadcast");
                return Val{};
            }
            ir::Node n;
            n.kind = ir::NodeKind::Where;
            n.type = t;
            n.type.dtype = a.type().dtype;
            n.args = {c.node, a.node, b.node};
            return bc.make(std::move(n), a, a.weak && b.weak);
        });
    }
    if (name == "clamp") {
        if (!bc.arity(3, 3) || !bc.keywords({})) return Val{};
        return map_leaves(
            {bc.value(0), bc.value(1), bc.value(2)}, loc, scope, "clamp", [&](const std::vector<Val> &xs) -> Val {
                Val x = xs[0], lo = xs[1], hi = xs[2];
                Val t1 = binary_op(ir::BinaryOp::Min, x, lo, loc, scope, "clamp");
                if (!t1.ok()) return Val{};
                Val t2 = binary_op(ir::BinaryOp::Min, t1, hi, loc, scope, "clamp");
                if (!t2.ok()) return Val{};
                ir::DType d = t2.type().dtype;
                x = convert(x, d), lo = convert(lo, d), hi = convert(hi, d);
                return bc.make(bc.builtin_node(ir::BuiltinOp::Clamp, t2.type(), {x.node, lo.node, hi.node}), x,
                               x.weak && lo.weak && hi.weak);
            });
    }
    return std::nullopt;
}

/** Reductions, softmax/log_softmax, cumsum and discounted_cumsum; nullopt: not one of them. */
std::optional<Val> Sema::lower_reduction_builtin(const BuiltinCall &bc) {
    const std::string &name = bc.name;
    const Loc loc = bc.loc;
    const size_t npos = bc.npos;
    const ast::Expr &call = bc.call;
    Scope &scope = bc.scope;
    // ---- reductions
    if ((name == "max" || name == "min") && npos == 2) {
        if (!bc.keywords({})) return Val{};
        return binary_op(name == "max" ? ir::BinaryOp::Max : ir::BinaryOp::Min, bc.value(0), bc.value(1), loc, scope,
                         name.c_str());
    }
    static const std::map<std::string, ir::BuiltinOp> reductions = {
        {"sum", ir::BuiltinOp::Sum},       {"mean", ir::BuiltinOp::Mean},     {"max", ir::BuiltinOp::ReduceMax},
        {"min", ir::BuiltinOp::ReduceMin}, {"argmax", ir::BuiltinOp::Argmax}, {"logsumexp", ir::BuiltinOp::Logsumexp}};
    if (reductions.count(name)) {
        if (!bc.arity(1, (name == "max" || name == "min") ? 2 : 1) || !bc.keywords({"axis"})) return Val{};
        Val x = bc.value(0);
        if (x.ok() && x.type().is_tuple && name == "sum") return sum_leaves(x, call, scope);
        if (!bc.numeric(x, bc.pos(0).loc)) return Val{};
        std::vector<int64_t> axes;
        if (!bc.axes_of(bc.kw("axis"), x.type().shape.size(), &axes)) return Val{};
        ir::BuiltinOp op = reductions.at(name);
        ir::DType in = x.type().dtype;
        if (op == ir::BuiltinOp::Mean || op == ir::BuiltinOp::Logsumexp) in = float_of(in);
        if (op == ir::BuiltinOp::Sum && in == ir::DType::Bool) in = ir::DType::I32;
        x = convert(x, in);
        ir::Type t = x.type();
        t.shape.clear();
        if (bc.kw("axis"))
            for (size_t k = 0; k < x.type().shape.size(); ++k)
                if (!std::binary_search(axes.begin(), axes.end(), static_cast<int64_t>(k)))
                    t.shape.push_back(x.type().shape[k]);
        if (op == ir::BuiltinOp::Argmax) t.dtype = ir::DType::I32;
        ir::Node n = bc.builtin_node(op, t, {x.node});
        n.axes = axes;
        n.has_axes = bc.kw("axis") != nullptr;
        return bc.make(std::move(n), x, x.weak && op != ir::BuiltinOp::Argmax);
    }
    if (name == "softmax" || name == "log_softmax" || name == "cumsum") {
        if (!bc.arity(1, 1) || !bc.keywords({"axis"})) return Val{};
        Val x = bc.value(0);
        if (!bc.numeric(x, bc.pos(0).loc)) return Val{};
        if (x.type().shape.empty()) {
            error(bc.pos(0).loc, name + " needs an array, got " + type_str(x.type(), scope));
            return Val{};
        }
        std::vector<int64_t> axes;
        if (!bc.axes_of(bc.kw("axis"), x.type().shape.size(), &axes)) return Val{};
        if (axes.size() > 1) {
            error(bc.kw("axis")->loc, name + " takes one axis");
            return Val{};
        }
        if (axes.empty()) axes = {name == "cumsum" ? 0 : static_cast<int64_t>(x.type().shape.size()) - 1};
        ir::DType d = x.type().dtype;
        d = name == "cumsum" ? (d == ir::DType::Bool ? ir::DType::I32 : d) : float_of(d);
        x = convert(x, d);
        ir::Node n = bc.builtin_node(name == "softmax"       ? ir::BuiltinOp::Softmax
                                     : name == "log_softmax" ? ir::BuiltinOp::LogSoftmax
                                                             : ir::BuiltinOp::Cumsum,
                                     x.type(), {x.node});
        n.axes = axes;
        n.has_axes = true;
        return bc.make(std::move(n), x, x.weak);
    }
    if (name == "discounted_cumsum") {
        if (!bc.arity(2, 2) || !bc.keywords({"axis"})) return Val{};
        Val x = bc.value(0), g = bc.value(1);
        if (!bc.numeric(x, bc.pos(0).loc) || !bc.numeric(g, bc.pos(1).loc)) return Val{};
        if (x.type().shape.empty()) {
            error(bc.pos(0).loc, name + " needs an array, got " + type_str(x.type(), scope));
            return Val{};
        }
        {  // gamma: a scalar, or an array that broadcasts to x's shape (gamma[k] scales y[k+1])
            bool ok = true;
            ir::Type j = join_shapes(x.type(), g.type(), &ok);
            if (!ok || j.shape.size() != x.type().shape.size() ||
                !type_equal(with_dtype(j, ir::DType::F32), with_dtype(x.type(), ir::DType::F32))) {
                error(bc.pos(1).loc, "the discount of discounted_cumsum must be a scalar or broadcast "
                                     "to " +
                                         type_str(x.type(), scope) + ", got " + type_str(g.type(), scope));
                return Val{};
            }
        }
        std::vector<int64_t> axes;
        if (!bc.axes_of(bc.kw("axis"), x.type().shape.size(), &axes)) return Val{};
        if (axes.empty()) axes = {0};
        ir::DType d = float_of(x.type().dtype);
        if (!x.weak && g.type().dtype == ir::DType::F64 && !g.weak) d = ir::DType::F64;
        x = convert(x, d);
        g = convert(g, d);
        ir::Node n = bc.builtin_node(ir::BuiltinOp::DiscountedCumsum, x.type(), {x.node, g.node});
        n.axes = axes;
        n.has_axes = true;
        return bc.make(std::move(n), x, x.weak && g.weak);
    }
    return std::nullopt;
}

}  // namespace trlc::sema
