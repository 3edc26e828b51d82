// expr_shape — ExprEmitter's shape operations (codegen/expr_emitter.h): transpose, reshape,
// cumsum, discounted_cumsum, and stack / concat.
#include "codegen/expr_emitter.h"

namespace trlc::codegen {

Val ExprEmitter::emit_transpose(const ir::Node &n) {
    Val x = emit(*n.args.at(0));
    if (x.tuple) unsupported(n.loc, "transpose of a tuple");
    int64_t rank = static_cast<int64_t>(x.dims.size());
    if (rank == 0) return x;
    std::vector<int64_t> axes;
    if (!n.has_axes || n.axes.empty()) {
        for (int64_t d = rank - 1; d >= 0; --d) axes.push_back(d);
    } else {
        if (static_cast<int64_t>(n.axes.size()) != rank) unsupported(n.loc, "these transpose axes");
        for (int64_t a : n.axes) axes.push_back(norm_axis(a, rank, n.loc));
    }
    std::vector<int64_t> maxs;
    std::vector<std::string> dims;
    for (int64_t d = 0; d < rank; ++d) {
        maxs.push_back(x.maxs[axes[d]]);
        dims.push_back(x.dims[axes[d]]);
    }
    Val r = declare(x.dt, maxs, dims);
    // One loop per dim (for_nd): the source index is a sum of iterators times strides, with
    // no division or remainder per element (a flat loop with coordinates recovered by / and %
    // was 5 % of the DQN sample's training time in the backward pass's W^T).
    auto xst = strides_c(x.dims);
    for_nd(r, [&](const Ix &ix) {
        std::string src;
        for (int64_t d = 0; d < rank; ++d) src += (src.empty() ? "" : " + ") + mul_c(ix.c[d], xst[axes[d]]);
        line(r.at(ix.flat) + " = " + x.at(src) + ";");
    });
    return r;
}

Val ExprEmitter::emit_reshape(const ir::Node &n) {
    Val x = emit(*n.args.at(0));
    if (x.tuple) unsupported(n.loc, "reshape of a tuple");
    Val r = x;
    r.maxs = maxs_of(n.type);
    r.dims = dims_of(n.type);
    if (r.scalar() == x.scalar() && r.max_numel() <= std::max<int64_t>(1, x.max_numel())) return r;
    Val c = declare(x.dt, r.maxs, r.dims);
    if (c.max_numel() < x.max_numel() && !c.scalar()) unsupported(n.loc, "this reshape");
    std::string i = fresh("i");
    line("for (long long " + i + " = 0; " + i + " < " + x.numel() + "; ++" + i + ") " +
         (c.scalar() ? c.name : c.name + "[" + i + "]") + " = " + x.at(i) + ";");
    return c;
}

Val ExprEmitter::emit_cumsum(const ir::Node &n) {
    Val x0 = emit(*n.args.at(0));
    if (x0.tuple || x0.dt == DType::Key) unsupported(n.loc, "cumsum of this value");
    DType result = n.type.dtype, dt = result == DType::Bool ? DType::I32 : result;
    Val x = emit_cast(x0, dt, n.loc);
    bool has_axis = n.has_axes && !n.axes.empty();
    if (!has_axis && !x.scalar()) {
        x.dims = {x.numel()};
        x.maxs = {x.max_numel()};
    }
    if (x.scalar()) return emit_cast(x, result);
    int64_t axis = norm_axis(has_axis ? n.axes[0] : 0, static_cast<int64_t>(x.dims.size()), n.loc);
    Val r = declare(dt, x.maxs, x.dims);
    std::string N = x.dims[axis], inner = prod_c(x.dims, axis + 1, x.dims.size());
    std::string o = fresh("o"), in = fresh("in"), k = fresh("k");
    open("for (long long " + o + " = 0; " + o + " < " + prod_c(x.dims, 0, axis) + "; ++" + o + ")");
    open("for (long long " + in + " = 0; " + in + " < " + inner + "; ++" + in + ")");
    line(std::string(ctype(dt)) + " acc = " + literal(dt, 0) + ";");
    open("for (long long " + k + " = 0; " + k + " < " + N + "; ++" + k + ")");
    line("const long long at = (" + o + " * " + N + " + " + k + ") * " + inner + " + " + in + ";");
    line(dt == DType::I32 ? "acc = trlg_chk_i32((long long)acc + " + x.name + "[at], TRLG_OP_SUM, " + site(n.loc) + ");"
                          : "acc = acc + " + x.name + "[at];");
    line(r.name + "[at] = acc;");
    close();
    close();
    close();
    return emit_cast(r, result);
}

Val ExprEmitter::emit_discounted_cumsum(const ir::Node &n) {
    Val x0 = emit(*n.args.at(0)), g0 = emit(*n.args.at(1));
    if (x0.tuple || g0.tuple || x0.dt == DType::Key || g0.dt == DType::Key || x0.scalar())
        unsupported(n.loc, "discounted_cumsum of these values");
    DType result = n.type.dtype;
    DType dt = result == DType::F32 || result == DType::F64 ? result : DType::F32;
    Val x = emit_cast(x0, dt), g = emit_cast(g0, dt);
    int64_t axis = norm_axis(n.has_axes && !n.axes.empty() ? n.axes[0] : 0, static_cast<int64_t>(x.dims.size()), n.loc);
    Val r = declare(dt, x.maxs, x.dims);
    std::string N = x.dims[axis], inner = prod_c(x.dims, axis + 1, x.dims.size());
    std::string o = fresh("o"), in = fresh("in"), k = fresh("k"), ct = ctype(dt);
    open("for (long long " + o + " = 0; " + o + " < " + prod_c(x.dims, 0, axis) + "; ++" + o + ")");
    open("for (long long " + in + " = 0; " + in + " < " + inner + "; ++" + in + ")");
    line(ct + " next = " + literal(dt, 0) + ";");
    open("for (long long " + k + " = " + N + " - 1; " + k + " >= 0; --" + k + ")");
    line("const long long at = (" + o + " * " + N + " + " + k + ") * " + inner + " + " + in + ";");
    std::string gk =
        g.static_one() || g.scalar() ? (g.scalar() ? g.name : g.name + "[0]") : operand_at(g, x, "at", n.loc);
    line(ct + " y = " + k + " == " + N + " - 1 ? " + x.name + "[at] : " + x.name + "[at] + " + gk + " * next;");
    line(r.name + "[at] = y;");
    line("next = y;");
    close();
    close();
    close();
    return emit_cast(r, result);
}

Val ExprEmitter::emit_concat(const ir::Node &n) {
    bool stack = n.builtin == BuiltinOp::Stack;
    DType dt = n.type.dtype;
    std::vector<Val> xs;
    for (const auto &a : n.args) xs.push_back(emit(*a));
    if (xs.empty()) unsupported(n.loc, stack ? "stack of no arrays" : "concat of no arrays");
    for (const auto &x : xs)
        if (x.tuple || (x.dt == DType::Key) != (dt == DType::Key))
            unsupported(n.loc, stack ? "stack of these values" : "concat of these values");
    int64_t rank = static_cast<int64_t>(xs[0].dims.size()) + (stack ? 1 : 0);
    if (rank == 0) unsupported(n.loc, "concat of scalars");
    int64_t axis = norm_axis(n.has_axes && !n.axes.empty() ? n.axes[0] : 0, rank, n.loc);
    Val r = declare(dt, maxs_of(n.type), dims_of(n.type));
    std::string pos = fresh("pos"), o = fresh("o"), c = fresh("c");
    line("long long " + pos + " = 0;");
    open("for (long long " + o + " = 0; " + o + " < " + prod_c(xs[0].dims, 0, axis) + "; ++" + o + ")");
    for (const auto &x : xs) {
        std::string chunk = prod_c(x.dims, axis, x.dims.size());
        line("for (long long " + c + " = 0; " + c + " < " + chunk + "; ++" + c + ") " + r.name + "[" + pos +
             "++] = " + conv(x.scalar() ? x.name : x.name + "[" + mul_c(o, chunk) + " + " + c + "]", x.dt, dt) + ";");
    }
    close();
    return r;
}

}  // namespace trlc::codegen
