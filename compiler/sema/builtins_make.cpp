// builtins_make — the builtins that make values rather than transform their arguments'
// elements (dsl/README.md §5 and §9.3), lowered from one call (sema/builtin_call.h):
// constructors (arange, zeros, ones, full), randomness (rng, fold_in, uniform, normal, their
// _like forms, categorical), pytree helpers and shapes (zeros_like, ones_like, shape) and the
// std library's initializers (orthogonal, permutation: runtime/trl_linalg.h).  The dispatch is
// in builtins.cpp.
#include <algorithm>
#include <functional>
#include <map>

#include "ir/ops.h"
#include "sema/builtin_call.h"

namespace trlc::sema {

/** arange, zeros/ones, full; nullopt: not one of them. */
std::optional<Val> Sema::lower_constructor_builtin(const BuiltinCall &bc) {
    const std::string &name = bc.name;
    Scope &scope = bc.scope;
    // ---- constructors
    if (name == "arange") {
        if (!bc.arity(1, 1) || !bc.keywords({"dtype"})) return Val{};
        auto shape = shape_arg(bc.pos(0), scope);
        if (!shape) return Val{};
        if (shape->size() != 1) {
            error(bc.pos(0).loc, "arange takes one length");
            return Val{};
        }
        ir::DType d;
        if (!bc.dtype_kw(ir::DType::I32, &d)) return Val{};
        ir::Type t = scalar(d);
        t.shape = *shape;
        return bc.make(bc.builtin_node(ir::BuiltinOp::Arange, t, {}), Val{}, false);
    }
    if (name == "zeros" || name == "ones") {
        if (!bc.arity(1, 1) || !bc.keywords({"dtype"})) return Val{};
        auto shape = shape_arg(bc.pos(0), scope);
        if (!shape) return Val{};
        ir::DType d;
        if (!bc.dtype_kw(ir::DType::F32, &d)) return Val{};
        ir::Type t = scalar(d);
        t.shape = *shape;
        return bc.make(bc.builtin_node(name == "zeros" ? ir::BuiltinOp::Zeros : ir::BuiltinOp::Ones, t, {}), Val{},
                       false);
    }
    if (name == "full") {
        if (!bc.arity(2, 2) || !bc.keywords({"dtype"})) return Val{};
        auto shape = shape_arg(bc.pos(0), scope);
        if (!shape) return Val{};
        Val v = bc.value(1);
        if (!bc.numeric(v, bc.pos(1).loc)) return Val{};
        if (!v.type().shape.empty()) {
            error(bc.pos(1).loc, "the fill value of full must be a scalar, got " + type_str(v.type(), scope));
            return Val{};
        }
        ir::DType d = v.type().dtype;
        bool weak = v.weak && !bc.kw("dtype");
        if (!bc.dtype_kw(d, &d)) return Val{};
        v = convert(v, d);
        ir::Type t = scalar(d);
        t.shape = *shape;
        return bc.make(bc.builtin_node(ir::BuiltinOp::Full, t, {v.node}), v, weak);
    }
    return std::nullopt;
}

/** rng, fold_in, uniform/normal (and _like), categorical; nullopt: not one of them. */
std::optional<Val> Sema::lower_random_builtin(const BuiltinCall &bc) {
    const std::string &name = bc.name;
    const size_t npos = bc.npos;
    Scope &scope = bc.scope;
    if (name == "rng") {
        if (!bc.keywords({})) return Val{};
        ir::Node n;
        n.kind = ir::NodeKind::Rng;
        n.type = scalar(ir::DType::Key);
        for (size_t k = 0; k < npos; ++k) {
            Val v = bc.value(k);
            if (!v.ok()) return Val{};
            if (v.type().is_tuple || !v.type().shape.empty() || v.type().dtype != ir::DType::I32) {
                error(bc.pos(k).loc, "rng arguments must be i32 scalars, got " + type_str(v.type(), scope));
                return Val{};
            }
            n.args.push_back(v.node);
        }
        return bc.make(std::move(n), Val{}, false);
    }
    if (name == "fold_in") {
        if (!bc.arity(2, 2) || !bc.keywords({})) return Val{};
        Val k = bc.value(0), i = bc.value(1);
        if (!bc.key_arg(k, bc.pos(0).loc) || !i.ok()) return Val{};
        if (i.type().is_tuple || !i.type().shape.empty() || i.type().dtype != ir::DType::I32) {
            error(bc.pos(1).loc, "fold_in needs an i32 scalar, got " + type_str(i.type(), scope));
            return Val{};
        }
        return bc.make(bc.builtin_node(ir::BuiltinOp::FoldIn, scalar(ir::DType::Key), {k.node, i.node}), k, false);
    }
    if (name == "uniform_like" || name == "normal_like") {  // draws of x's shape and float dtype
        if (!bc.arity(2, 2) || !bc.keywords({})) return Val{};
        Val k = bc.value(0), x = bc.value(1);
        if (!bc.key_arg(k, bc.pos(0).loc) || !bc.numeric(x, bc.pos(1).loc)) return Val{};
        ir::Type t = x.type();
        t.dtype = float_of(t.dtype);
        ir::BuiltinOp op = name == "uniform_like" ? ir::BuiltinOp::Uniform : ir::BuiltinOp::Normal;
        return bc.make(bc.builtin_node(op, t, {k.node}), k, false);
    }
    if (name == "uniform" || name == "normal") {
        if (!bc.arity(1, 2) || !bc.keywords({"dtype"})) return Val{};
        Val k = bc.value(0);
        if (!bc.key_arg(k, bc.pos(0).loc)) return Val{};
        std::vector<ir::Extent> shape;
        if (npos == 2) {
            auto s = shape_arg(bc.pos(1), scope);
            if (!s) return Val{};
            shape = *s;
        }
        ir::DType d;
        if (!bc.dtype_kw(ir::DType::F32, &d)) return Val{};
        if (!is_float(d)) {
            error(bc.kw("dtype")->value->loc, name + " gives f32 or f64");
            return Val{};
        }
        ir::Type t = scalar(d);
        t.shape = shape;
        return bc.make(bc.builtin_node(name == "uniform" ? ir::BuiltinOp::Uniform : ir::BuiltinOp::Normal, t, {k.node}),
                       k, false);
    }
    if (name == "categorical") {
        if (!bc.arity(2, 2) || !bc.keywords({})) return Val{};
        Val k = bc.value(0), l = bc.value(1);
        if (!bc.key_arg(k, bc.pos(0).loc) || !bc.numeric(l, bc.pos(1).loc)) return Val{};
        if (l.type().shape.empty()) {
            error(bc.pos(1).loc, "categorical needs logits with at least one axis, got " + type_str(l.type(), scope));
            return Val{};
        }
        l = convert(l, float_of(l.type().dtype));
        ir::Type t = l.type();
        t.dtype = ir::DType::I32;
        t.shape.pop_back();
        return bc.make(bc.builtin_node(ir::BuiltinOp::Categorical, t, {k.node, l.node}), k, false);
    }
    return std::nullopt;
}

/** zeros_like/ones_like, shape, orthogonal, permutation; nullopt: not one of them. */
std::optional<Val> Sema::lower_pytree_builtin(const BuiltinCall &bc) {
    const std::string &name = bc.name;
    const Loc loc = bc.loc;
    Scope &scope = bc.scope;
    // ---- pytree helpers and shapes
    if (name == "zeros_like" || name == "ones_like") {
        if (!bc.arity(1, 1) || !bc.keywords({})) return Val{};
        return map_leaves({bc.value(0)}, loc, scope, name, [&](const std::vector<Val> &x) -> Val {
            if (!bc.numeric(x[0], bc.pos(0).loc)) return Val{};
            ir::BuiltinOp op = name == "zeros_like" ? ir::BuiltinOp::Zeros : ir::BuiltinOp::Ones;
            return bc.make(bc.builtin_node(op, x[0].type(), {}), Val{}, false);
        });
    }
    if (name == "shape") {
        if (!bc.arity(1, 1) || !bc.keywords({})) return Val{};
        Val x = bc.value(0);
        if (!bc.numeric(x, bc.pos(0).loc)) return Val{};
        ir::Node c;
        c.kind = ir::NodeKind::Const;
        c.type = scalar(ir::DType::I32);
        c.type.shape.push_back(ir::Extent{static_cast<int64_t>(x.type().shape.size()), nullptr});
        for (const ir::Extent &e : x.type().shape) {
            if (!e.is_static()) {
                error(bc.pos(0).loc,
                      "shape of " + type_str(x.type(), scope) + " is not a constant: it has a dynamic extent");
                return Val{};
            }
            c.data.push_back(static_cast<double>(e.max_value));
        }
        return bc.make(std::move(c), Val{}, false);
    }
    // ---- initializers and permutations (runtime/trl_linalg.h)
    if (name == "orthogonal") {
        if (!bc.arity(2, 2) || !bc.keywords({"gain", "dtype"})) return Val{};
        Val k = bc.value(0);
        if (!bc.key_arg(k, bc.pos(0).loc)) return Val{};
        auto shape = shape_arg(bc.pos(1), scope);
        if (!shape) return Val{};
        if (shape->size() != 2 || !(*shape)[0].is_static() || !(*shape)[1].is_static() || (*shape)[0].max_value < 1 ||
            (*shape)[1].max_value < 1) {
            error(bc.pos(1).loc, "orthogonal needs a static matrix shape [rows, cols] with rows, cols "
                                 ">= 1, got '" +
                                     text(bc.pos(1).loc) + "'");
            return Val{};
        }
        ir::DType d;
        if (!bc.dtype_kw(ir::DType::F32, &d)) return Val{};
        if (!is_float(d)) {
            error(bc.kw("dtype")->value->loc, "orthogonal gives f32 or f64");
            return Val{};
        }
        Val gain = const_val(1.0, ir::DType::F64, false, loc);
        if (const ast::KeywordArg *gk = bc.kw("gain")) {
            gain = lower(*gk->value, scope);
            if (!gain.ok()) return Val{};
            if (gain.type().is_tuple || !gain.type().shape.empty() || dtype_kind(gain.type().dtype) == 3) {
                error(gk->value->loc, "the gain of orthogonal must be a number, got " + type_str(gain.type(), scope));
                return Val{};
            }
            gain = convert(gain, ir::DType::F64);
        }
        ir::Type t = scalar(d);
        t.shape = *shape;
        return bc.make(bc.builtin_node(ir::BuiltinOp::Orthogonal, t, {k.node, gain.node}), k, false);
    }
    if (name == "permutation") {
        if (!bc.arity(2, 2) || !bc.keywords({})) return Val{};
        Val k = bc.value(0), n = bc.value(1);
        if (!bc.key_arg(k, bc.pos(0).loc) || !n.ok()) return Val{};
        if (!n.idx || n.idx->kind != ir::IndexExpr::Aff || !n.idx->aff.is_constant() || n.idx->aff.constant < 1) {
            error(bc.pos(1).loc, "the length of permutation must be a positive integer constant, "
                                 "got '" +
                                     text(bc.pos(1).loc) + "'");
            return Val{};
        }
        ir::Type t = scalar(ir::DType::I32);
        t.shape.push_back(ir::Extent{n.idx->aff.constant, nullptr});
        return bc.make(bc.builtin_node(ir::BuiltinOp::Permutation, t, {k.node}), k, false);
    }
    return std::nullopt;
}

}  // namespace trlc::sema
