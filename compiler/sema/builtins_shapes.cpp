// builtins_shapes — the builtins that move data between shapes (dsl/README.md §5), lowered from
// one call (sema/builtin_call.h) with their typing rules: matmul, transpose, reshape, concat and
// stack, one_hot, gather.  Shapes may be dynamic (an extent affine in the equation's variables)
// where the rule allows.  The dispatch is in builtins.cpp.
#include <algorithm>
#include <functional>
#include <map>

#include "ir/ops.h"
#include "sema/builtin_call.h"

namespace trlc::sema {

/** matmul, transpose, reshape, concat/stack, one_hot, gather; nullopt: not one of them. */
std::optional<Val> Sema::lower_shape_builtin(const BuiltinCall &bc) {
    const std::string &name = bc.name;
    const Loc loc = bc.loc;
    const size_t npos = bc.npos;
    Scope &scope = bc.scope;
    if (name == "matmul") {
        if (!bc.arity(2, 2) || !bc.keywords({})) return Val{};
        return matmul(bc.value(0), bc.value(1), loc, scope);
    }
    if (name == "transpose") {
        if (!bc.arity(1, 2) || !bc.keywords({"axes"})) return Val{};
        Val x = bc.value(0);
        if (!bc.numeric(x, bc.pos(0).loc)) return Val{};
        size_t r = x.type().shape.size();
        std::vector<int64_t> perm;
        const ast::Expr *px = npos == 2 ? &bc.pos(1) : (bc.kw("axes") ? bc.kw("axes")->value.get() : nullptr);
        if (px) {
            std::vector<const ast::Expr *> items;
            if (px->kind == ast::ExprKind::ArrayLit || px->kind == ast::ExprKind::Tuple)
                for (const ast::ExprPtr &a : px->args) items.push_back(a.get());
            for (const ast::Expr *a : items) {
                Val v = lower(*a, scope);
                if (!v.ok()) return Val{};
                if (!v.idx || !v.idx->aff.is_constant() || v.idx->kind != ir::IndexExpr::Aff) {
                    error(a->loc, "axes must be integer constants");
                    return Val{};
                }
                int64_t ax = v.idx->aff.constant;
                perm.push_back(ax < 0 ? ax + static_cast<int64_t>(r) : ax);
            }
            std::vector<int64_t> sorted = perm;
            std::sort(sorted.begin(), sorted.end());
            bool ok = sorted.size() == r;
            for (size_t k = 0; ok && k < r; ++k) ok = sorted[k] == static_cast<int64_t>(k);
            if (!ok) {
                error(px->loc, "axes " + text(px->loc) + " are not a permutation of the " + std::to_string(r) +
                                   " axes of " + type_str(x.type(), scope));
                return Val{};
            }
        } else {
            for (size_t k = 0; k < r; ++k) perm.push_back(static_cast<int64_t>(r - 1 - k));
        }
        ir::Type t = x.type();
        for (size_t k = 0; k < r; ++k) t.shape[k] = x.type().shape[perm[k]];
        ir::Node n = bc.builtin_node(ir::BuiltinOp::Transpose, t, {x.node});
        n.axes = perm;
        n.has_axes = true;
        return bc.make(std::move(n), x, x.weak);
    }
    if (name == "reshape") {
        if (!bc.arity(2, 2) || !bc.keywords({})) return Val{};
        Val x = bc.value(0);
        if (!bc.numeric(x, bc.pos(0).loc)) return Val{};
        for (const ir::Extent &e : x.type().shape)
            if (!e.is_static()) {
                error(bc.pos(0).loc, "cannot reshape " + type_str(x.type(), scope) + ": its shape is dynamic");
                return Val{};
            }
        auto shape = shape_arg(bc.pos(1), scope);
        if (!shape) return Val{};
        int64_t have = 1, want = 1;
        for (const ir::Extent &e : x.type().shape) have *= e.max_value;
        for (const ir::Extent &e : *shape) {
            if (!e.is_static()) {
                error(bc.pos(1).loc, "the shape of reshape must be static");
                return Val{};
            }
            want *= e.max_value;
        }
        ir::Type t = x.type();
        t.shape = *shape;
        if (have != want) {
            error(loc, "cannot reshape " + type_str(x.type(), scope) + " (" + std::to_string(have) + " elements) to " +
                           type_str(t, scope) + " (" + std::to_string(want) + " elements)");
            return Val{};
        }
        return bc.make(bc.builtin_node(ir::BuiltinOp::Reshape, t, {x.node}), x, x.weak);
    }
    if (name == "concat" || name == "stack") {
        if (!bc.arity(1, 1000) || !bc.keywords({"axis"})) return Val{};
        std::vector<Val> xs;
        for (size_t k = 0; k < npos; ++k) {
            Val v = bc.value(k);
            if (!v.ok()) return Val{};
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
            if (!bc.numeric(xs[k], loc)) return Val{};
        // Common dtype, as a chain of binary operators would give.
        Val acc = xs[0];
        bool weak = xs[0].weak;
        ir::DType d = xs[0].type().dtype;
        for (size_t k = 1; k < xs.size(); ++k) {
            ir::DType vd = xs[k].type().dtype;
            if (weak && xs[k].weak)
                d = promote(d, vd);
            else if (weak)
                d = dtype_kind(vd) >= dtype_kind(d) ? vd : float_of(d);
            else if (!xs[k].weak)
                d = promote(d, vd);
            weak = weak && xs[k].weak;
        }
        size_t r = xs[0].type().shape.size();
        size_t out_rank = name == "stack" ? r + 1 : r;
        if (name == "concat" && r == 0) {
            error(loc, "concat needs arrays, got " + type_str(xs[0].type(), scope));
            return Val{};
        }
        std::vector<int64_t> axes;
        if (!bc.axes_of(bc.kw("axis"), out_rank, &axes)) return Val{};
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
                error(loc, "shapes " + type_str(xs[0].type(), scope) + " and " + type_str(tk, scope) + " cannot be " +
                               (name == "stack" ? "stacked" : "concatenated"));
                return Val{};
            }
            if (name == "concat") {
                dyn = dyn || !tk.shape[axis].is_static();
                total += tk.shape[axis].max_value;
            }
            args.push_back(convert(xs[k], d).node);
        }
        if (dyn) {
            error(loc, "concat of arrays with dynamic extents along the axis is not supported");
            return Val{};
        }
        if (name == "concat")
            t.shape[axis] = ir::Extent{total, nullptr};
        else
            t.shape.insert(t.shape.begin() + axis, ir::Extent{static_cast<int64_t>(xs.size()), nullptr});
        ir::Node n = bc.builtin_node(name == "concat" ? ir::BuiltinOp::Concat : ir::BuiltinOp::Stack, t, args);
        n.axes = {axis};
        n.has_axes = true;
        return bc.make(std::move(n), acc, weak);
    }
    if (name == "one_hot") {
        if (!bc.arity(2, 2) || !bc.keywords({"dtype"})) return Val{};
        Val i = bc.value(0), depth = bc.value(1);
        if (!i.ok() || !depth.ok()) return Val{};
        if (i.type().is_tuple || i.type().dtype != ir::DType::I32) {
            error(bc.pos(0).loc, "one_hot needs i32 indices, got " + type_str(i.type(), scope));
            return Val{};
        }
        if (!depth.idx || depth.idx->kind != ir::IndexExpr::Aff || !depth.idx->aff.is_constant() ||
            depth.idx->aff.constant < 1) {
            error(bc.pos(1).loc, "the depth of one_hot must be a positive integer constant");
            return Val{};
        }
        ir::DType d;
        if (!bc.dtype_kw(ir::DType::F32, &d)) return Val{};
        ir::Type t = i.type();
        t.dtype = d;
        t.shape.push_back(ir::Extent{depth.idx->aff.constant, nullptr});
        ir::Node n = bc.builtin_node(ir::BuiltinOp::OneHot, t, {convert(i, ir::DType::I32).node});
        n.int_attr = depth.idx->aff.constant;
        return bc.make(std::move(n), i, false);
    }
    if (name == "gather") {
        if (!bc.arity(2, 2) || !bc.keywords({"axis"})) return Val{};
        Val x = bc.value(0), i = bc.value(1);
        if (!bc.numeric(x, bc.pos(0).loc) || !i.ok()) return Val{};
        if (i.type().is_tuple || i.type().dtype != ir::DType::I32) {
            error(bc.pos(1).loc, "gather needs i32 indices, got " + type_str(i.type(), scope));
            return Val{};
        }
        if (x.type().shape.empty()) {
            error(bc.pos(0).loc, "gather needs an array, got " + type_str(x.type(), scope));
            return Val{};
        }
        std::vector<int64_t> axes;
        if (!bc.axes_of(bc.kw("axis"), x.type().shape.size(), &axes)) return Val{};
        int64_t axis = axes.empty() ? 0 : axes[0];
        ir::Type t = x.type();
        t.shape.clear();
        for (int64_t k = 0; k < axis; ++k) t.shape.push_back(x.type().shape[k]);
        for (const ir::Extent &e : i.type().shape) t.shape.push_back(e);
        for (size_t k = axis + 1; k < x.type().shape.size(); ++k) t.shape.push_back(x.type().shape[k]);
        ir::Node n = bc.builtin_node(ir::BuiltinOp::Gather, t, {x.node, convert(i, ir::DType::I32).node});
        n.axes = {axis};
        n.has_axes = true;
        return bc.make(std::move(n), x, x.weak);
    }
    return std::nullopt;
}

}  // namespace trlc::sema
