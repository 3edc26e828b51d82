// expr_reduce — ExprEmitter's reductions (codegen/expr_emitter.h): sum, mean, max, min, argmax
// and logsumexp over all axes or some, softmax / log_softmax (unrolled along a short static
// axis), and categorical sampling over the last axis.
#include "codegen/expr_emitter.h"

namespace trlc::codegen {

int64_t ExprEmitter::norm_axis(int64_t axis, int64_t rank, const Loc &loc) {
    if (axis < -rank || axis >= rank) unsupported(loc, "this axis");
    return axis < 0 ? axis + rank : axis;
}

Val ExprEmitter::emit_reduce(const ir::Node &n, const Val &x1) {
    if (x1.tuple || x1.dt == DType::Key) unsupported(n.loc, "reducing this value");
    BuiltinOp op = n.builtin;
    // A lazy producer (an elementwise chain used only here) is fused into a sum or mean
    // over all axes: each element is computed as it is added, in flat order (the same
    // sequence of additions).  Other reductions read their operand more than once.
    bool whole_sum = (op == BuiltinOp::Sum || op == BuiltinOp::Mean) && (!n.has_axes || n.axes.empty()) &&
                     (n.type.dtype == DType::F32 || n.type.dtype == DType::F64);
    const Val x0 = x1.lazy && !whole_sum ? materialize(x1) : x1;
    int64_t rank = static_cast<int64_t>(x0.dims.size());
    bool all = !n.has_axes || n.axes.empty();
    std::vector<bool> red(rank, all);
    if (!all) {
        if (op == BuiltinOp::Argmax && n.axes.size() != 1) unsupported(n.loc, "argmax over several axes");
        for (int64_t a : n.axes) {
            int64_t ax = norm_axis(a, rank, n.loc);
            if (red[ax]) unsupported(n.loc, "a reduction with a repeated axis");
            red[ax] = true;
        }
    }
    DType result = n.type.dtype;
    DType dt = result;
    if (op == BuiltinOp::ReduceMax || op == BuiltinOp::ReduceMin || op == BuiltinOp::Argmax)
        dt = x0.dt == DType::Bool ? DType::I32 : x0.dt;
    if (dt == DType::Bool) dt = DType::I32;
    if (op == BuiltinOp::Logsumexp && dt != DType::F32 && dt != DType::F64)
        unsupported(n.loc, "logsumexp in " + std::string(ir::dtype_name(dt)));
    if (op == BuiltinOp::Mean && dt != DType::F32 && dt != DType::F64) unsupported(n.loc, "mean in i32");
    std::vector<int64_t> omaxs;
    std::vector<std::string> odims, rdims;
    for (int64_t d = 0; d < rank; ++d) {
        if (red[d]) {
            rdims.push_back(x0.dims[d]);
        } else {
            omaxs.push_back(x0.maxs[d]);
            odims.push_back(x0.dims[d]);
        }
    }
    Val r = declare(result, omaxs, odims);
    bool whole = odims.empty();  // one group: the members are x's elements in order
    std::string cnt = whole ? x0.numel() : prod_c(rdims);
    auto xst = strides_c(x0.dims), ost = strides_c(odims), rst = strides_c(rdims);
    std::string o = fresh("o"), base = fresh("base");
    // A split value of a row-split kernel (codegen/row_split.h: a float sum or mean that keeps
    // a leading axis): this thread's rows of the result, each reading its group whole.
    r.split = cur_split_ && !whole && (op == BuiltinOp::Sum || op == BuiltinOp::Mean) && dt == result &&
              (dt == DType::F32 || dt == DType::F64);
    if (r.split) {
        std::string row = prod_c(odims, 1, odims.size());
        open("for (long long " + o + " = " + mul_c("trl_r0", row) + "; " + o + " < " + mul_c("trl_r1", row) + "; ++" +
             o + ")");
    } else if (!whole) {
        open("for (long long " + o + " = 0; " + o + " < " + r.numel() + "; ++" + o + ")");
    } else {
        open("");
    }
    if (!whole) {
        std::string b;
        for (int64_t d = 0, k = 0; d < rank; ++d) {
            if (red[d]) continue;
            std::string t = mul_c(coord_c(o, odims, ost, k++), xst[d]);
            b = b.empty() ? t : b + " + " + t;
        }
        line("const long long " + base + " = " + (b.empty() ? "0" : b) + ";");
    }
    // Element "m" (C expression) of the current group.
    auto member = [&](const std::string &m) {
        if (whole) return x0.at(m);
        std::string s = base;
        for (int64_t d = 0, k = 0; d < rank; ++d) {
            if (!red[d]) continue;
            s += " + " + mul_c(coord_c(m, rdims, rst, k++), xst[d]);
        }
        return x0.name + "[" + s + "]";
    };
    std::string ct = ctype(dt), i = fresh("i");
    auto xi = [&](const std::string &k) { return conv(member(k), x0.dt, dt); };
    std::string out = whole ? r.name : r.at(o);
    bool f = dt == DType::F32;
    switch (op) {
    case BuiltinOp::Sum:
    case BuiltinOp::Mean: {
        line(ct + " acc = " + literal(dt, 0) + ";");
        if (x0.lazy) {
            for_nd(x0, [&](const Ix &ix) { line("acc = acc + " + operand_c(conv(x0.lazy(ix), x0.dt, dt)) + ";"); });
            if (op == BuiltinOp::Mean)
                line(std::string("acc = acc / (") + (f ? "float" : "double") + ")(" + cnt + ");");
            line(out + " = " + conv("acc", dt, result) + ";");
            break;
        }
        std::string add = dt == DType::I32
                              ? "acc = trlg_chk_i32((long long)acc + " + xi(i) + ", TRLG_OP_SUM, " + site(n.loc) + ");"
                              : "acc = acc + " + xi(i) + ";";
        line("for (long long " + i + " = 0; " + i + " < " + cnt + "; ++" + i + ") " + add);
        if (op == BuiltinOp::Mean) line(std::string("acc = acc / (") + (f ? "float" : "double") + ")(" + cnt + ");");
        line(out + " = " + conv("acc", dt, result) + ";");
        break;
    }
    case BuiltinOp::ReduceMax:
    case BuiltinOp::ReduceMin:
    case BuiltinOp::Argmax: {
        const char *what = op == BuiltinOp::ReduceMax ? "0" : op == BuiltinOp::ReduceMin ? "1" : "2";
        open("if (" + cnt + " == 0)");
        line(raise("TRLG_E_EMPTY", n.loc, what));
        line(out + " = " + literal(result, 0) + ";");
        close();
        open("else");
        line(ct + " v = " + xi("0") + ";");
        line("long long best = 0;");
        open("for (long long " + i + " = 1; " + i + " < " + cnt + " && v == v; ++" + i + ")");
        line(ct + " y = " + xi(i) + ";");
        line(std::string("if (y != y || y ") + (op == BuiltinOp::ReduceMin ? "<" : ">") + " v) { v = y; best = " + i +
             "; }");
        close();
        if (op == BuiltinOp::Argmax)
            line(out + " = " + conv("best", DType::I32, result) + ";");
        else
            line(out + " = " + conv("v", dt, result) + ";  (void)best;");
        close();
        break;
    }
    case BuiltinOp::Logsumexp: {
        open("if (" + cnt + " == 0)");
        line(out + " = " + conv(f ? "-(float)INFINITY" : "-(double)INFINITY", dt, result) + ";");
        close();
        open("else");
        line(ct + " mx = " + xi("0") + ";");
        open("for (long long " + i + " = 0; " + i + " < " + cnt + "; ++" + i + ")");
        line(ct + " y = " + xi(i) + ";");
        line("if (y != y || y > mx) mx = y;");
        line("if (mx != mx) break;");
        close();
        open("if (mx != mx || isinf(mx))");
        line(out + " = " + conv("mx", dt, result) + ";");
        close();
        open("else");
        line(ct + " s = " + literal(dt, 0) + ";");
        line("for (long long " + i + " = 0; " + i + " < " + cnt + "; ++" + i +
             ") s += " + (f ? "trl::exp_f32(" : "trl::exp_f64(") + xi(i) + " - mx);");
        line(out + " = " + conv(std::string("mx + ") + (f ? "trl::log_f32(s)" : "trl::log_f64(s)"), dt, result) + ";");
        close();
        close();
        break;
    }
    default: unsupported(n.loc, "this reduction");
    }
    close();
    return r;
}

Val ExprEmitter::emit_softmax(const ir::Node &n, const Val &x0) {
    bool log = n.builtin == BuiltinOp::LogSoftmax;
    int64_t rank = static_cast<int64_t>(x0.dims.size());
    if (x0.tuple || x0.dt == DType::Key || rank == 0)
        unsupported(n.loc, std::string(log ? "log_softmax" : "softmax") + " of this value");
    int64_t axis = norm_axis(n.has_axes && !n.axes.empty() ? n.axes[0] : -1, rank, n.loc);
    DType result = n.type.dtype;
    DType dt = result == DType::F32 || result == DType::F64 ? result : DType::F32;
    bool f = dt == DType::F32;
    std::string ct = ctype(dt), ex = f ? "trl::exp_f32(" : "trl::exp_f64(";
    Val x = emit_cast(x0, dt);
    Val r = declare(result, x.maxs, x.dims);
    if (static_dim(x.dims[axis]) && x.maxs[axis] >= 1 && x.maxs[axis] <= 8)
        return emit_short_softmax(x, r, axis, log, dt, result);
    std::string len = fresh("len"), inner = fresh("inner"), o = fresh("o"), in = fresh("in"), k = fresh("k");
    line("const long long " + len + " = " + x.dims[axis] + ";");
    line("const long long " + inner + " = " + prod_c(x.dims, axis + 1, x.dims.size()) + ";");
    open("for (long long " + o + " = 0; " + len + " > 0 && " + o + " < " + prod_c(x.dims, 0, axis) + "; ++" + o + ")");
    open("for (long long " + in + " = 0; " + in + " < " + inner + "; ++" + in + ")");
    line("const long long base = " + o + " * " + len + " * " + inner + " + " + in + ";");
    auto at = [&](const std::string &v, const std::string &kk) { return v + "[base + " + kk + " * " + inner + "]"; };
    line(ct + " m = " + at(x.name, "0") + ";");
    line("for (long long " + k + " = 1; " + k + " < " + len + "; ++" + k + ") m = m < " + at(x.name, k) + " ? " +
         at(x.name, k) + " : m;");
    line(ct + " s = " + literal(dt, 0) + ";");
    if (!log && result == dt) {
        // e_k = exp(x_k - m) once, kept in the result, then divided by s: the same values as
        // computing it again for the division (the interpreter's e_k / s), half the exps.
        open("for (long long " + k + " = 0; " + k + " < " + len + "; ++" + k + ")");
        line(at(r.name, k) + " = " + ex + at(x.name, k) + " - m);");
        line("s += " + at(r.name, k) + ";");
        close();
        line("for (long long " + k + " = 0; " + k + " < " + len + "; ++" + k + ") " + at(r.name, k) + " = " +
             at(r.name, k) + " / s;");
        close();
        close();
        return r;
    }
    line("for (long long " + k + " = 0; " + k + " < " + len + "; ++" + k + ") s += " + ex + at(x.name, k) + " - m);");
    line(ct + " ls = " + (f ? "trl::log_f32(s)" : "trl::log_f64(s)") + ";");
    line("(void)ls;");
    open("for (long long " + k + " = 0; " + k + " < " + len + "; ++" + k + ")");
    line(ct + " v = " + at(x.name, k) + ";");
    std::string val = log ? "(v - m) - ls" : ex + "v - m) / s";
    line(at(r.name, k) + " = " + conv(val, dt, result) + ";");
    close();
    close();
    close();
    return r;
}

Val ExprEmitter::emit_short_softmax(const Val &x, const Val &r, int64_t axis, bool log, DType dt, DType result) {
    bool f = dt == DType::F32;
    std::string ct = ctype(dt), ex = f ? "trl::exp_f32(" : "trl::exp_f64(";
    const int64_t L = x.maxs[axis];
    std::string inner = prod_c(x.dims, axis + 1, x.dims.size()), o = fresh("o"), in = fresh("in");
    bool one = inner == "1";
    open("for (long long " + o + " = 0; " + o + " < " + prod_c(x.dims, 0, axis) + "; ++" + o + ")");
    if (!one) open("for (long long " + in + " = 0; " + in + " < " + inner + "; ++" + in + ")");
    line("const long long base = " + o + " * " + lit_int(L) + (one ? "" : " * (" + inner + ") + " + in) + ";");
    auto at = [&](const std::string &v, int64_t kk) {
        return v + "[base + " + (one ? lit_int(kk) : lit_int(kk) + " * (" + inner + ")") + "]";
    };
    for (int64_t k = 0; k < L; ++k) line("const " + ct + " x" + std::to_string(k) + " = " + at(x.name, k) + ";");
    line(ct + " m = x0;");
    for (int64_t k = 1; k < L; ++k) line("m = m < x" + std::to_string(k) + " ? x" + std::to_string(k) + " : m;");
    line(ct + " s = " + literal(dt, 0) + ";");
    for (int64_t k = 0; k < L; ++k) line("s += " + ex + "x" + std::to_string(k) + " - m);");
    if (log) line("const " + ct + " ls = " + (f ? "trl::log_f32(s)" : "trl::log_f64(s)") + ";");
    for (int64_t k = 0; k < L; ++k) {
        std::string v = "x" + std::to_string(k);
        line(at(r.name, k) + " = " + conv(log ? "(" + v + " - m) - ls" : ex + v + " - m) / s", dt, result) + ";");
    }
    if (!one) close();
    close();
    return r;
}

Val ExprEmitter::emit_categorical(const ir::Node &n, const Val &key, const Val &logits) {
    if (key.tuple || key.dt != DType::Key || !key.scalar()) unsupported(n.loc, "categorical() with this key");
    if (logits.tuple || logits.dt == DType::Key || logits.scalar()) unsupported(n.loc, "categorical() of these logits");
    Val r = declare(DType::I32, maxs_of(n.type), dims_of(n.type));
    std::string len = fresh("len"), row = fresh("row");
    line("const long long " + len + " = " + logits.dims.back() + ";");
    open("for (long long " + row + " = 0; " + row + " < " + logits.numel() + " / " + len + "; ++" + row + ")");
    line(r.at(row) + " = trl::categorical(" + key.name + ", (uint64_t)" + row + ", " + logits.name + " + " + row +
         " * " + len + ", (int64_t)" + len + ");");
    close();
    return r;
}

}  // namespace trlc::codegen
