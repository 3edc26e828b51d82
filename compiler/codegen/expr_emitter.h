#pragma once
// expr_emitter — the C++ of one expression DAG inside a kernel or host function, for
// emit_program.cpp (the only includer).
//
// Expressions become straight-line C++ inside a kernel: every IR node is one local (a scalar
// variable, or an array of its static maximum size holding its actual row-major elements), its
// shape a list of C expressions (literals or dynamic lengths).  Elementwise operations are loops
// over the result's elements; reductions are sequential loops in index order; reads address the
// arena through the memory plan.  The operation semantics mirror interp/value.cpp line by line:
// the compute dtype of each op, the float libm functions for f32, Python-style modulo, NaN rules
// of min/max.  Integer overflow and out-of-range errors that the interpreter reports are not
// checked here (yet).
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/emit_program.h"
#include "ir/ir.h"
#include "memory/memplan.h"
#include "schedule/schedule.h"

namespace trlc::codegen {

using ir::BinaryOp;
using ir::BuiltinOp;
using ir::DType;
using ir::NodeKind;
using ir::UnaryOp;

[[noreturn]] inline void unsupported(const Loc &loc, const std::string &what) {
    throw CodegenError{loc, "code generation does not support " + what + " yet"};
}

inline const char *ctype(DType d) {
    switch (d) {
    case DType::Bool: return "bool";
    case DType::I32: return "int32_t";
    case DType::F32: return "float";
    case DType::F64: return "double";
    case DType::Key: return "trl::RngKey";
    }
    return "double";
}

inline int64_t leaf_size(DType dt) {
    switch (dt) {
    case DType::Bool: return 1;
    case DType::I32:
    case DType::F32: return 4;
    case DType::F64: return 8;
    case DType::Key: return 16;  // sizeof(trl::RngKey)
    }
    return 8;
}

inline int64_t static_numel(const ir::Type &t) {
    int64_t n = 1;
    for (const auto &e : t.shape) n *= e.max_value;
    return n;
}

inline int64_t value_bytes(const ir::Type &t) {
    if (t.is_tuple) {
        int64_t n = 0;
        for (const auto &e : t.elems) n += value_bytes(e);
        return n;
    }
    return static_numel(t) * leaf_size(t.dtype);
}

inline std::string lit_int(int64_t v) { return std::to_string(v) + (v > 2147483647 || v < -2147483647 ? "LL" : ""); }

/** A C literal of "x" in dtype "dt" that reads back exactly. */
inline std::string literal(DType dt, double x) {
    char buf[64];
    switch (dt) {
    case DType::Bool: return x != 0 ? "true" : "false";
    case DType::I32: return "(int32_t)" + std::to_string(static_cast<int64_t>(x));
    case DType::F32:
    case DType::F64: {
        bool f = dt == DType::F32;
        if (std::isnan(x)) return f ? "(float)NAN" : "(double)NAN";
        if (std::isinf(x)) return std::string(x < 0 ? "-" : "") + (f ? "(float)INFINITY" : "(double)INFINITY");
        std::snprintf(buf, sizeof buf, f ? "%.9g" : "%.17g", f ? static_cast<double>(static_cast<float>(x)) : x);
        std::string s = buf;
        if (s.find_first_of(".en") == std::string::npos) s += ".0";
        return f ? s + "f" : s;
    }
    case DType::Key: break;
    }
    return "0";
}

/** "e" (a C expression of dtype "from") converted to "to" as interp::cast does. */
inline std::string conv(const std::string &e, DType from, DType to) {
    if (from == to) return e;
    switch (to) {
    case DType::Bool: return "((" + e + ") != 0)";
    case DType::I32: return "(int32_t)(" + e + ")";
    case DType::F32: return "(float)(" + e + ")";
    case DType::F64: return "(double)(" + e + ")";
    case DType::Key: break;
    }
    return e;
}

inline std::string affine_c(const ir::Affine &a) {
    std::string s;
    for (size_t v = 0; v < a.coef.size(); ++v) {
        int64_t c = a.coef[v];
        if (c == 0) continue;
        std::string term = (c == 1 ? "" : c == -1 ? "-" : std::to_string(c) + " * ") + "v" + std::to_string(v);
        if (s.empty()) s = term;
        else if (term[0] == '-') s += " - " + term.substr(1);
        else s += " + " + term;
    }
    if (s.empty()) return lit_int(a.constant);
    if (a.constant > 0) s += " + " + lit_int(a.constant);
    if (a.constant < 0) s += " - " + lit_int(-a.constant);
    return s;
}

inline std::string index_c(const ir::IndexExpr &e) {
    switch (e.kind) {
    case ir::IndexExpr::Aff: return affine_c(e.aff);
    case ir::IndexExpr::Min: return "trlg_min(" + index_c(*e.a) + ", " + index_c(*e.b) + ")";
    case ir::IndexExpr::Max: return "trlg_max(" + index_c(*e.a) + ", " + index_c(*e.b) + ")";
    }
    return "0";
}

inline std::string ast_c(const AstExpr &e) {
    auto a = [&](size_t k) { return ast_c(*e.args.at(k)); };
    auto join = [&](const char *fn) {
        std::string s = a(0);
        for (size_t k = 1; k < e.args.size(); ++k) s = std::string(fn) + "(" + s + ", " + a(k) + ")";
        return s;
    };
    auto chain = [&](const char *op) {
        std::string s = "(" + a(0);
        for (size_t k = 1; k < e.args.size(); ++k) s += std::string(" ") + op + " " + a(k);
        return s + ")";
    };
    switch (e.op) {
    case AstExpr::Int: return e.value < 0 ? "(" + lit_int(e.value) + ")" : lit_int(e.value);
    case AstExpr::Var: return "c" + std::to_string(e.var);
    case AstExpr::Neg: return "(-" + a(0) + ")";
    case AstExpr::Add: return "(" + a(0) + " + " + a(1) + ")";
    case AstExpr::Sub: return "(" + a(0) + " - " + a(1) + ")";
    case AstExpr::Mul: return "(" + a(0) + " * " + a(1) + ")";
    case AstExpr::FloorDiv: return "trlg_floordiv(" + a(0) + ", " + a(1) + ")";
    case AstExpr::Mod: return "trlg_pmod(" + a(0) + ", " + a(1) + ")";
    case AstExpr::Min: return join("trlg_min");
    case AstExpr::Max: return join("trlg_max");
    case AstExpr::Select: return "(" + a(0) + " ? " + a(1) + " : " + a(2) + ")";
    case AstExpr::Lt: return "(" + a(0) + " < " + a(1) + ")";
    case AstExpr::Le: return "(" + a(0) + " <= " + a(1) + ")";
    case AstExpr::Gt: return "(" + a(0) + " > " + a(1) + ")";
    case AstExpr::Ge: return "(" + a(0) + " >= " + a(1) + ")";
    case AstExpr::Eq: return "(" + a(0) + " == " + a(1) + ")";
    case AstExpr::And: return chain("&&");
    case AstExpr::Or: return chain("||");
    }
    return "0";
}

/** A computed value inside a kernel. */
struct Val {
    std::string name;
    DType dt = DType::F32;
    std::vector<int64_t> maxs;       // static maximum shape
    std::vector<std::string> dims;   // actual shape (C expressions)
    bool tuple = false;
    std::vector<Val> elems;
    bool scalar() const { return dims.empty(); }
    int64_t max_numel() const {
        int64_t n = 1;
        for (int64_t m : maxs) n *= m;
        return n;
    }
    std::string numel() const {
        if (dims.empty()) return "1";
        std::string s;
        for (const auto &d : dims) s += (s.empty() ? "" : " * ") + d;
        return dims.size() == 1 ? s : "(" + s + ")";
    }
    bool static_one() const {
        for (int64_t m : maxs)
            if (m != 1) return false;
        return true;
    }
    std::string at(const std::string &i) const { return scalar() ? name : name + "[" + i + "]"; }
};

/** Writes the C++ of one expression DAG (a kernel or host function body). */
class ExprEmitter {
public:
    ExprEmitter(const ir::Program &prog, const MemPlan &plan, std::string &out, int indent)
        : prog_(prog), plan_(plan), out_(out), indent_(indent) {}

    /** Tensors read (for the host copy before an emit / save). */
    std::set<int> reads;

    Val emit(const ir::Node &n) {
        auto it = memo_.find(&n);
        if (it != memo_.end()) return it->second;
        Val v = emit_uncached(n);
        memo_[&n] = v;
        return v;
    }

    void line(const std::string &s) { out_ += std::string(indent_ * 4, ' ') + s + "\n"; }
    void open(const std::string &s) {
        line(s.empty() ? "{" : s + " {");
        ++indent_;
    }
    void close() {
        --indent_;
        line("}");
    }
    std::string fresh(const char *p) { return p + std::to_string(counter_++); }

    /** A new local of "dt" with the shape of node type "t" (dims from the type's extents). */
    Val declare(DType dt, const std::vector<int64_t> &maxs, const std::vector<std::string> &dims) {
        Val v;
        v.name = fresh("val");
        v.dt = dt;
        v.maxs = maxs;
        v.dims = dims;
        if (v.scalar()) line(std::string(ctype(dt)) + " " + v.name + ";");
        else line(std::string(ctype(dt)) + " " + v.name + "[" + std::to_string(std::max<int64_t>(1, v.max_numel())) + "];");
        return v;
    }

    static std::vector<int64_t> maxs_of(const ir::Type &t) {
        std::vector<int64_t> m;
        for (const auto &e : t.shape) m.push_back(e.max_value);
        return m;
    }
    static std::vector<std::string> dims_of(const ir::Type &t) {
        std::vector<std::string> d;
        for (const auto &e : t.shape)
            d.push_back(e.is_static() ? lit_int(e.max_value) : "trlg_max(0LL, " + index_c(*e.dynamic) + ")");
        return d;
    }

    /** Index of operand "a" at result element "i" of a result with shape "r" (broadcasting). */
    std::string operand_at(const Val &a, const Val &r, const std::string &i, const Loc &loc) {
        if (a.scalar()) return a.name;
        if (a.static_one()) return a.name + "[0]";
        if (a.dims == r.dims) return a.name + "[" + i + "]";
        for (int64_t m : r.maxs) (void)m;
        // Static broadcast: unravel i over r's static shape.
        for (const auto &d : r.dims)
            if (d.find_first_not_of("0123456789") != std::string::npos) unsupported(loc, "broadcasting of arrays with dynamic shapes");
        for (const auto &d : a.dims)
            if (d.find_first_not_of("0123456789") != std::string::npos) unsupported(loc, "broadcasting of arrays with dynamic shapes");
        size_t rr = r.maxs.size(), ar = a.maxs.size();
        std::vector<int64_t> rst(rr, 1), ast(ar, 1);
        for (int64_t d = static_cast<int64_t>(rr) - 2; d >= 0; --d) rst[d] = rst[d + 1] * r.maxs[d + 1];
        for (int64_t d = static_cast<int64_t>(ar) - 2; d >= 0; --d) ast[d] = ast[d + 1] * a.maxs[d + 1];
        std::string s;
        for (size_t d = 0; d < ar; ++d) {
            if (a.maxs[d] == 1) continue;
            size_t od = rr - ar + d;
            std::string term = "((" + i + " / " + std::to_string(rst[od]) + ") % " + std::to_string(r.maxs[od]) + ")";
            if (ast[d] != 1) term += " * " + std::to_string(ast[d]);
            s += (s.empty() ? "" : " + ") + term;
        }
        return a.name + "[" + (s.empty() ? "0" : s) + "]";
    }

    /** Result shape of an elementwise op over "ops" with node type "t". */
    std::pair<std::vector<int64_t>, std::vector<std::string>> ew_shape(const std::vector<const Val *> &ops,
                                                                     const ir::Type &t) {
        const Val *full = nullptr;
        bool same = true;
        for (const Val *o : ops) {
            if (o->scalar() || o->static_one()) continue;
            if (!full) full = o;
            else if (o->dims != full->dims) same = false;
        }
        if (full && same && full->maxs.size() == t.shape.size()) return {full->maxs, full->dims};
        return {maxs_of(t), dims_of(t)};
    }

    /** Loop over the elements of "r": calls body(i) inside. */
    void for_elems(const Val &r, const std::function<void(const std::string &)> &body) {
        if (r.scalar()) {
            open("");
            body("0");
            close();
            return;
        }
        std::string i = fresh("i");
        open("for (long long " + i + " = 0; " + i + " < " + r.numel() + "; ++" + i + ")");
        body(i);
        close();
    }

    std::string unary_expr(UnaryOp op, DType dt, const std::string &x, const Loc &loc) {
        if (dt == DType::F32) {
            switch (op) {
            case UnaryOp::Neg: return "-" + x;
            case UnaryOp::Exp: return "expf(" + x + ")";
            case UnaryOp::Log: return "logf(" + x + ")";
            case UnaryOp::Sqrt: return "sqrtf(" + x + ")";
            case UnaryOp::Tanh: return "tanhf(" + x + ")";
            case UnaryOp::Sigmoid: return "1.0f / (1.0f + expf(-" + x + "))";
            case UnaryOp::Relu: return "(" + x + " != " + x + " ? " + x + " : (" + x + " > 0.0f ? " + x + " : 0.0f))";
            case UnaryOp::Abs: return "fabsf(" + x + ")";
            case UnaryOp::Sin: return "sinf(" + x + ")";
            case UnaryOp::Cos: return "cosf(" + x + ")";
            case UnaryOp::Floor: return "floorf(" + x + ")";
            case UnaryOp::Ceil: return "ceilf(" + x + ")";
            case UnaryOp::Sign: return "(" + x + " > 0.0f ? 1.0f : " + x + " < 0.0f ? -1.0f : " + x + ")";
            case UnaryOp::StopGrad: return x;
            case UnaryOp::Not: return "(" + x + " == 0.0f)";
            }
        } else if (dt == DType::F64) {
            switch (op) {
            case UnaryOp::Neg: return "-" + x;
            case UnaryOp::Exp: return "exp(" + x + ")";
            case UnaryOp::Log: return "log(" + x + ")";
            case UnaryOp::Sqrt: return "sqrt(" + x + ")";
            case UnaryOp::Tanh: return "tanh(" + x + ")";
            case UnaryOp::Sigmoid: return "1.0 / (1.0 + exp(-" + x + "))";
            case UnaryOp::Relu: return "(" + x + " != " + x + " ? " + x + " : (" + x + " > 0.0 ? " + x + " : 0.0))";
            case UnaryOp::Abs: return "fabs(" + x + ")";
            case UnaryOp::Sin: return "sin(" + x + ")";
            case UnaryOp::Cos: return "cos(" + x + ")";
            case UnaryOp::Floor: return "floor(" + x + ")";
            case UnaryOp::Ceil: return "ceil(" + x + ")";
            case UnaryOp::Sign: return "(" + x + " > 0.0 ? 1.0 : " + x + " < 0.0 ? -1.0 : " + x + ")";
            case UnaryOp::StopGrad: return x;
            case UnaryOp::Not: return "(" + x + " == 0.0)";
            }
        } else if (dt == DType::I32) {
            switch (op) {
            case UnaryOp::Neg: return "(int32_t)(-(long long)" + x + ")";
            case UnaryOp::Abs: return "(int32_t)(" + x + " < 0 ? -(long long)" + x + " : (long long)" + x + ")";
            case UnaryOp::Relu: return "(" + x + " > 0 ? " + x + " : 0)";
            case UnaryOp::Sign: return "(int32_t)(" + x + " > 0 ? 1 : " + x + " < 0 ? -1 : 0)";
            case UnaryOp::Floor:
            case UnaryOp::Ceil:
            case UnaryOp::StopGrad: return x;
            case UnaryOp::Not: return "(" + x + " == 0)";
            default: break;
            }
        } else if (dt == DType::Bool && op == UnaryOp::Not) {
            return "!" + x;
        }
        unsupported(loc, "this unary operation on " + std::string(ir::dtype_name(dt)));
    }

    static bool is_cmp(BinaryOp op) {
        return op == BinaryOp::Lt || op == BinaryOp::Le || op == BinaryOp::Gt || op == BinaryOp::Ge ||
               op == BinaryOp::Eq || op == BinaryOp::Ne;
    }

    std::string binary_expr(BinaryOp op, DType dt, const std::string &a, const std::string &b,
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
            case BinaryOp::Mod: return (f ? "trlg_pymodf(" : "trlg_pymod(") + a + ", " + b + ")";
            case BinaryOp::Pow: return (f ? "powf(" : "pow(") + a + ", " + b + ")";
            case BinaryOp::Min: return (f ? "trlg_fminf(" : "trlg_fmin(") + a + ", " + b + ")";
            case BinaryOp::Max: return (f ? "trlg_fmaxf(" : "trlg_fmax(") + a + ", " + b + ")";
            default: break;
            }
        } else if (dt == DType::I32) {
            switch (op) {
            case BinaryOp::Add: return "(int32_t)((long long)" + a + " + " + b + ")";
            case BinaryOp::Sub: return "(int32_t)((long long)" + a + " - " + b + ")";
            case BinaryOp::Mul: return "(int32_t)((long long)" + a + " * " + b + ")";
            case BinaryOp::Div: return "trlg_idiv(" + a + ", " + b + ")";
            case BinaryOp::Mod: return "trlg_imod(" + a + ", " + b + ")";
            case BinaryOp::Pow: return "trlg_ipow(" + a + ", " + b + ")";
            case BinaryOp::Min: return "(" + b + " < " + a + " ? " + b + " : " + a + ")";
            case BinaryOp::Max: return "(" + b + " > " + a + " ? " + b + " : " + a + ")";
            default: break;
            }
        }
        unsupported(loc, "this binary operation on " + std::string(ir::dtype_name(dt)));
    }

    Val emit_binary(BinaryOp op, const Val &a, const Val &b, DType result, const ir::Type &t,
                    const Loc &loc) {
        DType dt;
        if (is_cmp(op)) dt = std::max(a.dt, b.dt);
        else if (op == BinaryOp::And || op == BinaryOp::Or) dt = DType::Bool;
        else dt = result == DType::Bool ? DType::I32 : result;
        if (is_cmp(op) && dt == DType::Bool) dt = DType::I32;
        auto sh = ew_shape({&a, &b}, t);
        Val r = declare(result, sh.first, sh.second);
        for_elems(r, [&](const std::string &i) {
            line(std::string(ctype(dt)) + " a = " + conv(operand_at(a, r, i, loc), a.dt, dt) + ";");
            line(std::string(ctype(dt)) + " b = " + conv(operand_at(b, r, i, loc), b.dt, dt) + ";");
            DType produced = is_cmp(op) || op == BinaryOp::And || op == BinaryOp::Or ? DType::Bool : dt;
            line(r.at(i) + " = " + conv(binary_expr(op, dt, "a", "b", loc), produced, result) + ";");
        });
        return r;
    }

    Val emit_where(const Val &c, const Val &a, const Val &b, DType result, const ir::Type &t,
                   const Loc &loc) {
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
        Val r = declare(result, sh.first, sh.second);
        for_elems(r, [&](const std::string &i) {
            line(r.at(i) + " = " + conv(operand_at(c, r, i, loc), c.dt, DType::Bool) + " ? " +
                 conv(operand_at(a, r, i, loc), a.dt, result) + " : " +
                 conv(operand_at(b, r, i, loc), b.dt, result) + ";");
        });
        return r;
    }

    Val emit_cast(const Val &x, DType to) {
        if (x.tuple) {
            Val r = x;
            for (auto &e : r.elems) e = emit_cast(e, to);
            return r;
        }
        if (x.dt == to) return x;
        Val r = declare(to, x.maxs, x.dims);
        for_elems(r, [&](const std::string &i) { line(r.at(i) + " = " + conv(x.at(i), x.dt, to) + ";"); });
        return r;
    }

    /** The arena address expression of tensor "t" at point coordinates "p" (C expressions). */
    std::string address(int t, const std::vector<std::string> &p) {
        const Buffer &b = plan_.buffers.at(plan_.buffer_of(t));
        std::string slot;
        for (size_t d = 0; d < b.modulus.size() && d < p.size(); ++d) {
            if (b.modulus[d] == 1 || b.stride[d] == 0) continue;
            std::string rel = b.lower[d] == 0 ? p[d] : p[d] + " - " + lit_int(b.lower[d]);
            std::string term = "trlg_pmod(" + rel + ", " + lit_int(b.modulus[d]) + ")";
            if (b.stride[d] != 1) term += " * " + lit_int(b.stride[d]);
            slot += (slot.empty() ? "" : " + ") + term;
        }
        std::string a = "arena + " + lit_int(b.offset);
        if (!slot.empty()) a += " + (" + slot + ") * " + lit_int(b.slot_bytes);
        return a;
    }

    /** Load leaves of static type "t" from address variable "src" + byte offset into "dst"
     *  starting at element "at" (C expression). Returns bytes consumed. */
    int64_t load_leaves(const ir::Type &t, const std::string &src, int64_t off, const Val &dst,
                        const std::string &at) {
        int64_t n = static_numel(t), sz = leaf_size(t.dtype);
        std::string k = fresh("k");
        open("for (long long " + k + " = 0; " + k + " < " + std::to_string(n) + "; ++" + k + ")");
        std::string d = dst.scalar() ? dst.name : dst.name + "[" + at + " + " + k + "]";
        std::string s = src + " + " + std::to_string(off) + " + " + k + " * " + std::to_string(sz);
        if (t.dtype == DType::Bool) line(d + " = *(const unsigned char *)(" + s + ") != 0;");
        else line("memcpy(&" + d + ", " + s + ", " + std::to_string(sz) + ");");
        close();
        return n * sz;
    }

    Val emit_read(const ir::Node &n) {
        const ir::Tensor &x = prog_.tensors.at(n.tensor);
        if (x.is_load) unsupported(n.loc, "reading the loaded tensor " + x.name);
        if (plan_.buffer_of(n.tensor) < 0) unsupported(n.loc, "a read of " + x.name + " without a buffer");
        reads.insert(n.tensor);
        std::vector<std::string> p;
        std::vector<size_t> slice_pos;
        std::vector<std::string> lens, los;
        for (size_t k = 0; k < n.index.size(); ++k) {
            const ir::ReadIndex &ri = n.index[k];
            if (!ri.is_slice) {
                p.push_back(index_c(*ri.point));
                continue;
            }
            std::string lo = fresh("lo"), len = fresh("len");
            line("const long long " + lo + " = " + index_c(*ri.lo) + ";");
            line("const long long " + len + " = trlg_max(0LL, " + index_c(*ri.hi) + " - " + lo + ");");
            slice_pos.push_back(k);
            los.push_back(lo);
            lens.push_back(len);
            p.push_back("");
        }
        if (slice_pos.empty()) {
            std::string a = fresh("src");
            line("const char *" + a + " = " + address(n.tensor, p) + ";");
            return load_value(x.type, a);
        }
        if (x.type.is_tuple) unsupported(n.loc, "a slice of a tuple-valued tensor");
        std::vector<int64_t> maxs;
        std::vector<std::string> dims;
        for (size_t s = 0; s < slice_pos.size(); ++s) {
            maxs.push_back(s < n.type.shape.size() ? n.type.shape[s].max_value : 0);
            bool fixed = s < n.type.shape.size() && n.type.shape[s].is_static();
            dims.push_back(fixed ? lit_int(n.type.shape[s].max_value) : lens[s]);
        }
        for (const auto &e : x.type.shape) {
            maxs.push_back(e.max_value);
            dims.push_back(lit_int(e.max_value));
        }
        Val r = declare(x.type.dtype, maxs, dims);
        if (r.scalar()) return r;
        std::vector<std::string> idx;
        for (size_t s = 0; s < slice_pos.size(); ++s) {
            std::string j = fresh("j");
            idx.push_back(j);
            open("for (long long " + j + " = 0; " + j + " < " + lens[s] + "; ++" + j + ")");
            p[slice_pos[s]] = los[s] + " + " + j;
        }
        std::string flat;
        for (size_t s = 0; s < slice_pos.size(); ++s)
            flat = flat.empty() ? idx[s] : "(" + flat + ") * " + lens[s] + " + " + idx[s];
        std::string a = fresh("src");
        line("const char *" + a + " = " + address(n.tensor, p) + ";");
        load_leaves(x.type, a, 0, r, "(" + flat + ") * " + std::to_string(static_numel(x.type)));
        for (size_t s = 0; s < slice_pos.size(); ++s) close();
        return r;
    }

    Val load_value(const ir::Type &t, const std::string &src, int64_t off = 0) {
        if (t.is_tuple) {
            Val r;
            r.tuple = true;
            for (const auto &e : t.elems) {
                r.elems.push_back(load_value(e, src, off));
                off += value_bytes(e);
            }
            return r;
        }
        Val r = declare(t.dtype, maxs_of(t), dims_of(t));
        load_leaves(t, src, off, r, "0");
        return r;
    }

    /** Store "v" (converted to the leaf dtypes of "t") at address expression "dst" + off. */
    int64_t store_value(const ir::Type &t, const Val &v, const std::string &dst, int64_t off,
                        const Loc &loc) {
        if (t.is_tuple) {
            if (!v.tuple || v.elems.size() != t.elems.size()) unsupported(loc, "storing a value that does not match its tuple type");
            for (size_t k = 0; k < t.elems.size(); ++k) off = store_value(t.elems[k], v.elems[k], dst, off, loc);
            return off;
        }
        if (v.tuple) unsupported(loc, "storing a tuple into a non-tuple tensor");
        int64_t n = static_numel(t), sz = leaf_size(t.dtype);
        std::string k = fresh("k");
        open("for (long long " + k + " = 0; " + k + " < " + std::to_string(n) + "; ++" + k + ")");
        std::string x = conv(v.scalar() ? v.name : v.name + "[" + k + "]", v.dt, t.dtype);
        std::string d = dst + " + " + std::to_string(off) + " + " + k + " * " + std::to_string(sz);
        if (t.dtype == DType::Bool) {
            line("*(unsigned char *)(" + d + ") = " + x + " ? 1 : 0;");
        } else {
            line(std::string(ctype(t.dtype)) + " y = " + x + ";");
            line("memcpy(" + d + ", &y, " + std::to_string(sz) + ");");
        }
        close();
        return off + n * sz;
    }

    Val emit_reduce(const ir::Node &n, const Val &x0) {
        bool all = !n.has_axes || n.axes.empty();
        if (!all && x0.dims.size() == 1 && n.axes.size() == 1 && (n.axes[0] == 0 || n.axes[0] == -1)) all = true;
        if (!all) unsupported(n.loc, "a reduction over some axes");
        if (x0.tuple || x0.dt == DType::Key) unsupported(n.loc, "reducing this value");
        DType result = n.type.dtype;
        BuiltinOp op = n.builtin;
        DType dt = result;
        if (op == BuiltinOp::ReduceMax || op == BuiltinOp::ReduceMin || op == BuiltinOp::Argmax)
            dt = x0.dt == DType::Bool ? DType::I32 : x0.dt;
        if (dt == DType::Bool) dt = DType::I32;
        Val r = declare(result, {}, {});
        std::string cnt = x0.numel();
        open("");
        std::string ct = ctype(dt);
        std::string i = fresh("i");
        auto xi = [&](const std::string &k) { return conv(x0.at(k), x0.dt, dt); };
        switch (op) {
        case BuiltinOp::Sum:
        case BuiltinOp::Mean: {
            line(ct + " acc = " + literal(dt, 0) + ";");
            std::string add = dt == DType::I32 ? "acc = (int32_t)((long long)acc + " + xi(i) + ");" : "acc = acc + " + xi(i) + ";";
            line("for (long long " + i + " = 0; " + i + " < " + cnt + "; ++" + i + ") " + add);
            if (op == BuiltinOp::Mean) {
                if (dt == DType::F32) line("acc = acc / (float)(" + cnt + ");");
                else if (dt == DType::F64) line("acc = acc / (double)(" + cnt + ");");
                else unsupported(n.loc, "mean in i32");
            }
            line(r.name + " = " + conv("acc", dt, result) + ";");
            break;
        }
        case BuiltinOp::ReduceMax:
        case BuiltinOp::ReduceMin:
        case BuiltinOp::Argmax: {
            // An empty reduction is an error in the interpreter; here it reads element 0.
            line(ct + " v = " + xi("0") + ";");
            line("long long best = 0;");
            open("for (long long " + i + " = 1; " + i + " < " + cnt + " && v == v; ++" + i + ")");
            line(ct + " y = " + xi(i) + ";");
            line(std::string("if (y != y || y ") + (op == BuiltinOp::ReduceMin ? "<" : ">") + " v) { v = y; best = " + i + "; }");
            close();
            if (op == BuiltinOp::Argmax) line(r.name + " = " + conv("best", DType::I32, result) + ";");
            else line(r.name + " = " + conv("v", dt, result) + ";");
            break;
        }
        default: unsupported(n.loc, "this reduction");
        }
        close();
        return r;
    }

    /** logsumexp over all elements, as value.cpp's reduce(Logsumexp). */
    Val emit_logsumexp(const ir::Node &n, const Val &x0) {
        bool all = !n.has_axes || n.axes.empty() ||
                   (x0.dims.size() == 1 && n.axes.size() == 1 && (n.axes[0] == 0 || n.axes[0] == -1));
        if (!all) unsupported(n.loc, "logsumexp over some axes");
        if (x0.tuple || x0.dt == DType::Key) unsupported(n.loc, "logsumexp of this value");
        DType result = n.type.dtype, dt = result == DType::Bool ? DType::I32 : result;
        if (dt != DType::F32 && dt != DType::F64) unsupported(n.loc, "logsumexp in " + std::string(ir::dtype_name(dt)));
        bool f = dt == DType::F32;
        Val r = declare(result, {}, {});
        std::string cnt = x0.numel(), i = fresh("i"), ct = ctype(dt);
        auto xi = [&](const std::string &k) { return conv(x0.at(k), x0.dt, dt); };
        open("");
        open("if (" + cnt + " == 0)");
        line(r.name + " = " + conv(f ? "-(float)INFINITY" : "-(double)INFINITY", dt, result) + ";");
        close();
        open("else");
        line(ct + " mx = " + xi("0") + ";");
        open("for (long long " + i + " = 0; " + i + " < " + cnt + "; ++" + i + ")");
        line(ct + " y = " + xi(i) + ";");
        line("if (y != y || y > mx) mx = y;");
        line("if (mx != mx) break;");
        close();
        open("if (mx != mx || isinf(mx))");
        line(r.name + " = " + conv("mx", dt, result) + ";");
        close();
        open("else");
        line(ct + " s = " + literal(dt, 0) + ";");
        line("for (long long " + i + " = 0; " + i + " < " + cnt + "; ++" + i + ") s += " +
             (f ? "expf(" : "exp(") + xi(i) + " - mx);");
        line(r.name + " = " + conv(std::string("mx + ") + (f ? "logf(s)" : "log(s)"), dt, result) + ";");
        close();
        close();
        close();
        return r;
    }

    /** softmax / log_softmax over the last axis, as value.cpp's softmax(). */
    Val emit_softmax(const ir::Node &n, const Val &x0) {
        bool log = n.builtin == BuiltinOp::LogSoftmax;
        int64_t rank = static_cast<int64_t>(x0.dims.size());
        int64_t axis = n.has_axes && !n.axes.empty() ? n.axes[0] : -1;
        if (axis < 0) axis += rank;
        if (x0.tuple || x0.dt == DType::Key || rank == 0 || axis != rank - 1)
            unsupported(n.loc, std::string(log ? "log_softmax" : "softmax") + " other than over the last axis");
        DType result = n.type.dtype;
        DType dt = result == DType::F32 || result == DType::F64 ? result : DType::F32;
        bool f = dt == DType::F32;
        std::string ct = ctype(dt), ex = f ? "expf(" : "exp(";
        Val x = emit_cast(x0, dt);
        Val r = declare(result, x.maxs, x.dims);
        std::string len = fresh("len"), o = fresh("o"), k = fresh("k");
        line("const long long " + len + " = " + x.dims.back() + ";");
        open("for (long long " + o + " = 0; " + len + " > 0 && " + o + " < " + x.numel() + " / " + len + "; ++" + o + ")");
        line("const " + ct + " *xs = " + x.name + " + " + o + " * " + len + ";");
        line(ct + " m = xs[0];");
        line("for (long long " + k + " = 1; " + k + " < " + len + "; ++" + k + ") m = m < xs[" + k + "] ? xs[" + k + "] : m;");
        line(ct + " s = " + literal(dt, 0) + ";");
        line("for (long long " + k + " = 0; " + k + " < " + len + "; ++" + k + ") s += " + ex + "xs[" + k + "] - m);");
        line(ct + " ls = " + (f ? "logf(s)" : "log(s)") + ";");
        line("(void)ls;");
        open("for (long long " + k + " = 0; " + k + " < " + len + "; ++" + k + ")");
        line(ct + " v = xs[" + k + "];");
        std::string val = log ? "(v - m) - ls" : ex + "v - m) / s";
        line(r.name + "[" + o + " * " + len + " + " + k + "] = " + conv(val, dt, result) + ";");
        close();
        close();
        return r;
    }

    /** categorical(key, logits): one i32 sample per row of the last axis (trl::categorical). */
    Val emit_categorical(const ir::Node &n, const Val &key, const Val &logits) {
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

    Val emit_index(const ir::Node &n) {
        Val x = emit(*n.args.at(0));
        if (x.tuple) unsupported(n.loc, "indexing a tuple");
        size_t rank = x.dims.size();
        if (n.sindex.size() > rank) unsupported(n.loc, "this indexing");
        // Per axis: a fixed coordinate (scalar index) or a range lo + j.
        std::vector<std::string> fixed(rank), lo(rank);
        std::vector<int64_t> maxs;
        std::vector<std::string> dims;
        for (size_t d = 0; d < rank; ++d) {
            std::string size = x.dims[d];
            if (d >= n.sindex.size() || n.sindex[d].kind == ir::SpatialIndex::Full) {
                lo[d] = "0";
                maxs.push_back(x.maxs[d]);
                dims.push_back(size);
                continue;
            }
            const ir::SpatialIndex &si = n.sindex[d];
            if (si.kind == ir::SpatialIndex::Slice) {
                std::string l = fresh("lo"), h = fresh("hi");
                auto norm = [&](const ir::IndexExprPtr &e, const std::string &dflt, const std::string &name) {
                    if (!e) {
                        line("const long long " + name + " = " + dflt + ";");
                        return;
                    }
                    line("long long " + name + " = " + index_c(*e) + ";");
                    line("if (" + name + " < 0) " + name + " += " + size + ";");
                    line(name + " = trlg_min(trlg_max(" + name + ", 0LL), (long long)" + size + ");");
                };
                norm(si.lo, "0", l);
                norm(si.hi, size, h);
                std::string len = fresh("len");
                line("const long long " + len + " = trlg_max(0LL, " + h + " - " + l + ");");
                lo[d] = l;
                maxs.push_back(x.maxs[d]);
                dims.push_back(len);
                continue;
            }
            Val v = emit(*si.value);
            if (!v.scalar()) unsupported(n.loc, "gather (indexing with an array)");
            std::string f = fresh("ix");
            line("long long " + f + " = " + conv(v.name, v.dt, DType::I32) + ";");
            line("if (" + f + " < 0) " + f + " += " + size + ";");
            fixed[d] = f;
        }
        Val r = declare(x.dt, maxs, dims);
        // Strides of x (actual dims).
        std::vector<std::string> xst(rank, "1");
        for (int64_t d = static_cast<int64_t>(rank) - 2; d >= 0; --d) xst[d] = "(" + xst[d + 1] + " * " + x.dims[d + 1] + ")";
        std::vector<std::string> idx;
        for (size_t k = 0; k < dims.size(); ++k) {
            std::string j = fresh("j");
            idx.push_back(j);
            open("for (long long " + j + " = 0; " + j + " < " + dims[k] + "; ++" + j + ")");
        }
        std::string src, dst;
        for (size_t d = 0, k = 0; d < rank; ++d) {
            std::string c = fixed[d].empty() ? lo[d] + " + " + idx[k++] : fixed[d];
            src += (src.empty() ? "" : " + ") + ("(" + c + ") * " + xst[d]);
        }
        for (size_t k = 0; k < dims.size(); ++k) dst = dst.empty() ? idx[k] : "(" + dst + ") * " + dims[k] + " + " + idx[k];
        line(r.at(dst.empty() ? "0" : dst) + " = " + x.at(src.empty() ? "0" : src) + ";");
        for (size_t k = 0; k < dims.size(); ++k) close();
        return r;
    }

    Val emit_builtin(const ir::Node &n) {
        DType dt = n.type.is_tuple ? DType::F32 : n.type.dtype;
        switch (n.builtin) {
        case BuiltinOp::Sum:
        case BuiltinOp::Mean:
        case BuiltinOp::ReduceMax:
        case BuiltinOp::ReduceMin:
        case BuiltinOp::Argmax: return emit_reduce(n, emit(*n.args.at(0)));
        case BuiltinOp::Uniform:
        case BuiltinOp::Normal: {
            Val k = emit(*n.args.at(0));
            if (k.tuple || k.dt != DType::Key || !k.scalar()) unsupported(n.loc, "a random draw from this key");
            if (dt != DType::F32 && dt != DType::F64) unsupported(n.loc, "random draws of non-float type");
            Val r = declare(dt, maxs_of(n.type), dims_of(n.type));
            std::string fn = std::string(n.builtin == BuiltinOp::Uniform ? "trl::uniform_" : "trl::normal_") +
                             (dt == DType::F32 ? "f32" : "f64");
            for_elems(r, [&](const std::string &i) { line(r.at(i) + " = " + fn + "(" + k.name + ", (uint64_t)" + i + ");"); });
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
        case BuiltinOp::Logsumexp: return emit_logsumexp(n, emit(*n.args.at(0)));
        case BuiltinOp::Softmax:
        case BuiltinOp::LogSoftmax: return emit_softmax(n, emit(*n.args.at(0)));
        case BuiltinOp::Categorical: return emit_categorical(n, emit(*n.args.at(0)), emit(*n.args.at(1)));
        case BuiltinOp::MatMul: unsupported(n.loc, "matmul");
        case BuiltinOp::Transpose: unsupported(n.loc, "transpose");
        case BuiltinOp::Reshape: unsupported(n.loc, "reshape");
        case BuiltinOp::Concat:
        case BuiltinOp::Stack: {
            // Along axis 0 the result is the operands' elements one after another.
            bool stack = n.builtin == BuiltinOp::Stack;
            int64_t axis = n.has_axes && !n.axes.empty() ? n.axes[0] : 0;
            if (axis != 0) unsupported(n.loc, stack ? "stack along an axis other than 0" : "concat along an axis other than 0");
            std::vector<Val> xs;
            for (const auto &a : n.args) xs.push_back(emit(*a));
            for (const auto &x : xs) {
                if (x.tuple || x.dt == DType::Key) unsupported(n.loc, stack ? "stack of these values" : "concat of these values");
                for (const auto &d : x.dims)
                    if (d.find_first_not_of("0123456789") != std::string::npos)
                        unsupported(n.loc, stack ? "stack of dynamic shapes" : "concat of dynamic shapes");
            }
            Val r = declare(dt, maxs_of(n.type), dims_of(n.type));
            if (r.scalar()) unsupported(n.loc, "this stack");
            int64_t pos = 0;
            for (const auto &x : xs) {
                int64_t cnt = x.max_numel();
                std::string i = fresh("i");
                line("for (long long " + i + " = 0; " + i + " < " + std::to_string(cnt) + "; ++" + i + ") " +
                     r.name + "[" + std::to_string(pos) + " + " + i + "] = " + conv(x.at(i), x.dt, dt) + ";");
                pos += cnt;
            }
            if (pos != r.max_numel()) unsupported(n.loc, stack ? "this stack" : "this concat");
            return r;
        }
        case BuiltinOp::OneHot: {
            Val idx = emit_cast(emit(*n.args.at(0)), DType::I32);
            if (idx.tuple) unsupported(n.loc, "one_hot of a tuple");
            Val r = declare(dt, maxs_of(n.type), dims_of(n.type));
            std::string depth = lit_int(n.int_attr), i = fresh("i");
            // An index outside [0, depth) is an error in the interpreter; here the row stays 0.
            for_elems(r, [&](const std::string &j) { line(r.at(j) + " = " + literal(dt, 0) + ";"); });
            open("for (long long " + i + " = 0; " + i + " < " + idx.numel() + "; ++" + i + ")");
            line("if (" + idx.at(i) + " >= 0 && " + idx.at(i) + " < " + depth + ") " +
                 (r.scalar() ? r.name : r.name + "[" + i + " * " + depth + " + " + idx.at(i) + "]") + " = " +
                 literal(dt, 1) + ";");
            close();
            return r;
        }
        case BuiltinOp::Gather: unsupported(n.loc, "gather");
        case BuiltinOp::Cumsum: unsupported(n.loc, "cumsum");
        case BuiltinOp::DiscountedCumsum: unsupported(n.loc, "discounted_cumsum");
        case BuiltinOp::Arange: unsupported(n.loc, "arange");
        default: break;
        }
        return emit_extra_builtin(n);
    }

    Val emit_uncached(const ir::Node &n) {
        switch (n.kind) {
        case NodeKind::Const: {
            DType dt = n.type.dtype;
            if (dt == DType::Key) unsupported(n.loc, "a key constant");
            Val r = declare(dt, maxs_of(n.type), dims_of(n.type));
            if (r.scalar()) {
                out_.erase(out_.size() - 2);  // "v;\n" → "v = literal;"
                out_ += " = " + literal(dt, n.data.empty() ? 0.0 : n.data[0]) + ";\n";
                return r;
            }
            if (n.data.size() == 1 || !n.type.shape.empty()) {
                bool all_static = true;
                for (const auto &e : n.type.shape) all_static = all_static && e.is_static();
                if (n.data.size() != 1 && (!all_static || static_cast<int64_t>(n.data.size()) != r.max_numel()))
                    unsupported(n.loc, "this constant");
                if (n.data.size() == 1) {
                    for_elems(r, [&](const std::string &i) { line(r.at(i) + " = " + literal(dt, n.data[0]) + ";"); });
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
            Val x = emit(*n.args.at(0));
            if (x.tuple || x.dt == DType::Key) unsupported(n.loc, "an elementwise operation on this value");
            if (n.uop == UnaryOp::StopGrad) return x;
            DType result = n.type.dtype;
            DType dt = n.uop == UnaryOp::Not ? DType::Bool : result;
            DType xd = dt == DType::Bool && n.uop != UnaryOp::Not ? DType::I32 : dt;
            Val r = declare(result, x.maxs, x.dims);
            for_elems(r, [&](const std::string &i) {
                line(std::string(ctype(xd)) + " x = " + conv(x.at(i), x.dt, xd) + ";");
                DType produced = n.uop == UnaryOp::Not ? DType::Bool : xd;
                line(r.at(i) + " = " + conv(unary_expr(n.uop, xd, "x", n.loc), produced, result) + ";");
            });
            return r;
        }
        case NodeKind::Binary: {
            Val a = emit(*n.args.at(0)), b = emit(*n.args.at(1));
            if (a.tuple || b.tuple || a.dt == DType::Key || b.dt == DType::Key)
                unsupported(n.loc, "an elementwise operation on these values");
            return emit_binary(n.bop, a, b, n.type.dtype, n.type, n.loc);
        }
        case NodeKind::Where: {
            Val c = emit(*n.args.at(0)), a = emit(*n.args.at(1)), b = emit(*n.args.at(2));
            return emit_where(c, a, b, n.type.is_tuple ? DType::F32 : n.type.dtype, n.type, n.loc);
        }
        case NodeKind::Cast: return emit_cast(emit(*n.args.at(0)), n.type.dtype);
        case NodeKind::Builtin: return emit_builtin(n);
        case NodeKind::Index: return emit_index(n);
        case NodeKind::Tuple: {
            Val r;
            r.tuple = true;
            for (const auto &a : n.args) r.elems.push_back(emit(*a));
            return r;
        }
        case NodeKind::TupleGet: {
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
                if (v.tuple || !v.scalar() || v.dt == DType::Key) unsupported(n.loc, "rng() of a non-scalar");
                line(r.name + " = trl::fold_in(" + r.name + ", " + conv(v.name, v.dt, DType::I32) + ");");
            }
            return r;
        }
        case NodeKind::Extern: return emit_extern(n);
        }
        unsupported(n.loc, "this expression");
    }

    /** Builtins added after the core set (codegen/extra_builtins.h). */
    Val emit_extra_builtin(const ir::Node &n);
    /** A call of an `extern` function (codegen/extern_call.h). */
    Val emit_extern(const ir::Node &n);

private:
    const ir::Program &prog_;
    const MemPlan &plan_;
    std::string &out_;
    int indent_;
    int counter_ = 0;
    std::map<const ir::Node *, Val> memo_;
};

inline const char *const kPrelude = R"(// ---- helpers: integer and float semantics of the reference interpreter (interp/value.cpp)
TRL_HOST_DEVICE inline long long trlg_min(long long a, long long b) { return a < b ? a : b; }
TRL_HOST_DEVICE inline long long trlg_max(long long a, long long b) { return a > b ? a : b; }
TRL_HOST_DEVICE inline long long trlg_pmod(long long a, long long m) {
    long long r = a % m;
    return r != 0 && ((r < 0) != (m < 0)) ? r + m : r;
}
TRL_HOST_DEVICE inline long long trlg_floordiv(long long a, long long b) {
    long long q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
TRL_HOST_DEVICE inline int32_t trlg_idiv(int32_t a, int32_t b) {
    if (b == 0) return 0;  // the interpreter reports "integer division by zero"
    return (int32_t)trlg_floordiv(a, b);
}
TRL_HOST_DEVICE inline int32_t trlg_imod(int32_t a, int32_t b) {
    if (b == 0) return 0;  // the interpreter reports "integer modulo by zero"
    return (int32_t)trlg_pmod(a, b);
}
TRL_HOST_DEVICE inline int32_t trlg_ipow(int32_t x, int32_t b) {
    long long r = 1;
    for (int32_t k = 0; k < b; ++k) {
        r *= x;
        if (r == 0 || r == 1) break;
    }
    if (r == -1 || (r == 1 && x == -1)) r = (b % 2 && x == -1) ? -1 : 1;
    return (int32_t)r;
}
TRL_HOST_DEVICE inline float trlg_pymodf(float a, float b) {
    float r = fmodf(a, b);
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
}
TRL_HOST_DEVICE inline double trlg_pymod(double a, double b) {
    double r = fmod(a, b);
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
}
TRL_HOST_DEVICE inline float trlg_fminf(float x, float y) { return (x != x || y != y) ? (float)NAN : (y < x ? y : x); }
TRL_HOST_DEVICE inline float trlg_fmaxf(float x, float y) { return (x != x || y != y) ? (float)NAN : (y > x ? y : x); }
TRL_HOST_DEVICE inline double trlg_fmin(double x, double y) { return (x != x || y != y) ? (double)NAN : (y < x ? y : x); }
TRL_HOST_DEVICE inline double trlg_fmax(double x, double y) { return (x != x || y != y) ? (double)NAN : (y > x ? y : x); }
)";

inline std::string c_string(const std::string &s) {
    std::string r = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') r += '\\';
        if (c == '\n') { r += "\\n"; continue; }
        r += c;
    }
    return r + "\"";
}

inline std::string ident(const std::string &s) {
    std::string r;
    for (char c : s) r += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    return r;
}

inline int dtype_code(DType d) {
    switch (d) {
    case DType::Bool: return 0;
    case DType::I32: return 1;
    case DType::F32: return 2;
    case DType::F64: return 3;
    default: return -1;
    }
}
inline const char *dtype_macro(DType d) {
    switch (d) {
    case DType::Bool: return "TRL_BOOL";
    case DType::I32: return "TRL_I32";
    case DType::F32: return "TRL_F32";
    default: return "TRL_F64";
    }
}

}  // namespace trlc::codegen

#include "codegen/extern_call.h"
#include "codegen/extra_builtins.h"
