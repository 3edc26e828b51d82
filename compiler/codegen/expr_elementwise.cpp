// expr_elementwise — ExprEmitter's elementwise operations (codegen/expr_emitter.h): one element
// of a unary or binary operation (the kernels ir/ops.def names, the i32 checks), and the
// elementwise binary, where() and cast values, lazy (fused into their consumer) when used once.
#include "codegen/expr_emitter.h"

namespace trlc::codegen {

std::string ExprEmitter::unary_expr(UnaryOp op, DType dt, const std::string &x, const Loc &loc) {
    const ir::UnaryInfo &u = ir::unary_info(op);
    if (op == UnaryOp::Not) {
        if (dt == DType::Bool) return "!" + x;
    } else if (dt == DType::F32 || dt == DType::F64) {
        return (dt == DType::F32 ? u.f32 : u.f64) + ("(" + x + ")");
    } else if (dt == DType::I32 && u.typing != ir::UnaryTyping::Float) {
        std::string call = u.i32 + ("(" + x + ")");
        if (!*u.i32_check) return "(int32_t)" + call;
        std::string what = u.i32_check;
        for (char &c : what) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        return "trlg_chk_i32(" + call + ", TRLG_OP_" + what + ", " + site(loc) + ")";
    }
    unsupported(loc, "this unary operation on " + std::string(ir::dtype_name(dt)));
}

std::string ExprEmitter::binary_expr(BinaryOp op, DType dt, const std::string &a, const std::string &b,
                                     const Loc &loc) {
    switch (op) {
    case BinaryOp::Lt: return "(" + a + " < " + b + ")";
    case BinaryOp::Le: return "(" + a + " <= " + b + ")";
    case BinaryOp::Gt: return "(" + a + " > " + b + ")";
    case BinaryOp::Ge: return "(" + a + " >= " + b + ")";
    case BinaryOp::Eq: return "(" + a + " == " + b + ")";
    case BinaryOp::Ne: return "(" + a + " != " + b + ")";
    case BinaryOp::And: return "(" + a + " && " + b + ")";
    case BinaryOp::Or: return "(" + a + " || " + b + ")";
    default: break;
    }
    if (dt == DType::F32 || dt == DType::F64) {
        bool f = dt == DType::F32;
        switch (op) {
        case BinaryOp::Add: return a + " + " + b;
        case BinaryOp::Sub: return a + " - " + b;
        case BinaryOp::Mul: return a + " * " + b;
        case BinaryOp::Div: return a + " / " + b;
        case BinaryOp::Mod: return (f ? "trl::pymod_f32(" : "trl::pymod_f64(") + a + ", " + b + ")";
        case BinaryOp::Pow: return (f ? "trl::pow_f32(" : "trl::pow_f64(") + a + ", " + b + ")";
        case BinaryOp::Min: return (f ? "trl::min_f32(" : "trl::min_f64(") + a + ", " + b + ")";
        case BinaryOp::Max: return (f ? "trl::max_f32(" : "trl::max_f64(") + a + ", " + b + ")";
        default: break;
        }
    } else if (dt == DType::I32) {
        switch (op) {
        case BinaryOp::Add:
            return "trlg_chk_i32((long long)" + a + " + " + b + ", TRLG_OP_ADDITION, " + site(loc) + ")";
        case BinaryOp::Sub:
            return "trlg_chk_i32((long long)" + a + " - " + b + ", TRLG_OP_SUBTRACTION, " + site(loc) + ")";
        case BinaryOp::Mul:
            return "trlg_chk_i32((long long)" + a + " * " + b + ", TRLG_OP_MULTIPLICATION, " + site(loc) + ")";
        case BinaryOp::Div: return "trlg_idiv(" + a + ", " + b + ", " + site(loc) + ")";
        case BinaryOp::Mod: return "trlg_imod(" + a + ", " + b + ", " + site(loc) + ")";
        case BinaryOp::Pow: return "trlg_ipow(" + a + ", " + b + ", " + site(loc) + ")";
        case BinaryOp::Min: return "(" + b + " < " + a + " ? " + b + " : " + a + ")";
        case BinaryOp::Max: return "(" + b + " > " + a + " ? " + b + " : " + a + ")";
        default: break;
        }
    }
    unsupported(loc, "this binary operation on " + std::string(ir::dtype_name(dt)));
}

Val ExprEmitter::emit_binary(BinaryOp op, const Val &a0, const Val &b0, DType result, const ir::Type &t, const Loc &loc,
                             const ir::Node *node) {
    DType dt;
    if (is_cmp(op))
        dt = std::max(a0.dt, b0.dt);
    else if (op == BinaryOp::And || op == BinaryOp::Or)
        dt = DType::Bool;
    else
        dt = result == DType::Bool ? DType::I32 : result;
    if (is_cmp(op) && dt == DType::Bool) dt = DType::I32;
    auto sh = ew_shape({&a0, &b0}, t);
    Val r;
    r.name = "";
    r.dt = result;
    r.maxs = sh.first;
    r.dims = sh.second;
    r.split = node && cur_split_;  // a split node of a row-split kernel: this thread's rows
    Val a = fit(a0, r), b = fit(b0, r);
    DType produced = is_cmp(op) || op == BinaryOp::And || op == BinaryOp::Or ? DType::Bool : dt;
    r.lazy = [this, a, b, r0 = r, dt, op, produced, result, loc](const Ix &ix) {
        // Operands inline (each is used once: pure float / bool arithmetic, lazy_ok);
        // parenthesized, so the C expression rounds as the separate statements did.
        std::string x = operand_c(conv(elem(a, r0, ix), a.dt, dt));
        std::string y = operand_c(conv(elem(b, r0, ix), b.dt, dt));
        return conv(binary_expr(op, dt, x, y, loc), produced, result);
    };
    return node && lazy_ok(*node, r) ? r : materialize(r);
}

Val ExprEmitter::emit_where(const Val &c, const Val &a, const Val &b, DType result, const ir::Type &t, const Loc &loc,
                            const ir::Node *node) {
    if (a.tuple || b.tuple) {
        if (!(a.tuple && b.tuple && !c.tuple && a.elems.size() == b.elems.size()))
            unsupported(loc, "where() of these tuple values");
        Val r;
        r.tuple = true;
        for (size_t k = 0; k < a.elems.size(); ++k) {
            ir::Type et = t.is_tuple && k < t.elems.size() ? t.elems[k] : ir::Type{};
            r.elems.push_back(emit_where(c, a.elems[k], b.elems[k], a.elems[k].dt, et, loc));
        }
        return r;
    }
    auto sh = ew_shape({&c, &a, &b}, t);
    if (t.is_tuple) sh = {a.maxs, a.dims};
    if (node) {  // elementwise: lazy (fused into its consumer) when used once, as emit_binary
        Val r;
        r.dt = result;
        r.maxs = sh.first;
        r.dims = sh.second;
        r.split = cur_split_;
        Val cc = fit(c, r), aa = fit(a, r), bb = fit(b, r);
        r.lazy = [this, cc, aa, bb, r0 = r, result](const Ix &ix) {
            std::string x = operand_c(conv(elem(cc, r0, ix), cc.dt, DType::Bool));
            std::string y = operand_c(conv(elem(aa, r0, ix), aa.dt, result));
            std::string z = operand_c(conv(elem(bb, r0, ix), bb.dt, result));
            return "(" + x + " ? " + y + " : " + z + ")";
        };
        return lazy_ok(*node, r) ? r : materialize(r);
    }
    Val r = declare(result, sh.first, sh.second);
    for_elems(r, [&](const std::string &i) {
        line(r.at(i) + " = " + conv(operand_at(c, r, i, loc), c.dt, DType::Bool) + " ? " +
             conv(operand_at(a, r, i, loc), a.dt, result) + " : " + conv(operand_at(b, r, i, loc), b.dt, result) + ";");
    });
    return r;
}

Val ExprEmitter::emit_cast(const Val &x, DType to, const Loc &loc) {
    if (x.tuple) {
        Val r = x;
        for (auto &e : r.elems) e = emit_cast(e, to, loc);
        return r;
    }
    if (x.dt == to) return x;
    bool checked = loc.valid() && to == DType::I32 && (x.dt == DType::F32 || x.dt == DType::F64);
    if (x.lazy) {
        Val r = x;
        r.dt = to;
        r.lazy = [this, x, to, checked, loc](const Ix &ix) {
            std::string v = fresh("ec");
            line(std::string(ctype(x.dt)) + " " + v + " = " + x.lazy(ix) + ";");
            return checked ? "trlg_f2i(" + v + ", " + site(loc) + ")" : conv(v, x.dt, to);
        };
        return r;
    }
    Val r = declare(to, x.maxs, x.dims);
    r.split = x.split;
    for_elems(r, [&](const std::string &i) {
        line(r.at(i) + " = " + (checked ? "trlg_f2i(" + x.at(i) + ", " + site(loc) + ")" : conv(x.at(i), x.dt, to)) +
             ";");
    });
    return r;
}

}  // namespace trlc::codegen
