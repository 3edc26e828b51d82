// extra_builtins — code for builtins added after the core set of ExprEmitter::emit_builtin
// (codegen/expr_builtin.cpp): ExprEmitter::emit_extra_builtin, declared in
// codegen/expr_emitter.h.
// scatter_add (autodiff's adjoint of an indexing) zeroes its result and adds each value at its
// index in row-major order, as interp/value.cpp scatter_add does.
//
// orthogonal and permutation call the kernels of runtime/trl_linalg.h, which the interpreter
// (interp/value.cpp) calls too, so generated programs compute the same bits.  Their scratch
// memory is local arrays of static size (2·rows·cols + rows·cols doubles for orthogonal).
// orthogonal goes through trlg_orthogonal_f64 (runtime/trl_gen.h), out of line on the device.
#include "codegen/expr_emitter.h"

namespace trlc::codegen {

Val ExprEmitter::emit_extra_builtin(const ir::Node &n) {
    DType dt = n.type.is_tuple ? DType::F32 : n.type.dtype;
    switch (n.builtin) {
    case BuiltinOp::Orthogonal: {
        Val k = emit(*n.args.at(0));
        Val g = emit(*n.args.at(1));
        if (k.tuple || k.dt != DType::Key || !k.scalar()) unsupported(n.loc, "orthogonal() from this key");
        if (g.tuple || !g.scalar()) unsupported(n.loc, "orthogonal() with a non-scalar gain");
        const auto &sh = n.type.shape;
        if (sh.size() != 2 || !sh[0].is_static() || !sh[1].is_static())
            unsupported(n.loc, "orthogonal() of a dynamic shape");
        int64_t rows = n.type.shape[0].max_value, cols = n.type.shape[1].max_value;
        Val r = declare(dt, maxs_of(n.type), dims_of(n.type));
        open("");
        std::string size = std::to_string(rows * cols);
        line(local_array("double", "work", 2 * rows * cols, 8) + ";");
        line(local_array("double", "out", rows * cols, 8) + ";");
        line("trlg_orthogonal_f64(" + k.name + ", " + lit_int(rows) + ", " + lit_int(cols) + ", " +
             conv(g.name, g.dt, DType::F64) + ", out, work);");
        line("for (long long e = 0; e < " + size + "; ++e) " + r.name + "[e] = " + conv("out[e]", DType::F64, dt) +
             ";");
        close();
        return r;
    }
    case BuiltinOp::Permutation: {
        Val k = emit(*n.args.at(0));
        if (k.tuple || k.dt != DType::Key || !k.scalar()) unsupported(n.loc, "permutation() from this key");
        if (n.type.shape.size() != 1 || !n.type.shape[0].is_static())
            unsupported(n.loc, "permutation() of a dynamic length");
        Val r = declare(DType::I32, maxs_of(n.type), dims_of(n.type));
        line("trl::permutation_i32(" + k.name + ", " + lit_int(n.type.shape[0].max_value) + ", " + r.name + ");");
        return r;
    }
    case BuiltinOp::ScatterAdd: {  // the adjoint of an indexing: O(n) adds, in k's order
        Val idx = emit_cast(emit(*n.args.at(0)), DType::I32, n.loc);
        Val v = emit_cast(emit(*n.args.at(1)), dt, n.loc);
        if (idx.tuple || v.tuple) unsupported(n.loc, "scatter_add of a tuple");
        Val r = declare(dt, maxs_of(n.type), dims_of(n.type));
        std::string size = lit_int(n.int_attr), k = fresh("i");
        for_elems(r, [&](const std::string &j) { line(r.at(j) + " = " + literal(dt, 0) + ";"); });
        open("for (long long " + k + " = 0; " + k + " < " + idx.numel() + "; ++" + k + ")");
        line("if (" + idx.at(k) + " < 0 || " + idx.at(k) + " >= " + size + ") " +
             raise("TRLG_E_INDEX", n.loc, idx.at(k), "0", size));
        line("else " + r.at(idx.at(k)) + " = " + r.at(idx.at(k)) + " + " + v.at(k) + ";");
        close();
        return r;
    }
    default: break;
    }
    unsupported(n.loc, "this builtin");
}

}  // namespace trlc::codegen
