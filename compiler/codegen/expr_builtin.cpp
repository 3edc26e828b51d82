// expr_builtin — ExprEmitter's dispatch (codegen/expr_emitter.h): emit_uncached over the node
// kinds (constants, coordinates, elementwise nodes, tuples, rng()), emit_builtin over the
// builtins (random draws, fills, clamp, one_hot, arange, … inline; the families to their
// files), the C expression of a scalar literal or run-time bound, and the trl_field
// initializer of an emitted or saved value.
#include "codegen/expr_emitter.h"

namespace trlc::codegen {

Val ExprEmitter::emit_builtin(const ir::Node &n) {
    DType dt = n.type.is_tuple ? DType::F32 : n.type.dtype;
    switch (n.builtin) {
    case BuiltinOp::Sum:
    case BuiltinOp::Mean:
    case BuiltinOp::ReduceMax:
    case BuiltinOp::ReduceMin:
    case BuiltinOp::Argmax:
    case BuiltinOp::Logsumexp: return emit_reduce(n, emit_ew(*n.args.at(0)));
    case BuiltinOp::Uniform:
    case BuiltinOp::Normal: {
        Val k = emit(*n.args.at(0));
        if (k.tuple || k.dt != DType::Key || !k.scalar()) unsupported(n.loc, "a random draw from this key");
        if (dt != DType::F32 && dt != DType::F64) unsupported(n.loc, "random draws of non-float type");
        Val r = declare(dt, maxs_of(n.type), dims_of(n.type));
        std::string fn = std::string(n.builtin == BuiltinOp::Uniform ? "trl::uniform_" : "trl::normal_") +
                         (dt == DType::F32 ? "f32" : "f64");
        for_elems(r,
                  [&](const std::string &i) { line(r.at(i) + " = " + fn + "(" + k.name + ", (uint64_t)" + i + ");"); });
        return r;
    }
    case BuiltinOp::Zeros:
    case BuiltinOp::Ones:
    case BuiltinOp::Full: {
        std::string fill = literal(dt, n.builtin == BuiltinOp::Ones ? 1.0 : 0.0);
        if (n.builtin == BuiltinOp::Full) {
            Val v = emit(*n.args.back());
            if (v.tuple || !v.scalar()) unsupported(n.loc, "full() with a non-scalar value");
            fill = conv(v.name, v.dt, dt);
        }
        Val r = declare(dt, maxs_of(n.type), dims_of(n.type));
        for_elems(r, [&](const std::string &i) { line(r.at(i) + " = " + fill + ";"); });
        return r;
    }
    case BuiltinOp::Clamp: {
        Val x = emit(*n.args.at(0)), lo = emit(*n.args.at(1)), hi = emit(*n.args.at(2));
        Val m = emit_binary(BinaryOp::Max, x, lo, dt, n.type, n.loc);
        return emit_binary(BinaryOp::Min, m, hi, dt, n.type, n.loc);
    }
    case BuiltinOp::FoldIn: {
        Val k = emit(*n.args.at(0)), v = emit(*n.args.at(1));
        Val r = declare(DType::Key, {}, {});
        line(r.name + " = trl::fold_in(" + k.name + ", " + conv(v.name, v.dt, DType::I32) + ");");
        return r;
    }
    case BuiltinOp::Softmax:
    case BuiltinOp::LogSoftmax: return emit_softmax(n, emit(*n.args.at(0)));
    case BuiltinOp::Categorical: return emit_categorical(n, emit(*n.args.at(0)), emit(*n.args.at(1)));
    case BuiltinOp::MatMul: return emit_matmul(n);
    case BuiltinOp::Transpose: return emit_transpose(n);
    case BuiltinOp::Reshape: return emit_reshape(n);
    case BuiltinOp::Concat:
    case BuiltinOp::Stack: return emit_concat(n);
    case BuiltinOp::OneHot: {
        Val idx = emit_cast(emit(*n.args.at(0)), DType::I32, n.loc);
        if (idx.tuple) unsupported(n.loc, "one_hot of a tuple");
        Val r = declare(dt, maxs_of(n.type), dims_of(n.type));
        std::string depth = lit_int(n.int_attr), i = fresh("i");
        for_elems(r, [&](const std::string &j) { line(r.at(j) + " = " + literal(dt, 0) + ";"); });
        open("for (long long " + i + " = 0; " + i + " < " + idx.numel() + "; ++" + i + ")");
        line("if (" + idx.at(i) + " < 0 || " + idx.at(i) + " >= " + depth + ") " +
             raise("TRLG_E_ONE_HOT", n.loc, idx.at(i), depth));
        line("if (" + idx.at(i) + " >= 0 && " + idx.at(i) + " < " + depth + ") " +
             (r.scalar() ? r.name : r.name + "[" + i + " * " + depth + " + " + idx.at(i) + "]") + " = " +
             literal(dt, 1) + ";");
        close();
        return r;
    }
    case BuiltinOp::Gather: return emit_gather(n);
    case BuiltinOp::Cumsum: return emit_cumsum(n);
    case BuiltinOp::DiscountedCumsum: return emit_discounted_cumsum(n);
    case BuiltinOp::Arange: {
        Val r = declare(dt, maxs_of(n.type), dims_of(n.type));
        if (r.dims.size() != 1 || !n.args.empty()) unsupported(n.loc, "this arange");
        for_elems(r, [&](const std::string &i) { line(r.at(i) + " = " + conv(i, DType::F64, dt) + ";"); });
        return r;
    }
    default: break;
    }
    return emit_extra_builtin(n);
}

std::string ExprEmitter::const_scalar(const ir::Node &n) {
    double x = n.data.empty() ? 0.0 : n.data[0];
    DType dt = n.type.dtype;
    if (n.bound.empty() || !bound_values || n.data.size() != 1) return literal(dt, x);
    auto k = bound_values->index.find(n.bound);
    auto v = prog_.bounds.find(n.bound);
    // Only a literal that still is the bound's value in its dtype (as a cast rounds it).
    if (k == bound_values->index.end() || v == prog_.bounds.end() ||
        literal(dt, static_cast<double>(v->second)) != literal(dt, x))
        return literal(dt, x);
    bound_values->read.insert(k->second);
    std::string b = "TRLG_BOUND(" + std::to_string(k->second) + ")";
    switch (dt) {
    case DType::Bool: return "(" + b + " != 0)";
    case DType::I32: return "(int32_t)" + b;
    case DType::F32: return "(float)" + b;
    case DType::F64: return "(double)" + b;
    case DType::Key: break;
    }
    return literal(dt, x);
}

Val ExprEmitter::emit_uncached(const ir::Node &n) {
    switch (n.kind) {
    case NodeKind::Const: {
        DType dt = n.type.dtype;
        if (dt == DType::Key) unsupported(n.loc, "a key constant");
        Val r = declare(dt, maxs_of(n.type), dims_of(n.type));
        if (r.scalar()) {
            out_.erase(out_.size() - 2);  // "v;\n" → "v = literal;"
            out_ += " = " + const_scalar(n) + ";\n";
            return r;
        }
        if (n.data.size() == 1 || !n.type.shape.empty()) {
            bool all_static = true;
            for (const auto &e : n.type.shape) all_static = all_static && e.is_static();
            if (n.data.size() != 1 && (!all_static || static_cast<int64_t>(n.data.size()) != r.max_numel()))
                unsupported(n.loc, "this constant");
            // An integer progression a + d·i (arange, index tables): one loop; other tables one
            // initializer list (not a statement per element).
            bool prog = n.data.size() > 1 && dt != DType::Bool;
            double d0 = n.data.size() > 1 ? n.data[1] - n.data[0] : 0.0;
            for (size_t i = 0; prog && i < n.data.size(); ++i)
                prog = n.data[i] == std::floor(n.data[i]) && std::fabs(n.data[i]) < 16777216.0 &&
                       n.data[i] == n.data[0] + d0 * static_cast<double>(i);
            bool listed = r.max_numel() * leaf_size(dt) <= kStackArrayBytes;
            if (n.data.size() == 1) {
                for_elems(r, [&](const std::string &i) { line(r.at(i) + " = " + literal(dt, n.data[0]) + ";"); });
            } else if (prog) {
                for_elems(r, [&](const std::string &i) {
                    std::string v = std::to_string(static_cast<int64_t>(n.data[0])) + "LL + " +
                                    std::to_string(static_cast<int64_t>(d0)) + "LL * " + i;
                    line(r.at(i) + " = (" + std::string(ctype(dt)) + ")(" + v + ");");
                });
            } else if (listed) {
                out_.erase(out_.size() - 2);  // "v[N];\n" → "v[N] = {…};"
                std::string init;
                for (double x : n.data) init += (init.empty() ? "" : ", ") + literal(dt, x);
                out_ += " = {" + init + "};\n";
            } else {
                for (size_t i = 0; i < n.data.size(); ++i)
                    line(r.name + "[" + std::to_string(i) + "] = " + literal(dt, n.data[i]) + ";");
            }
        }
        return r;
    }
    case NodeKind::Coord: {
        Val r = declare(DType::I32, {}, {});
        out_.erase(out_.size() - 2);
        out_ += " = (int32_t)v" + std::to_string(n.var) + ";\n";
        return r;
    }
    case NodeKind::Read: return emit_read(n);
    case NodeKind::Unary: {
        Val x = emit_ew(*n.args.at(0));
        if (x.tuple || x.dt == DType::Key) unsupported(n.loc, "an elementwise operation on this value");
        if (n.uop == UnaryOp::StopGrad) return x;
        DType result = n.type.dtype;
        DType dt = n.uop == UnaryOp::Not ? DType::Bool : result;
        DType xd = dt == DType::Bool && n.uop != UnaryOp::Not ? DType::I32 : dt;
        DType produced = n.uop == UnaryOp::Not ? DType::Bool : xd;
        Val r = x;
        r.name = "";
        r.buffer = -1;
        r.view = false;
        r.dt = result;
        r.split = cur_split_;  // this thread's rows of x (split or whole)
        r.lazy = [this, x, xd, produced, result, &n](const Ix &ix) {
            std::string v = conv(elem(x, x, ix), x.dt, xd);
            if (!simple_operand(v)) {  // a temporary: unary_expr may use its operand twice
                std::string t = fresh("ex");
                line(std::string(ctype(xd)) + " " + t + " = " + v + ";");
                v = t;
            }
            return conv(unary_expr(n.uop, xd, v, n.loc), produced, result);
        };
        return lazy_ok(n, r) ? r : materialize(r);
    }
    case NodeKind::Binary: {
        Val a = emit_ew(*n.args.at(0)), b = emit_ew(*n.args.at(1));
        if (a.tuple || b.tuple || a.dt == DType::Key || b.dt == DType::Key)
            unsupported(n.loc, "an elementwise operation on these values");
        return emit_binary(n.bop, a, b, n.type.dtype, n.type, n.loc, &n);
    }
    case NodeKind::Where: {
        if (n.type.is_tuple) {
            Val c = emit(*n.args.at(0)), a = emit(*n.args.at(1)), b = emit(*n.args.at(2));
            return emit_where(c, a, b, DType::F32, n.type, n.loc);
        }
        Val c = emit_ew(*n.args.at(0)), a = emit_ew(*n.args.at(1)), b = emit_ew(*n.args.at(2));
        return emit_where(c, a, b, n.type.dtype, n.type, n.loc, &n);
    }
    case NodeKind::Cast: {
        Val r = emit_cast(emit_ew(*n.args.at(0)), n.type.dtype, n.loc);
        return r.lazy && !lazy_ok(n, r) ? materialize(r) : r;
    }
    case NodeKind::Builtin: return emit_builtin(n);
    case NodeKind::Index: return emit_index(n);
    case NodeKind::Tuple: {
        Val r;
        r.tuple = true;
        for (const auto &a : n.args) r.elems.push_back(emit(*a));
        return r;
    }
    case NodeKind::TupleGet: {
        if (Val r; try_tuple_part(n, r)) return r;
        Val t = emit(*n.args.at(0));
        if (!t.tuple || n.int_attr < 0 || n.int_attr >= static_cast<int64_t>(t.elems.size()))
            unsupported(n.loc, "this tuple element");
        return t.elems[n.int_attr];
    }
    case NodeKind::Rng: {
        Val r = declare(DType::Key, {}, {});
        line(r.name + " = trl::rng_root(stream);");
        for (const auto &a : n.args) {
            Val v = emit(*a);
            // The interpreter takes any value with one element (an i32 scalar after sema).
            if (v.tuple || v.max_numel() != 1 || v.dt == DType::Key) unsupported(n.loc, "rng() of a non-scalar");
            line(r.name + " = trl::fold_in(" + r.name + ", " +
                 conv(v.scalar() ? v.name : v.name + "[0]", v.dt, DType::I32) + ");");
        }
        return r;
    }
    case NodeKind::Extern: return emit_extern(n);
    case NodeKind::Grad: break;  // replaced by the autodiff pass before code generation
    }
    unsupported(n.loc, "this expression");
}

std::string ExprEmitter::field_init(const std::string &key, const Val &v, const Loc &loc) {
    if (v.tuple) {
        std::vector<std::string> elems;
        for (const auto &e : v.elems) elems.push_back(field_init("", e, loc));
        std::string arr = fresh("elems");
        std::string init;
        for (const auto &e : elems) init += (init.empty() ? "" : ", ") + e;
        line("const trl_field " + arr + "[] = {" + (init.empty() ? "{\"\", TRL_F32, 0, nullptr, nullptr}" : init) +
             "};");
        return "{" + c_string(key) + ", TRL_TUPLE, " + std::to_string(v.elems.size()) + ", nullptr, " + arr + "}";
    }
    if (dtype_code(v.dt) < 0) unsupported(loc, "emitting or saving a random key");
    std::string shape = "nullptr";
    if (!v.scalar()) {
        shape = fresh("shape");
        std::string dims;
        for (const auto &d : v.dims) dims += (dims.empty() ? "" : ", ") + std::string("(long long)(") + d + ")";
        line("const long long " + shape + "[] = {" + dims + "};");
    }
    return "{" + c_string(key) + ", " + dtype_macro(v.dt) + ", " + std::to_string(v.dims.size()) + ", " + shape + ", " +
           (v.scalar() ? "&" + v.name : v.name) + "}";
}

}  // namespace trlc::codegen
