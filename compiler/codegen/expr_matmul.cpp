// expr_matmul — ExprEmitter's matrix products (codegen/expr_emitter.h): matmul with numpy's
// rules and its loop orders, a transposed operand read in place, and the helpers that bind a
// product computed by BLAS (emit_program.cpp's BlasPlan) and store its operands.
#include "codegen/expr_emitter.h"

namespace trlc::codegen {

const ir::Node *ExprEmitter::transpose_2d_source(const ir::Node &t) {
    if (t.kind != NodeKind::Builtin || t.builtin != BuiltinOp::Transpose) return nullptr;
    if (t.type.is_tuple || t.type.shape.size() != 2 || t.args.size() != 1) return nullptr;
    if (t.has_axes && !t.axes.empty() && !(t.axes.size() == 2 && t.axes[0] == 1 && t.axes[1] == 0)) return nullptr;
    const ir::Node &x = *t.args[0];
    return x.type.is_tuple || x.type.shape.size() != 2 ? nullptr : &x;
}

Val ExprEmitter::emit_matmul(const ir::Node &n) {
    // A transposed first operand of a float product is read in place: a(i, q) = x[q][i].
    // (Not when the transpose was already computed: then it is read where it is.)
    const ir::Node *at_src = (n.type.dtype == DType::F32 || n.type.dtype == DType::F64) &&
                                     n.args.at(1)->type.shape.size() == 2 && !memo_.count(n.args.at(0).get())
                                 ? transpose_2d_source(*n.args.at(0))
                                 : nullptr;
    Val a0 = at_src ? emit(*at_src) : emit(*n.args.at(0)), b0 = emit(*n.args.at(1));
    if (at_src && a0.dims.size() == 2)
        std::swap(a0.dims[0], a0.dims[1]), std::swap(a0.maxs[0], a0.maxs[1]);
    else if (at_src)
        unsupported(n.loc, "matmul of these values");
    if (a0.tuple || b0.tuple || a0.dt == DType::Key || b0.dt == DType::Key || a0.scalar() || b0.scalar())
        unsupported(n.loc, "matmul of these values");
    DType result = n.type.dtype, dt = result == DType::Bool ? DType::I32 : result;
    Val a = emit_cast(a0, dt, n.loc), b = emit_cast(b0, dt, n.loc);
    bool a1 = a.dims.size() == 1, b1 = b.dims.size() == 1;
    std::vector<std::string> ad = a.dims, bd = b.dims;
    std::vector<int64_t> am = a.maxs, bm = b.maxs;
    if (a1) ad.insert(ad.begin(), "1"), am.insert(am.begin(), 1);
    if (b1) bd.push_back("1"), bm.push_back(1);
    std::string M = ad[ad.size() - 2], K = ad.back(), N = bd.back();
    std::vector<std::string> abd(ad.begin(), ad.end() - 2), bbd(bd.begin(), bd.end() - 2);
    std::vector<int64_t> abm(am.begin(), am.end() - 2), bbm(bm.begin(), bm.end() - 2);
    Val r = declare(dt, maxs_of(n.type), dims_of(n.type));
    size_t nb = r.dims.size() - (a1 ? 0 : 1) - (b1 ? 0 : 1);
    if (nb > r.dims.size()) unsupported(n.loc, "this matmul");
    std::vector<std::string> batch(r.dims.begin(), r.dims.begin() + nb);
    // A split product of a row-split kernel (codegen/row_split.h): this thread's rows i only.
    r.split = cur_split_ && nb == 0 && !a1 && !b1;
    const std::string i0 = r.split ? "trl_r0" : "0", i1 = r.split ? "trl_r1" : M;
    std::string bi = fresh("bi"), i = fresh("i"), j = fresh("j"), q = fresh("q"), ao = fresh("ao"), bo = fresh("bo");
    std::string ct = ctype(dt);
    // The loop over the batch points bi, with the offsets ao, bo of their operands.
    auto open_batch = [&] {
        open("for (long long " + bi + " = 0; " + bi + " < " + prod_c(batch) + "; ++" + bi + ")");
        line("const long long " + ao + " = " + mul_c(paren(bcast_flat(abd, abm, batch, bi)), mul_c(M, K)) + ";");
        line("const long long " + bo + " = " + mul_c(paren(bcast_flat(bbd, bbm, batch, bi)), mul_c(K, N)) + ";");
    };
    // a(i, q): row-major [M, K], or read in place from x [K, M] when a = transpose(x).
    const std::string aix = at_src ? ao + " + " + q + " * " + M + " + " + i : ao + " + " + i + " * " + K + " + " + q;
    // Every loop order below computes each element from 0 adding a[i][k]·b[k][j] for
    // k = 0, 1, … in turn: the interpreter's order, so the same bits whichever is chosen.
    // The choice for N <= 4 (a value head, 2 logits), measured on [128, 64] x [64, N]
    // (AVX-512, g++ 12 -O3): i-j-k dot products 1.9 µs at N = 1 (i-k-j 2.7 µs), a copy of a
    // transposed to [K, M] then k-j-i over unit-stride columns 2.4 / 2.7 µs at N = 2 / 4
    // (i-k-j 3.9 / 5.9 µs; k-j-i over a's strided columns, gathers, 4.2 / 10.5 µs); a read
    // transposed in place needs no copy.
    const int64_t nmax = bm.back(), mmax = am[am.size() - 2];
    const bool small_n = dt != DType::I32 && !r.scalar() && nmax <= 4 && !(a1 && b1);
    const bool dots = small_n && !at_src && (nmax == 1 || mmax < 8);
    if (small_n && !dots) {
        // k-j-i: the N columns of the result as rows of a local [N, M] (the result itself
        // when N = 1), so the inner loop runs over the M rows at unit stride in a[k][·].
        bool one = nmax == 1;
        Val rt = one ? r : declare(dt, {nmax, mmax}, {N, M});
        Val tr = at_src ? a : declare(dt, {am.back(), mmax}, {K, M});  // a as [K, M]
        std::string col = fresh("col"), base = one ? bi + " * " + M : "0";
        open_batch();
        std::string tix = aix;
        if (!at_src) {
            open("for (long long " + i + " = " + i0 + "; " + i + " < " + i1 + "; ++" + i + ")");
            line("for (long long " + q + " = 0; " + q + " < " + K + "; ++" + q + ") " + tr.name + "[" + q + " * " + M +
                 " + " + i + "] = " + a.name + "[" + aix + "];");
            close();
            tix = q + " * " + M + " + " + i;
        }
        line("for (long long " + i + " = 0; " + i + " < " + mul_c(M, N) + "; ++" + i + ") " + rt.name + "[" + base +
             " + " + i + "] = " + literal(dt, 0) + ";");
        open("for (long long " + q + " = 0; " + q + " < " + K + "; ++" + q + ")");
        open("for (long long " + j + " = 0; " + j + " < " + N + "; ++" + j + ")");
        line("const " + ct + " y = " + b.name + "[" + bo + " + " + q + " * " + N + " + " + j + "];");
        line(ct + " *const " + col + " = " + rt.name + " + " + base + " + " + j + " * " + M + ";");
        line("for (long long " + i + " = " + i0 + "; " + i + " < " + i1 + "; ++" + i + ") " + col + "[" + i +
             "] = " + col + "[" + i + "] + " + tr.name + "[" + tix + "] * y;");
        close();
        close();
        if (!one) {
            open("for (long long " + i + " = " + i0 + "; " + i + " < " + i1 + "; ++" + i + ")");
            line("for (long long " + j + " = 0; " + j + " < " + N + "; ++" + j + ") " + r.name + "[(" + bi + " * " + M +
                 " + " + i + ") * " + N + " + " + j + "] = " + rt.name + "[" + j + " * " + M + " + " + i + "];");
            close();
        }
        close();
        return emit_cast(r, result);
    }
    open_batch();
    if (dt != DType::I32 && !r.scalar() && !dots) {
        // i-k-j: per row of the result, its N sums at once (unit stride in j, vectorizable).
        std::string row = fresh("row");
        open("for (long long " + i + " = " + i0 + "; " + i + " < " + i1 + "; ++" + i + ")");
        line(ct + " *const " + row + " = " + r.name + " + (" + bi + " * " + M + " + " + i + ") * " + N + ";");
        line("for (long long " + j + " = 0; " + j + " < " + N + "; ++" + j + ") " + row + "[" + j +
             "] = " + literal(dt, 0) + ";");
        open("for (long long " + q + " = 0; " + q + " < " + K + "; ++" + q + ")");
        line("const " + ct + " x = " + a.name + "[" + aix + "];");
        line("const " + ct + " *const y = " + b.name + " + " + bo + " + " + q + " * " + N + ";");
        line("for (long long " + j + " = 0; " + j + " < " + N + "; ++" + j + ") " + row + "[" + j + "] = " + row + "[" +
             j + "] + x * y[" + j + "];");
        close();
        close();
        close();
        return emit_cast(r, result);
    }
    open("for (long long " + i + " = " + i0 + "; " + i + " < " + i1 + "; ++" + i + ")");
    open("for (long long " + j + " = 0; " + j + " < " + N + "; ++" + j + ")");
    line(ct + " acc = " + literal(dt, 0) + ";");
    std::string x = a.name + "[" + aix + "]";
    std::string y = b.name + "[" + bo + " + " + q + " * " + N + " + " + j + "]";
    std::string step = dt == DType::I32
                           ? "acc = trlg_chk_i32((long long)acc + trlg_chk_i32((long long)" + x + " * " + y +
                                 ", TRLG_OP_PRODUCT, " + site(n.loc) + "), TRLG_OP_SUM, " + site(n.loc) + ");"
                           : "acc = acc + " + x + " * " + y + ";";
    line("for (long long " + q + " = 0; " + q + " < " + K + "; ++" + q + ") " + step);
    line(r.at("(" + bi + " * " + M + " + " + i + ") * " + N + " + " + j) + " = acc;");
    close();
    close();
    close();
    return emit_cast(r, result);
}

void ExprEmitter::store_operand(const ir::Node &n, size_t k, DType dt, const std::string &dst) {
    Val v = emit_cast(emit_ew(*n.args.at(k)), dt, n.loc);
    if (v.tuple || v.scalar()) unsupported(n.loc, "this matmul operand");
    store_elems(v, dst);
}

void ExprEmitter::store_elems(const Val &v, const std::string &dst) {
    if (row_mode() && !v.split) {  // a whole value of a row-split kernel: thread 0 stores it
        open("if (trl_r0 == 0)");
        row_split_ = nullptr;
        store_elems(v, dst);
        row_split_ = saved_row_split_;
        close();
        return;
    }
    if (v.lazy) {
        for_nd(v, [&](const Ix &ix) { line(dst + "[" + ix.flat + "] = " + v.lazy(ix) + ";"); });
        return;
    }
    if (v.scalar()) {
        line(dst + "[0] = " + v.name + ";");
        return;
    }
    for_elems(v, [&](const std::string &i) { line(dst + "[" + i + "] = " + v.at(i) + ";"); });
}

void ExprEmitter::store_node(const ir::Node &n, const std::string &dst) {
    Val v = emit(n);
    if (v.tuple) unsupported(n.loc, "storing this tuple value");
    store_elems(v, dst);
}

}  // namespace trlc::codegen
