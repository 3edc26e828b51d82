#pragma once
// expr_emitter — the C++ of one expression DAG inside a kernel or host function, for
// emit_program.cpp (the only includer).
//
// Expressions become straight-line C++ inside a kernel: every IR node is one local (a scalar
// variable, or an array of its static maximum size holding its actual row-major elements), its
// shape a list of C expressions (literals or dynamic lengths).  Elementwise operations are loops
// over the result's elements; reductions are sequential loops in index order; reads address the
// arena through the memory plan.  The operation semantics mirror interp/value.cpp: the compute
// dtype of each op, and one element is the same function the interpreter calls (ir/ops.def
// names it; runtime/trl_ops.h holds Python-style modulo, the NaN rules of min/max, …).
// Generated code's helpers and run-time checks (i32 overflow, division by zero, …: the
// interpreter's errors) are runtime/trl_gen.h.
#include <cctype>
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
#include "ir/ops.h"
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
    case ir::IndexExpr::Min: return "trl::min_i64(" + index_c(*e.a) + ", " + index_c(*e.b) + ")";
    case ir::IndexExpr::Max: return "trl::max_i64(" + index_c(*e.a) + ", " + index_c(*e.b) + ")";
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
    auto call = [&](const char *fn) { return std::string(fn) + "(" + a(0) + ", " + a(1) + ")"; };
    switch (e.op) {
    case AstExpr::Int: return e.value < 0 ? "(" + lit_int(e.value) + ")" : lit_int(e.value);
    case AstExpr::Var: return "c" + std::to_string(e.var);
    case AstExpr::Bound: return "bound" + std::to_string(e.var);  // run_program's locals
    case AstExpr::Neg: return "(-" + a(0) + ")";
    case AstExpr::Add: return chain("+");
    case AstExpr::Sub: return chain("-");
    case AstExpr::Mul: return chain("*");
    case AstExpr::FloorDiv: return call("trl::floordiv_i64");
    case AstExpr::Mod: return call("trl::pmod_i64");
    case AstExpr::Min: return join("trl::min_i64");
    case AstExpr::Max: return join("trl::max_i64");
    case AstExpr::Select: return "(" + a(0) + " ? " + a(1) + " : " + a(2) + ")";
    case AstExpr::Lt: return chain("<");
    case AstExpr::Le: return chain("<=");
    case AstExpr::Gt: return chain(">");
    case AstExpr::Ge: return chain(">=");
    case AstExpr::Eq: return chain("==");
    case AstExpr::And: return chain("&&");
    case AstExpr::Or: return chain("||");
    }
    return "0";
}

inline std::string c_string(const std::string &s);
inline int dtype_code(DType d);
inline const char *dtype_macro(DType d);

/** Byte offsets of the loaded tensors after the arena tail (defined below). */
inline std::map<int, int64_t> load_offsets(const ir::Program &prog, int64_t *total = nullptr);

/** Locals larger than this (bytes, static maximum size) are TRLG_LARGE_LOCAL: a per-thread
 *  heap buffer on the host, where a few [2048, 256] f32 intermediates (2 MiB each) overflow an
 *  8 MiB thread stack; plain (local memory) in device code. */
constexpr int64_t kStackArrayBytes = 64 * 1024;

/** An element of a value inside a loop nest: its flat row-major index and, when the loop nest
 *  runs over the value's axes (for_nd), the coordinate of each axis (C expressions). */
struct Ix {
    std::string flat;
    std::vector<std::string> c;  // empty: only the flat index is known
};

/** A computed value inside a kernel. */
struct Val {
    std::string name;
    DType dt = DType::F32;
    std::vector<int64_t> maxs;       // static maximum shape
    std::vector<std::string> dims;   // actual shape (C expressions)
    bool tuple = false;
    std::vector<Val> elems;
    /** >= 0: a view of the arena (operands read in place): "name" is a const typed pointer into
     *  the bytes of this memory-plan buffer (a scalar: a value loaded from them). */
    int buffer = -1;
    /** Set: an elementwise value that is not stored (fused into its single consumer's loop):
     *  lazy(ix) writes the lines computing element ix of this value (ix indexes its own shape)
     *  and returns a C expression of it, to be used once.  Only ExprEmitter::emit_ew returns
     *  such values; emit() materializes them. */
    std::function<std::string(const Ix &)> lazy;
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

    /** Run-time bounds (`--bound`) read as values: a literal tagged with one of them
     *  (ir::Node::bound) becomes `TRLG_BOUND(k)`, k its Program::bounds index, converted to
     *  the literal's dtype as the interpreter rounds the literal; read gets k.  Null: every
     *  literal is printed. */
    struct BoundValues {
        std::map<std::string, int> index;  // bound name -> k, run-time bounds only
        std::set<int> read;
    };
    BoundValues *bound_values = nullptr;

    /** The value of "n", stored (a local, a view of the arena, or a scalar). */
    Val emit(const ir::Node &n) {
        Val v = emit_ew(n);
        if (v.lazy) {
            v = materialize(v);
            memo_[&n] = v;
        }
        return v;
    }

    /** The value of "n" for an elementwise consumer: possibly lazy (fused into the consumer's
     *  loop) when "n" is an elementwise node with one use (count_uses). */
    Val emit_ew(const ir::Node &n) {
        auto it = memo_.find(&n);
        if (it != memo_.end()) return it->second;
        Val v = emit_uncached(n);
        memo_[&n] = v;
        return v;
    }

    /** Fusion of elementwise chains in the expression DAG below "root": counts each node's
     *  uses; an elementwise node (unary, binary, cast) with one use is then computed inside its
     *  consumer's loop instead of into a local array of its own (tanh(x @ W + b) stores
     *  tanh(acc + b) as it goes, with no [rows, N] intermediates).  Without this call nothing
     *  is fused. */
    void count_uses(const ir::Node &root) {
        fuse_ = true;
        std::set<const ir::Node *> seen;
        std::function<void(const ir::Node &)> walk = [&](const ir::Node &n) {
            if (!seen.insert(&n).second) return;
            for (const auto &a : n.args)
                if (a) ++uses_[a.get()], walk(*a);
            for (const auto &si : n.sindex)
                if (si.value) ++uses_[si.value.get()], walk(*si.value);
        };
        ++uses_[&root];
        walk(root);
    }
    /** Node "n" is computed into an array of its own even with one use (a value that is also
     *  stored for later kernels: computed once, not once fused and once for the store). */
    void keep_stored(const ir::Node &n) { uses_[&n] += 2; }
    /** Whether value "r" of node "n" may stay lazy (see count_uses): one use, an array, and
     *  float arithmetic only (operands and result f32 / f64, or a bool result), which raises no
     *  run-time error, so computing it element by element inside the consumer cannot change
     *  which error is reported first. */
    bool lazy_ok(const ir::Node &n, const Val &r) const {
        auto it = uses_.find(&n);
        if (!fuse_ || r.tuple || r.scalar() || it == uses_.end() || it->second != 1) return false;
        auto fp = [](DType d) { return d == DType::F32 || d == DType::F64; };
        if (!fp(n.type.dtype) && n.type.dtype != DType::Bool) return false;
        for (size_t k = 0; k < n.args.size(); ++k) {
            const auto &a = n.args[k];
            bool cond = n.kind == NodeKind::Where && k == 0 && a && a->type.dtype == DType::Bool;
            if (!a || a->type.is_tuple || !(fp(a->type.dtype) || cond)) return false;
        }
        return true;
    }

    /** One line at the current indent.  A loop header ("for (...") is preceded by TRLG_SEQ
     *  (#pragma unroll 1 in device code, nothing on the host) unless its trip count is a literal <= 4:
     *  these loops run sequentially in one thread, and NVVM's optimizer, left to unroll the
     *  hundreds of static loops (64 to 4096 iterations, byte-wise arena copies) of a training
     *  program's kernels, spent ~15 min of CPU on one sample (see test/lit/cuda). */
    void line(const std::string &s) {
        std::string pad(indent_ * 4, ' ');
        // On a line of its own: libFormat keeps an upper-case macro alone on its line as a
        // statement, so the loop is formatted as usual below it.
        if (sequential_loop(s)) out_ += pad + "TRLG_SEQ\n";
        out_ += pad + s + "\n";
    }
    /** Whether "s" is a loop header "for (init; v < BOUND; ...)" whose BOUND is not a literal
     *  <= 4 (short literal loops stay unrollable: cheap to compile, faster on the device). */
    static bool sequential_loop(const std::string &s) {
        if (s.compare(0, 5, "for (") != 0) return false;
        size_t semi = s.find(';');
        size_t lt = s.find(" < ", semi == std::string::npos ? 0 : semi);
        size_t end = lt == std::string::npos ? lt : s.find(';', lt);
        if (end == std::string::npos) return true;
        std::string bound = s.substr(lt + 3, end - lt - 3);
        return !(static_dim(bound) && bound.size() < 10 && std::stoll(bound) <= 4);
    }
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
        int64_t n = std::max<int64_t>(1, v.max_numel());
        if (v.scalar()) line(std::string(ctype(dt)) + " " + v.name + ";");
        else if (n * leaf_size(dt) > kStackArrayBytes)
            line(std::string("TRLG_LARGE_LOCAL(") + ctype(dt) + ", " + v.name + ", " + std::to_string(n) + ");");
        else line(std::string(ctype(dt)) + " " + v.name + "[" + std::to_string(n) + "];");
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
            d.push_back(e.is_static() ? lit_int(e.max_value) : "trl::max_i64(0LL, " + index_c(*e.dynamic) + ")");
        return d;
    }

    // ---- shapes as C expressions: literals fold, dynamic lengths stay names --------------------

    static bool static_dim(const std::string &d) {
        return !d.empty() && d.find_first_not_of("0123456789") == std::string::npos;
    }
    /** a · b, folded when both are literals or one is 0 / 1. */
    static std::string mul_c(const std::string &a, const std::string &b) {
        if (a == "1") return b;
        if (b == "1") return a;
        if (a == "0" || b == "0") return "0";
        if (static_dim(a) && static_dim(b)) return std::to_string(std::stoll(a) * std::stoll(b));
        return "(" + a + " * " + b + ")";
    }
    /** "e" in parentheses unless it is a name or a literal. */
    static std::string paren(const std::string &e) {
        bool simple = !e.empty() && e.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == std::string::npos;
        return simple ? e : "(" + e + ")";
    }
    /** Whether "e" is a name, a literal or a name[index] (one subscript, no call): used as an
     *  operand without parentheses, and cheap to repeat. */
    static bool simple_operand(const std::string &e) {
        if (e.empty()) return false;
        size_t b = e.find('[');
        std::string head = e.substr(0, b);
        if (head.empty() || head.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.") !=
                                std::string::npos)
            return false;
        if (b == std::string::npos) return true;
        if (e.back() != ']') return false;
        int depth = 0;
        for (size_t k = b; k < e.size(); ++k) {
            if (e[k] == '[') ++depth;
            else if (e[k] == ']' && --depth == 0 && k + 1 != e.size()) return false;
        }
        return true;
    }
    /** "e" as an operand of a C operator: in parentheses unless simple_operand. */
    static std::string operand_c(const std::string &e) { return simple_operand(e) ? e : "(" + e + ")"; }
    /** Π dims[from, to). */
    static std::string prod_c(const std::vector<std::string> &dims, size_t from, size_t to) {
        std::string s = "1";
        for (size_t d = from; d < to && d < dims.size(); ++d) s = mul_c(s, dims[d]);
        return s;
    }
    static std::string prod_c(const std::vector<std::string> &dims) { return prod_c(dims, 0, dims.size()); }
    /** Row-major strides of "dims". */
    static std::vector<std::string> strides_c(const std::vector<std::string> &dims) {
        std::vector<std::string> st(dims.size(), "1");
        for (int64_t d = static_cast<int64_t>(dims.size()) - 2; d >= 0; --d) st[d] = mul_c(st[d + 1], dims[d + 1]);
        return st;
    }
    /** Coordinate along axis "d" of flat index "i" in an array of shape "dims" (strides "st"). */
    static std::string coord_c(const std::string &i, const std::vector<std::string> &dims,
                               const std::vector<std::string> &st, size_t d) {
        std::string q = st[d] == "1" ? i : "(" + i + " / " + st[d] + ")";
        if (d == 0) return q;
        return "(" + q + " % " + dims[d] + ")";
    }
    /** Flat index into an operand of shape "adims" (static maxima "amaxs") at flat index "i" of
     *  the broadcast shape "rdims" (numpy rules; a dynamic length of 1 broadcasts at run time). */
    static std::string bcast_flat(const std::vector<std::string> &adims, const std::vector<int64_t> &amaxs,
                                  const std::vector<std::string> &rdims, const std::string &i) {
        if (adims.empty()) return "0";
        if (adims == rdims) return i;
        size_t rr = rdims.size(), ar = adims.size();
        auto rst = strides_c(rdims), ast = strides_c(adims);
        std::string s;
        for (size_t d = 0; d < ar; ++d) {
            if (amaxs[d] == 1 || d + rr < ar) continue;
            size_t od = rr - ar + d;
            std::string c = coord_c(i, rdims, rst, od);
            if (!static_dim(adims[d]) && adims[d] != rdims[od]) c = "(" + adims[d] + " == 1 ? 0LL : " + c + ")";
            std::string term = mul_c(c, ast[d]);
            s = s.empty() ? term : s + " + " + term;
        }
        return s.empty() ? "0" : s;
    }

    /** Index of operand "a" at result element "i" of a result with shape "r" (broadcasting). */
    std::string operand_at(const Val &a, const Val &r, const std::string &i, const Loc &) {
        if (a.scalar()) return a.name;
        if (a.static_one()) return a.name + "[0]";
        return a.name + "[" + bcast_flat(a.dims, a.maxs, r.dims, i) + "]";
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

    /** Loop nest over the axes of "r" (outer to inner, row-major): calls body(ix) inside with
     *  the coordinates and the flat index.  The innermost loop runs over the last axis, so
     *  elementwise and broadcast accesses are unit-stride or invariant in it (vectorizable). */
    void for_nd(const Val &r, const std::function<void(const Ix &)> &body) {
        if (r.scalar()) {
            open("");
            body(Ix{"0", {}});
            close();
            return;
        }
        Ix ix;
        for (size_t d = 0; d < r.dims.size(); ++d) {
            std::string c = fresh("i");
            open("for (long long " + c + " = 0; " + c + " < " + r.dims[d] + "; ++" + c + ")");
            ix.c.push_back(c);
            ix.flat = d == 0 ? c : mul_c(paren(ix.flat), r.dims[d]) + " + " + c;
        }
        body(ix);
        for (size_t d = 0; d < r.dims.size(); ++d) close();
    }

    /** The C expression of operand "a" at element "ix" of result shape "r" (numpy broadcasting;
     *  a lazy "a" has r's shape and computes its element here). */
    std::string elem(const Val &a, const Val &r, const Ix &ix) {
        if (a.lazy) return a.lazy(ix);
        if (a.scalar()) return a.name;
        if (a.static_one()) return a.name + "[0]";
        if (a.dims == r.dims) return a.name + "[" + ix.flat + "]";
        if (ix.c.size() != r.dims.size()) return a.name + "[" + bcast_flat(a.dims, a.maxs, r.dims, ix.flat) + "]";
        size_t rr = r.dims.size(), ar = a.dims.size();
        auto ast = strides_c(a.dims);
        std::string s;
        for (size_t d = 0; d < ar; ++d) {
            if (a.maxs[d] == 1 || d + rr < ar) continue;
            size_t od = rr - ar + d;
            std::string c = ix.c[od];
            if (!static_dim(a.dims[d]) && a.dims[d] != r.dims[od]) c = "(" + a.dims[d] + " == 1 ? 0LL : " + c + ")";
            std::string term = mul_c(c, ast[d]);
            s = s.empty() ? term : s + " + " + term;
        }
        return a.name + "[" + (s.empty() ? "0" : s) + "]";
    }

    /** A lazy operand used at another shape than its consumer's (broadcast) is stored first,
     *  so that it is computed once per element. */
    Val fit(const Val &a, const Val &r) { return a.lazy && a.dims != r.dims ? materialize(a) : a; }

    /** The source position arguments of a run-time check at "loc" ("arena, file, line, col"):
     *  a failing check reports "path:line:col: error: message" as the interpreter does. */
    static std::string site(const Loc &loc) {
        return "arena, " + std::to_string(loc.file) + ", " + std::to_string(loc.line) + ", " + std::to_string(loc.col);
    }
    /** A statement raising run-time error "kind" (TRLG_E_*) with values a, b, c at "loc". */
    static std::string raise(const char *kind, const Loc &loc, const std::string &a = "0",
                             const std::string &b = "0", const std::string &c = "0") {
        return std::string("trlg_raise(") + site(loc) + ", " + kind + ", (double)(" + a + "), (double)(" + b +
               "), (double)(" + c + "));";
    }

    /** One element of unary "op" on "x" of dtype "dt": a call of the kernel that ir/ops.def
     *  names (runtime/trl_ops.h, trl_math.h or libm; the interpreter calls the same function).
     *  On i32 the kernel computes in long long; a checked row's result must fit i32. */
    std::string unary_expr(UnaryOp op, DType dt, const std::string &x, const Loc &loc) {
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
            case BinaryOp::Mod: return (f ? "trl::pymod_f32(" : "trl::pymod_f64(") + a + ", " + b + ")";
            case BinaryOp::Pow: return (f ? "powf(" : "pow(") + a + ", " + b + ")";
            case BinaryOp::Min: return (f ? "trl::min_f32(" : "trl::min_f64(") + a + ", " + b + ")";
            case BinaryOp::Max: return (f ? "trl::max_f32(" : "trl::max_f64(") + a + ", " + b + ")";
            default: break;
            }
        } else if (dt == DType::I32) {
            switch (op) {
            case BinaryOp::Add: return "trlg_chk_i32((long long)" + a + " + " + b + ", TRLG_OP_ADDITION, " + site(loc) + ")";
            case BinaryOp::Sub: return "trlg_chk_i32((long long)" + a + " - " + b + ", TRLG_OP_SUBTRACTION, " + site(loc) + ")";
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

    /** a op b elementwise; lazy (count_uses) when "node" is given and has one use. */
    Val emit_binary(BinaryOp op, const Val &a0, const Val &b0, DType result, const ir::Type &t,
                    const Loc &loc, const ir::Node *node = nullptr) {
        DType dt;
        if (is_cmp(op)) dt = std::max(a0.dt, b0.dt);
        else if (op == BinaryOp::And || op == BinaryOp::Or) dt = DType::Bool;
        else dt = result == DType::Bool ? DType::I32 : result;
        if (is_cmp(op) && dt == DType::Bool) dt = DType::I32;
        auto sh = ew_shape({&a0, &b0}, t);
        Val r;
        r.name = "";
        r.dt = result;
        r.maxs = sh.first;
        r.dims = sh.second;
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

    Val emit_where(const Val &c, const Val &a, const Val &b, DType result, const ir::Type &t,
                   const Loc &loc, const ir::Node *node = nullptr) {
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
                 conv(operand_at(a, r, i, loc), a.dt, result) + " : " +
                 conv(operand_at(b, r, i, loc), b.dt, result) + ";");
        });
        return r;
    }

    /** "x" converted to "to" as interp::cast does; with a valid "loc", a float → i32 conversion
     *  of NaN or of a value outside the i32 range is the interpreter's run-time error. */
    Val emit_cast(const Val &x, DType to, const Loc &loc = Loc{}) {
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
        for_elems(r, [&](const std::string &i) {
            line(r.at(i) + " = " + (checked ? "trlg_f2i(" + x.at(i) + ", " + site(loc) + ")" : conv(x.at(i), x.dt, to)) + ";");
        });
        return r;
    }

    /** The arena address expression of tensor "t" at point coordinates "p" (C expressions). */
    std::string address(int t, const std::vector<std::string> &p) {
        const Buffer &b = plan_.buffers.at(plan_.buffer_of(t));
        std::string slot;
        for (size_t d = 0; d < b.modulus.size() && d < p.size(); ++d) {
            if (b.modulus[d] == 1 || b.stride[d] == 0) continue;
            std::string rel = b.lower[d] == 0 ? p[d] : p[d] + " - " + lit_int(b.lower[d]);
            std::string term = "trl::pmod_i64(" + rel + ", " + lit_int(b.modulus[d]) + ")";
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
        if (x.is_load) {
            // Loaded tensors have no domain: one value, after the arena tail (trlg_start).
            if (!n.index.empty()) unsupported(n.loc, "indexing the loaded tensor " + x.name + " by points");
            int64_t off = load_offsets(prog_).at(n.tensor);
            std::string a = fresh("src");
            line("const char *" + a + " = arena + kLoadBase + " + std::to_string(off) + ";");
            return load_value(x.type, a);
        }
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
            line("const long long " + len + " = trl::max_i64(0LL, " + index_c(*ri.hi) + " - " + lo + ");");
            slice_pos.push_back(k);
            los.push_back(lo);
            lens.push_back(len);
            p.push_back("");
        }
        if (slice_pos.empty()) {
            std::string a = fresh("src");
            line("const char *" + a + " = " + address(n.tensor, p) + ";");
            return view_value(x.type, a, 0, n.tensor);
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

    /** The alignment (bytes) of every address of tensor "t"'s buffer: the memory plan puts
     *  buffers at multiples of 256 bytes and pads slots to 16 (memory/arena.cpp, memplan.h) in an
     *  arena allocated 256-byte aligned, so 16; checked here, since typed pointers rely on it. */
    int64_t buffer_align(int t) const {
        const Buffer &b = plan_.buffers.at(plan_.buffer_of(t));
        if (b.offset % 16 != 0 || (b.slots > 1 && b.slot_bytes % 16 != 0))
            throw CodegenError{Loc{}, "internal error: buffer of tensor " + std::to_string(t) + " at offset " +
                                          std::to_string(b.offset) + " (slot " + std::to_string(b.slot_bytes) +
                                          " bytes) is not 16-byte aligned"};
        return 16;
    }

    /** The value of type "t" at address variable "src" + "off" of tensor "tensor"'s buffer, read
     *  in place: each leaf a const typed pointer into the arena (a scalar leaf one typed load),
     *  no copy.  Leaves whose address is not a multiple of their element size (a tuple element
     *  after a bool one) and bool / key leaves are copied as load_value does. */
    Val view_value(const ir::Type &t, const std::string &src, int64_t off, int tensor) {
        if (t.is_tuple) {
            Val r;
            r.tuple = true;
            for (const auto &e : t.elems) {
                r.elems.push_back(view_value(e, src, off, tensor));
                off += value_bytes(e);
            }
            return r;
        }
        int64_t sz = leaf_size(t.dtype);
        if (t.dtype == DType::Bool || t.dtype == DType::Key || off % sz != 0 || buffer_align(tensor) % sz != 0)
            return load_value(t, src, off);
        Val r;
        r.name = fresh("val");
        r.dt = t.dtype;
        r.maxs = maxs_of(t);
        r.dims = dims_of(t);
        r.buffer = plan_.buffer_of(tensor);
        std::string ct = ctype(t.dtype), at = off ? src + " + " + std::to_string(off) : src;
        if (r.scalar()) line("const " + ct + " " + r.name + " = *(const " + ct + " *)(" + at + ");");
        else line("const " + ct + " *const " + r.name + " = (const " + ct + " *)(" + at + ");");
        return r;
    }

    /** "v" copied into a new local (a view whose bytes the statement is about to overwrite). */
    Val materialize(const Val &v) {
        if (v.tuple) {
            Val r = v;
            for (auto &e : r.elems) e = materialize(e);
            return r;
        }
        if (v.lazy) {
            if (v.scalar()) {  // one statement: "float val7 = a + b;"
                Val r = v;
                r.lazy = nullptr;
                r.buffer = -1;
                std::string e = v.lazy(Ix{"0", {}});
                r.name = fresh("val");
                line(std::string(ctype(v.dt)) + " " + r.name + " = " + e + ";");
                return r;
            }
            Val r = declare(v.dt, v.maxs, v.dims);
            for_nd(r, [&](const Ix &ix) { line(r.at(ix.flat) + " = " + v.lazy(ix) + ";"); });
            return r;
        }
        if (v.buffer < 0) return v;
        Val r = declare(v.dt, v.maxs, v.dims);
        for_elems(r, [&](const std::string &i) { line(r.at(i) + " = " + v.at(i) + ";"); });
        return r;
    }

    /** Whether buffers "a" and "b" share arena bytes. */
    bool overlap(int a, int b) const {
        if (a < 0 || b < 0) return false;
        const Buffer &x = plan_.buffers.at(a), &y = plan_.buffers.at(b);
        return x.bytes > 0 && y.bytes > 0 && x.offset < y.offset + y.bytes && y.offset < x.offset + x.bytes;
    }

    /** "v" with every leaf that views bytes of buffer "dst" (which the caller is about to write)
     *  copied to a local first. */
    Val unalias(const Val &v, int dst) {
        if (v.tuple) {
            Val r = v;
            for (auto &e : r.elems) e = unalias(e, dst);
            return r;
        }
        return overlap(v.buffer, dst) ? materialize(v) : v;
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
        if (t.dtype != DType::Bool && t.dtype != DType::Key && off % sz == 0) {
            // In place, through a typed pointer (the buffer is 16-byte aligned, buffer_align).
            std::string ct = ctype(t.dtype), d = fresh("out");
            line(ct + " *const " + d + " = (" + ct + " *)(" + dst + (off ? " + " + std::to_string(off) : "") + ");");
            if (v.scalar() && !v.lazy && n == 1) {
                line("*" + d + " = " + conv(v.name, v.dt, t.dtype) + ";");
            } else if (v.lazy) {  // an elementwise chain computed as it is stored (static shape)
                for_nd(v, [&](const Ix &ix) { line(d + "[" + ix.flat + "] = " + conv(v.lazy(ix), v.dt, t.dtype) + ";"); });
            } else {
                std::string k = fresh("k");
                line("for (long long " + k + " = 0; " + k + " < " + std::to_string(n) + "; ++" + k + ") " + d + "[" + k +
                     "] = " + conv(v.scalar() ? v.name : v.name + "[" + k + "]", v.dt, t.dtype) + ";");
            }
            return off + n * sz;
        }
        if (v.lazy) return store_value(t, materialize(v), dst, off, loc);
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

    /** Normalised axis (negative counts from the end); unsupported when out of range (sema
     *  rejects such axes). */
    static int64_t norm_axis(int64_t axis, int64_t rank, const Loc &loc) {
        if (axis < -rank || axis >= rank) unsupported(loc, "this axis");
        return axis < 0 ? axis + rank : axis;
    }

    /** sum / mean / max / min / argmax / logsumexp over all axes or over "axes", as value.cpp's
     *  reduce(): per output element, the members in increasing flat index order, accumulated
     *  sequentially in the compute dtype. */
    Val emit_reduce(const ir::Node &n, const Val &x1) {
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
        if (!whole) open("for (long long " + o + " = 0; " + o + " < " + r.numel() + "; ++" + o + ")");
        else open("");
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
                if (op == BuiltinOp::Mean) line(std::string("acc = acc / (") + (f ? "float" : "double") + ")(" + cnt + ");");
                line(out + " = " + conv("acc", dt, result) + ";");
                break;
            }
            std::string add = dt == DType::I32 ? "acc = trlg_chk_i32((long long)acc + " + xi(i) + ", TRLG_OP_SUM, " + site(n.loc) + ");"
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
            line(std::string("if (y != y || y ") + (op == BuiltinOp::ReduceMin ? "<" : ">") + " v) { v = y; best = " + i + "; }");
            close();
            if (op == BuiltinOp::Argmax) line(out + " = " + conv("best", DType::I32, result) + ";");
            else line(out + " = " + conv("v", dt, result) + ";  (void)best;");
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
            line("for (long long " + i + " = 0; " + i + " < " + cnt + "; ++" + i + ") s += " + (f ? "trl::exp_f32(" : "exp(") +
                 xi(i) + " - mx);");
            line(out + " = " + conv(std::string("mx + ") + (f ? "trl::log_f32(s)" : "log(s)"), dt, result) + ";");
            close();
            close();
            break;
        }
        default: unsupported(n.loc, "this reduction");
        }
        close();
        return r;
    }

    /** softmax / log_softmax over one axis, as value.cpp's softmax(): per fiber, the max, the
     *  sum of exp(x - max) and its log, sequentially in fiber order. */
    Val emit_softmax(const ir::Node &n, const Val &x0) {
        bool log = n.builtin == BuiltinOp::LogSoftmax;
        int64_t rank = static_cast<int64_t>(x0.dims.size());
        if (x0.tuple || x0.dt == DType::Key || rank == 0)
            unsupported(n.loc, std::string(log ? "log_softmax" : "softmax") + " of this value");
        int64_t axis = norm_axis(n.has_axes && !n.axes.empty() ? n.axes[0] : -1, rank, n.loc);
        DType result = n.type.dtype;
        DType dt = result == DType::F32 || result == DType::F64 ? result : DType::F32;
        bool f = dt == DType::F32;
        std::string ct = ctype(dt), ex = f ? "trl::exp_f32(" : "exp(";
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
        line("for (long long " + k + " = 0; " + k + " < " + len + "; ++" + k + ") s += " + ex + at(x.name, k) + " - m);");
        line(ct + " ls = " + (f ? "trl::log_f32(s)" : "log(s)") + ";");
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

    /** softmax / log_softmax along a static axis of length L <= 8 (2 logits, a few actions):
     *  the L elements of a row unrolled, so the loop over rows is straight-line code that the
     *  host compiler vectorizes across rows (a loop over k inside stops GCC 12).  The same
     *  operations in the same order as the general loop: m the running max from element 0, s
     *  the sum of exp(x - m) from 0, then (x - m) - log(s) or exp(x - m) / s. */
    Val emit_short_softmax(const Val &x, const Val &r, int64_t axis, bool log, DType dt, DType result) {
        bool f = dt == DType::F32;
        std::string ct = ctype(dt), ex = f ? "trl::exp_f32(" : "exp(";
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
        if (log) line("const " + ct + " ls = " + (f ? "trl::log_f32(s)" : "log(s)") + ";");
        for (int64_t k = 0; k < L; ++k) {
            std::string v = "x" + std::to_string(k);
            line(at(r.name, k) + " = " + conv(log ? "(" + v + " - m) - ls" : ex + v + " - m) / s", dt, result) + ";");
        }
        if (!one) close();
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

    /** Check "v" (a long long variable) as an index of an axis of length "size" (numpy: -size
     *  <= v < size), then make it non-negative; out of range is the interpreter's error (and
     *  reads element 0 so that a kernel that goes on stays inside its arrays). */
    void check_index(const std::string &v, const std::string &size, int64_t axis, const Loc &loc) {
        open("if (" + v + " < -(long long)(" + size + ") || " + v + " >= (long long)(" + size + "))");
        line(raise("TRLG_E_INDEX", loc, v, std::to_string(axis), size));
        line(v + " = 0;");
        close();
        line("if (" + v + " < 0) " + v + " += " + size + ";");
    }

    /** "e" is a read of one point of a tensor (no slices, not a load, not yet emitted) or a
     *  chain of tuple elements of one: sets the read "b", the type "t" of the part "e" selects
     *  and its byte offset "off" in the tensor's value. */
    bool point_read_part(const ir::Node &e, const ir::Node *&b, const ir::Type *&t, int64_t &off) {
        b = &e;
        std::vector<int64_t> path;
        while (b->kind == NodeKind::TupleGet) {
            if (memo_.count(b)) return false;
            path.push_back(b->int_attr);
            b = b->args.at(0).get();
        }
        if (b->kind != NodeKind::Read || memo_.count(b)) return false;
        const ir::Tensor &x = prog_.tensors.at(b->tensor);
        if (x.is_load || plan_.buffer_of(b->tensor) < 0) return false;
        for (const auto &ri : b->index)
            if (ri.is_slice) return false;
        t = &x.type;
        off = 0;
        for (size_t k = path.size(); k-- > 0;) {
            if (!t->is_tuple || path[k] < 0 || path[k] >= static_cast<int64_t>(t->elems.size())) return false;
            for (int64_t q = 0; q < path[k]; ++q) off += value_bytes(t->elems[q]);
            t = &t->elems[path[k]];
        }
        return true;
    }

    /** A tuple element of a point read (`x[p][1]`) loads that element only. */
    bool try_tuple_part(const ir::Node &n, Val &out) {
        const ir::Node *b = nullptr;
        const ir::Type *t = nullptr;
        int64_t off = 0;
        if (!point_read_part(n, b, t, off)) return false;
        reads.insert(b->tensor);
        std::vector<std::string> p;
        for (const auto &ri : b->index) p.push_back(index_c(*ri.point));
        std::string a = fresh("src");
        line("const char *" + a + " = " + address(b->tensor, p) + ";");
        out = view_value(*t, a, off, b->tensor);
        return true;
    }

    /** A view of "n" elements of dtype "dt" (f32 / f64) at byte "off" of the value of point read
     *  "read", read in place: the concatenated leaves a horizontal-fusion group reads
     *  (codegen/horizontal_fusion.h). */
    Val flat_view(const ir::Node &read, int64_t off, DType dt, int64_t n) {
        reads.insert(read.tensor);
        std::vector<std::string> p;
        for (const auto &ri : read.index) p.push_back(index_c(*ri.point));
        std::string a = fresh("src");
        line("const char *" + a + " = " + address(read.tensor, p) + ";");
        ir::Type t;
        t.dtype = dt;
        t.shape = {ir::Extent{n, nullptr}};
        return view_value(t, a, off, read.tensor);
    }

    /** A scalar element of a point read: `x[p][i, j]` (through tuple elements, `x[p][1][i]`)
     *  with one scalar index per axis of a static shape loads that element from the arena
     *  instead of the whole value (autodiff reads one element of a [B, T] adjoint per point).
     *  Checks the indices as emit_index does, in the same order; false (nothing emitted) when
     *  the pattern does not apply. */
    bool try_index_element(const ir::Node &n, Val &out) {
        const ir::Node *b = nullptr;
        const ir::Type *t = nullptr;
        int64_t off = 0;
        if (!point_read_part(*n.args.at(0), b, t, off)) return false;
        if (t->is_tuple || t->dtype == DType::Key || t->shape.empty() || n.sindex.size() != t->shape.size())
            return false;
        for (size_t d = 0; d < t->shape.size(); ++d)
            if (!t->shape[d].is_static() || n.sindex[d].kind != ir::SpatialIndex::Scalar) return false;
        for (const auto &si : n.sindex)
            if (si.value->type.is_tuple || si.value->type.dtype == DType::Key || !si.value->type.shape.empty())
                return false;
        reads.insert(b->tensor);
        std::string flat;
        for (size_t d = 0; d < n.sindex.size(); ++d) {
            Val v = emit_cast(emit(*n.sindex[d].value), DType::I32, n.loc);
            std::string f = fresh("ix"), size = std::to_string(t->shape[d].max_value);
            line("long long " + f + " = " + v.name + ";");
            check_index(f, size, static_cast<int64_t>(d), n.loc);
            flat = flat.empty() ? f : "(" + flat + ") * " + size + " + " + f;
        }
        std::vector<std::string> p;
        for (const auto &ri : b->index) p.push_back(index_c(*ri.point));
        std::string a = fresh("src");
        line("const char *" + a + " = " + address(b->tensor, p) + " + " + std::to_string(off) + " + (" +
             flat + ") * " + std::to_string(leaf_size(t->dtype)) + ";");
        ir::Type et;
        et.dtype = t->dtype;
        out = off % leaf_size(t->dtype) == 0 ? view_value(et, a, 0, b->tensor) : load_value(et, a);
        return true;
    }

    /** numpy indexing (eval.cpp's eval_index): ints and slices select, i32 arrays gather; with
     *  any array index the scalar indices are advanced too, and the broadcast advanced dims go
     *  where the advanced indices stand if they are adjacent, else first. */
    Val emit_index(const ir::Node &n) {
        if (Val r; try_index_element(n, r)) return r;
        Val x = emit(*n.args.at(0));
        if (x.tuple) unsupported(n.loc, "indexing a tuple");
        size_t rank = x.dims.size();
        if (n.sindex.size() > rank) unsupported(n.loc, "this indexing");
        // Per axis: kind 0 a range lo + j of length len, 1 a scalar index, 2 an index array.
        std::vector<int> kind(rank, 0);
        std::vector<std::string> lo(rank, "0"), len(rank), fixed(rank);
        std::vector<Val> arr(rank);
        bool any_array = false;
        for (size_t d = 0; d < rank; ++d) {
            std::string size = x.dims[d];
            len[d] = size;
            if (d >= n.sindex.size() || n.sindex[d].kind == ir::SpatialIndex::Full) continue;
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
                    line(name + " = trl::min_i64(trl::max_i64(" + name + ", 0LL), (long long)" + size + ");");
                };
                norm(si.lo, "0", l);
                norm(si.hi, size, h);
                std::string ln = fresh("len");
                line("const long long " + ln + " = trl::max_i64(0LL, " + h + " - " + l + ");");
                lo[d] = l;
                len[d] = ln;
                continue;
            }
            Val v = emit(*si.value);
            if (v.tuple || v.dt == DType::Key) unsupported(n.loc, "this index value");
            v = emit_cast(v, DType::I32, n.loc);
            if (v.scalar()) {
                std::string f = fresh("ix");
                line("long long " + f + " = " + v.name + ";");
                check_index(f, size, static_cast<int64_t>(d), n.loc);
                fixed[d] = f;
                kind[d] = 1;
                continue;
            }
            // An index array: checked and made non-negative in a copy, once per array, shape and
            // axis length (a later gather by the same indices, a minibatch's six columns, reuses
            // it: the first check has raised any error they hold).
            std::string key = v.name + "[";  // a reshape is the same array under other dims
            for (const auto &dim : v.dims) key += dim + ",";
            key += "] < " + size;
            if (auto it = checked_index_.find(key); it != checked_index_.end()) {
                arr[d] = it->second;
                kind[d] = 2;
                any_array = true;
                continue;
            }
            Val c = declare(DType::I32, v.maxs, v.dims);
            for_elems(c, [&](const std::string &i) {
                std::string k = fresh("ix");
                line("long long " + k + " = " + v.at(i) + ";");
                check_index(k, size, static_cast<int64_t>(d), n.loc);
                line(c.at(i) + " = (int32_t)" + k + ";");
            });
            arr[d] = c;
            checked_index_[key] = c;
            kind[d] = 2;
            any_array = true;
        }
        // The broadcast shape of the advanced indices (scalars are advanced of shape []).
        std::vector<size_t> adv;
        std::vector<std::string> bdims;
        std::vector<int64_t> bmaxs;
        if (any_array) {
            for (size_t d = 0; d < rank; ++d) {
                if (kind[d] == 0) continue;
                adv.push_back(d);
                if (kind[d] != 2) continue;
                const Val &a = arr[d];
                size_t r = std::max(bdims.size(), a.dims.size());
                std::vector<std::string> nd(r);
                std::vector<int64_t> nm(r);
                for (size_t q = 0; q < r; ++q) {
                    bool ha = q + a.dims.size() >= r, hb = q + bdims.size() >= r;
                    std::string da = ha ? a.dims[q + a.dims.size() - r] : "1", db = hb ? bdims[q + bdims.size() - r] : "1";
                    int64_t ma = ha ? a.maxs[q + a.dims.size() - r] : 1, mb = hb ? bmaxs[q + bmaxs.size() - r] : 1;
                    if (ma == 1 && da == "1") nd[q] = db, nm[q] = mb;
                    else if (mb == 1 && db == "1") nd[q] = da, nm[q] = ma;
                    else if (da == db) nd[q] = da, nm[q] = ma;
                    else unsupported(n.loc, "index arrays whose shapes broadcast only at run time");
                }
                bdims = nd;
                bmaxs = nm;
            }
        }
        bool adjacent = true;
        for (size_t k = 1; k < adv.size(); ++k) adjacent = adjacent && adv[k] == adv[k - 1] + 1;
        // Output dims: (0, d) = range axis d; (1, q) = dim q of the advanced shape.
        std::vector<std::pair<int, size_t>> odims;
        std::vector<int64_t> maxs;
        std::vector<std::string> dims;
        auto push_adv = [&] {
            for (size_t q = 0; q < bdims.size(); ++q) {
                odims.push_back({1, q});
                maxs.push_back(bmaxs[q]);
                dims.push_back(bdims[q]);
            }
        };
        if (!adv.empty() && !adjacent) push_adv();
        for (size_t d = 0; d < rank; ++d) {
            if (!adv.empty() && adjacent && d == adv[0]) push_adv();
            if (kind[d] == 0) {
                odims.push_back({0, d});
                maxs.push_back(x.maxs[d]);
                dims.push_back(len[d]);
            }
        }
        Val r = declare(x.dt, maxs, dims);
        auto xst = strides_c(x.dims), bst = strides_c(bdims);
        std::vector<std::string> idx;
        for (size_t k = 0; k < dims.size(); ++k) {
            std::string j = fresh("j");
            idx.push_back(j);
            open("for (long long " + j + " = 0; " + j + " < " + dims[k] + "; ++" + j + ")");
        }
        // Flat index of the advanced block (the loop coordinates of its output dims).
        std::string bflat;
        for (size_t k = 0; k < odims.size(); ++k)
            if (odims[k].first == 1) {
                std::string t = mul_c(idx[k], bst[odims[k].second]);
                bflat = bflat.empty() ? t : bflat + " + " + t;
            }
        if (bflat.empty()) bflat = "0";
        std::string src, dst;
        for (size_t d = 0; d < rank; ++d) {
            std::string c;
            if (kind[d] == 0) {
                size_t k = 0;
                while (!(odims[k].first == 0 && odims[k].second == d)) ++k;
                c = lo[d] == "0" ? idx[k] : lo[d] + " + " + idx[k];
            } else if (kind[d] == 1) {
                c = fixed[d];
            } else {
                c = arr[d].name + "[" + bcast_flat(arr[d].dims, arr[d].maxs, bdims, bflat) + "]";
            }
            src += (src.empty() ? "" : " + ") + mul_c(paren(c), xst[d]);
        }
        for (size_t k = 0; k < dims.size(); ++k) dst = dst.empty() ? idx[k] : "(" + dst + ") * " + dims[k] + " + " + idx[k];
        line(r.at(dst.empty() ? "0" : dst) + " = " + x.at(src.empty() ? "0" : src) + ";");
        for (size_t k = 0; k < dims.size(); ++k) close();
        return r;
    }

    /** The operand x of "t" when "t" is transpose(x) of a 2-D x (axes reversed), else null: a
     *  product can read transpose(x)[i][q] as x[q][i] in place (here, and trl_gemm_tn in
     *  plan_blas.cpp) instead of copying x transposed. */
    static const ir::Node *transpose_2d_source(const ir::Node &t) {
        if (t.kind != NodeKind::Builtin || t.builtin != BuiltinOp::Transpose) return nullptr;
        if (t.type.is_tuple || t.type.shape.size() != 2 || t.args.size() != 1) return nullptr;
        if (t.has_axes && !t.axes.empty() && !(t.axes.size() == 2 && t.axes[0] == 1 && t.axes[1] == 0))
            return nullptr;
        const ir::Node &x = *t.args[0];
        return x.type.is_tuple || x.type.shape.size() != 2 ? nullptr : &x;
    }

    /** matmul with numpy's rules (value.cpp's matmul): 1-D operands get a unit dim that the
     *  result drops, leading dims broadcast; per result element a sequential k loop. */
    Val emit_matmul(const ir::Node &n) {
        // A transposed first operand of a float product is read in place: a(i, q) = x[q][i].
        // (Not when the transpose was already computed: then it is read where it is.)
        const ir::Node *at_src = (n.type.dtype == DType::F32 || n.type.dtype == DType::F64) &&
                                         n.args.at(1)->type.shape.size() == 2 && !memo_.count(n.args.at(0).get())
                                     ? transpose_2d_source(*n.args.at(0))
                                     : nullptr;
        Val a0 = at_src ? emit(*at_src) : emit(*n.args.at(0)), b0 = emit(*n.args.at(1));
        if (at_src && a0.dims.size() == 2) std::swap(a0.dims[0], a0.dims[1]), std::swap(a0.maxs[0], a0.maxs[1]);
        else if (at_src) unsupported(n.loc, "matmul of these values");
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
                open("for (long long " + i + " = 0; " + i + " < " + M + "; ++" + i + ")");
                line("for (long long " + q + " = 0; " + q + " < " + K + "; ++" + q + ") " + tr.name + "[" + q + " * " + M +
                     " + " + i + "] = " + a.name + "[" + aix + "];");
                close();
                tix = q + " * " + M + " + " + i;
            }
            line("for (long long " + i + " = 0; " + i + " < " + mul_c(M, N) + "; ++" + i + ") " + rt.name + "[" +
                 base + " + " + i + "] = " + literal(dt, 0) + ";");
            open("for (long long " + q + " = 0; " + q + " < " + K + "; ++" + q + ")");
            open("for (long long " + j + " = 0; " + j + " < " + N + "; ++" + j + ")");
            line("const " + ct + " y = " + b.name + "[" + bo + " + " + q + " * " + N + " + " + j + "];");
            line(ct + " *const " + col + " = " + rt.name + " + " + base + " + " + j + " * " + M + ";");
            line("for (long long " + i + " = 0; " + i + " < " + M + "; ++" + i + ") " + col + "[" + i + "] = " + col +
                 "[" + i + "] + " + tr.name + "[" + tix + "] * y;");
            close();
            close();
            if (!one) {
                open("for (long long " + i + " = 0; " + i + " < " + M + "; ++" + i + ")");
                line("for (long long " + j + " = 0; " + j + " < " + N + "; ++" + j + ") " + r.name + "[(" + bi + " * " +
                     M + " + " + i + ") * " + N + " + " + j + "] = " + rt.name + "[" + j + " * " + M + " + " + i + "];");
                close();
            }
            close();
            return emit_cast(r, result);
        }
        open_batch();
        if (dt != DType::I32 && !r.scalar() && !dots) {
            // i-k-j: per row of the result, its N sums at once (unit stride in j, vectorizable).
            std::string row = fresh("row");
            open("for (long long " + i + " = 0; " + i + " < " + M + "; ++" + i + ")");
            line(ct + " *const " + row + " = " + r.name + " + (" + bi + " * " + M + " + " + i + ") * " + N + ";");
            line("for (long long " + j + " = 0; " + j + " < " + N + "; ++" + j + ") " + row + "[" + j + "] = " +
                 literal(dt, 0) + ";");
            open("for (long long " + q + " = 0; " + q + " < " + K + "; ++" + q + ")");
            line("const " + ct + " x = " + a.name + "[" + aix + "];");
            line("const " + ct + " *const y = " + b.name + " + " + bo + " + " + q + " * " + N + ";");
            line("for (long long " + j + " = 0; " + j + " < " + N + "; ++" + j + ") " + row + "[" + j + "] = " + row +
                 "[" + j + "] + x * y[" + j + "];");
            close();
            close();
            close();
            return emit_cast(r, result);
        }
        open("for (long long " + i + " = 0; " + i + " < " + M + "; ++" + i + ")");
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

    // ---- matrix products handed to BLAS (emit_program.cpp's BlasPlan) -------------------

    /** Make "n" evaluate to "v" from now on (a product computed by trl_gemm, read from the
     *  workspace): later emits of "n", and of nodes using it, reuse "v". */
    void bind(const ir::Node &n, const Val &v) { memo_[&n] = v; }

    /** Operand "k" of matmul node "n" converted to dtype "dt" and written row-major to the
     *  C pointer "dst" (numel elements of the operand's static shape). */
    void store_operand(const ir::Node &n, size_t k, DType dt, const std::string &dst) {
        Val v = emit_cast(emit_ew(*n.args.at(k)), dt, n.loc);
        if (v.tuple || v.scalar()) unsupported(n.loc, "this matmul operand");
        store_elems(v, dst);
    }
    /** The elements of "v" written row-major to the C pointer "dst": a lazy (elementwise) v
     *  computed as it is stored, a scalar as element 0. */
    void store_elems(const Val &v, const std::string &dst) {
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

    /** The value of node "n" written row-major to the typed C pointer "dst" (n's dtype; one
     *  element for a scalar): a value computed here that later kernels read (BlasSpill). */
    void store_node(const ir::Node &n, const std::string &dst) {
        Val v = emit(n);
        if (v.tuple) unsupported(n.loc, "storing this tuple value");
        store_elems(v, dst);
    }

    /** transpose(x, axes): the axes permuted (reversed without axes). */
    Val emit_transpose(const ir::Node &n) {
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
        auto xst = strides_c(x.dims), rst = strides_c(dims);
        for_elems(r, [&](const std::string &i) {
            std::string src;
            for (int64_t d = 0; d < rank; ++d)
                src += (src.empty() ? "" : " + ") + mul_c(coord_c(i, dims, rst, d), xst[axes[d]]);
            line(r.at(i) + " = " + x.at(src) + ";");
        });
        return r;
    }

    /** reshape: the same row-major elements under the node type's shape. */
    Val emit_reshape(const ir::Node &n) {
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

    /** gather(x, idx, axis) = numpy take: x's axis replaced by idx's dims. */
    Val emit_gather(const ir::Node &n) {
        Val x = emit(*n.args.at(0)), idx0 = emit(*n.args.at(1));
        if (x.tuple || idx0.tuple || idx0.dt == DType::Key || x.scalar()) unsupported(n.loc, "gather of these values");
        Val idx = emit_cast(idx0, DType::I32, n.loc);
        int64_t rank = static_cast<int64_t>(x.dims.size());
        int64_t axis = norm_axis(n.has_axes && !n.axes.empty() ? n.axes[0] : 0, rank, n.loc);
        std::vector<int64_t> maxs(x.maxs.begin(), x.maxs.begin() + axis);
        std::vector<std::string> dims(x.dims.begin(), x.dims.begin() + axis);
        maxs.insert(maxs.end(), idx.maxs.begin(), idx.maxs.end());
        dims.insert(dims.end(), idx.dims.begin(), idx.dims.end());
        maxs.insert(maxs.end(), x.maxs.begin() + axis + 1, x.maxs.end());
        dims.insert(dims.end(), x.dims.begin() + axis + 1, x.dims.end());
        Val r = declare(x.dt, maxs, dims);
        std::string outer = prod_c(x.dims, 0, axis), N = x.dims[axis], inner = prod_c(x.dims, axis + 1, x.dims.size());
        std::string o = fresh("o"), p = fresh("p"), in = fresh("in"), k = fresh("ix");
        open("for (long long " + o + " = 0; " + o + " < " + outer + "; ++" + o + ")");
        open("for (long long " + p + " = 0; " + p + " < " + idx.numel() + "; ++" + p + ")");
        line("long long " + k + " = " + idx.at(p) + ";");
        check_index(k, N, axis, n.loc);
        line("for (long long " + in + " = 0; " + in + " < " + inner + "; ++" + in + ") " +
             r.at("(" + o + " * " + idx.numel() + " + " + p + ") * " + inner + " + " + in) + " = " +
             x.name + "[(" + o + " * " + N + " + " + k + ") * " + inner + " + " + in + "];");
        close();
        close();
        return r;
    }

    /** cumsum(x, axis): running sums along the axis (the flattened array without one). */
    Val emit_cumsum(const ir::Node &n) {
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

    /** discounted_cumsum(x, gamma, axis): y[n-1] = x[n-1], y[k] = x[k] + g·y[k+1] along the
     *  axis, with g a scalar or an array broadcast to x (g at the position of x[k]). */
    Val emit_discounted_cumsum(const ir::Node &n) {
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
        std::string gk = g.static_one() || g.scalar() ? (g.scalar() ? g.name : g.name + "[0]") : operand_at(g, x, "at", n.loc);
        line(ct + " y = " + k + " == " + N + " - 1 ? " + x.name + "[at] : " + x.name + "[at] + " + gk + " * next;");
        line(r.name + "[at] = y;");
        line("next = y;");
        close();
        close();
        close();
        return emit_cast(r, result);
    }

    /** stack / concat along any axis (value.cpp's concat): per outer index, each operand's
     *  chunk in turn. */
    Val emit_concat(const ir::Node &n) {
        bool stack = n.builtin == BuiltinOp::Stack;
        DType dt = n.type.dtype;
        std::vector<Val> xs;
        for (const auto &a : n.args) xs.push_back(emit(*a));
        if (xs.empty()) unsupported(n.loc, stack ? "stack of no arrays" : "concat of no arrays");
        for (const auto &x : xs)
            if (x.tuple || (x.dt == DType::Key) != (dt == DType::Key)) unsupported(n.loc, stack ? "stack of these values" : "concat of these values");
        int64_t rank = static_cast<int64_t>(xs[0].dims.size()) + (stack ? 1 : 0);
        if (rank == 0) unsupported(n.loc, "concat of scalars");
        int64_t axis = norm_axis(n.has_axes && !n.axes.empty() ? n.axes[0] : 0, rank, n.loc);
        Val r = declare(dt, maxs_of(n.type), dims_of(n.type));
        std::string pos = fresh("pos"), o = fresh("o"), c = fresh("c");
        line("long long " + pos + " = 0;");
        open("for (long long " + o + " = 0; " + o + " < " + prod_c(xs[0].dims, 0, axis) + "; ++" + o + ")");
        for (const auto &x : xs) {
            std::string chunk = prod_c(x.dims, axis, x.dims.size());
            line("for (long long " + c + " = 0; " + c + " < " + chunk + "; ++" + c + ") " + r.name + "[" + pos + "++] = " +
                 conv(x.scalar() ? x.name : x.name + "[" + mul_c(o, chunk) + " + " + c + "]", x.dt, dt) + ";");
        }
        close();
        return r;
    }

    Val emit_builtin(const ir::Node &n) {
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

    /** The C expression of scalar literal "n": its value, or the run-time bound it is. */
    std::string const_scalar(const ir::Node &n) {
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

    Val emit_uncached(const ir::Node &n) {
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
            r.dt = result;
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
                line(r.name + " = trl::fold_in(" + r.name + ", " + conv(v.scalar() ? v.name : v.name + "[0]", v.dt, DType::I32) + ");");
            }
            return r;
        }
        case NodeKind::Extern: return emit_extern(n);
        case NodeKind::Grad: break;  // replaced by the autodiff pass before code generation
        }
        unsupported(n.loc, "this expression");
    }

    /** A trl_field initializer for emit field / saved array "v" named "key" (declares its shape
     *  array; a tuple declares the array of its element fields, dtype TRL_TUPLE). */
    std::string field_init(const std::string &key, const Val &v, const Loc &loc) {
        if (v.tuple) {
            std::vector<std::string> elems;
            for (const auto &e : v.elems) elems.push_back(field_init("", e, loc));
            std::string arr = fresh("elems");
            std::string init;
            for (const auto &e : elems) init += (init.empty() ? "" : ", ") + e;
            line("const trl_field " + arr + "[] = {" + (init.empty() ? "{\"\", TRL_F32, 0, nullptr, nullptr}" : init) + "};");
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
        return "{" + c_string(key) + ", " + dtype_macro(v.dt) + ", " + std::to_string(v.dims.size()) + ", " + shape +
               ", " + (v.scalar() ? "&" + v.name : v.name) + "}";
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
    std::map<const ir::Node *, int> uses_;  // count_uses
    /** "array[dims] < axis length" -> the array's checked, non-negative copy (emit_index). */
    std::map<std::string, Val> checked_index_;
    bool fuse_ = false;
};

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

/** Byte offsets of the loaded tensors (`load`) in the region after the arena tail, in
 *  Program::tensors order, 256-byte aligned; "total" gets the region's size. */
inline std::map<int, int64_t> load_offsets(const ir::Program &prog, int64_t *total) {
    std::map<int, int64_t> off;
    int64_t at = 0;
    for (size_t t = 0; t < prog.tensors.size(); ++t) {
        if (!prog.tensors[t].is_load) continue;
        off[static_cast<int>(t)] = at;
        at += (value_bytes(prog.tensors[t].type) + 255) / 256 * 256;
    }
    if (total) *total = at;
    return off;
}

/** The leaves (arrays) of a loaded tensor's type, in order. */
inline void type_leaves(const ir::Type &t, std::vector<const ir::Type *> &out) {
    if (!t.is_tuple) {
        out.push_back(&t);
        return;
    }
    for (const auto &e : t.elems) type_leaves(e, out);
}

/** What every generated file defines after its includes and kArenaBytes: kTrlFiles (the
 *  source paths that run-time error messages name), then runtime/trl_gen.h (the helpers of
 *  generated code and its run-time errors: messages of interp/value.cpp and eval.cpp, reported
 *  as "path:line:col: error: message" and exit 1), and trlg_start, which reads the loaded
 *  tensors into the region after the arena tail. */
inline std::string prelude(const ir::Program &prog, const SourceManager *sm) {
    std::string s = "// ---- the source files that run-time errors name; the helpers and checks of generated\n"
                    "// code (runtime/trl_gen.h) read kArenaBytes and kTrlFiles\n";
    s += "static const char *const kTrlFiles[] = {";
    if (!sm || sm->size() == 0) s += "\"<input>\"";
    for (int f = 0; sm && f < static_cast<int>(sm->size()); ++f) s += std::string(f ? ", " : "") + c_string(sm->file(f).path);
    s += "};\n#include \"trl_gen.h\"\n";
    // Loaded tensors.
    int64_t total = 0;
    auto offs = load_offsets(prog, &total);
    s += "\n// ---- loaded tensors: read at start into the region after the arena tail\n";
    s += "static const size_t kLoadBase = kArenaBytes + TRL_ARENA_TAIL;\n";
    s += "static const size_t kLoadBytes = " + std::to_string(total) + ";\n";
    s += "static const size_t kHostBytes = kLoadBase + kLoadBytes;  // the host mirror\n";
    s += "static void trlg_start(trl_ctx *ctx, char *arena, char *host) {\n";
    for (const auto &[t, off] : offs) {
        const ir::Tensor &x = prog.tensors[t];
        std::vector<const ir::Type *> leaves;
        type_leaves(x.type, leaves);
        std::string fields;
        int64_t at = off;
        s += "    {  // " + x.name + "\n";
        for (size_t k = 0; k < leaves.size(); ++k) {
            const ir::Type &lt = *leaves[k];
            std::string shape = "nullptr";
            if (!lt.shape.empty()) {
                shape = "shape" + std::to_string(k);
                std::string d;
                for (const auto &e : lt.shape) d += (d.empty() ? "" : ", ") + std::to_string(e.max_value) + "LL";
                s += "        static const long long " + shape + "[] = {" + d + "};\n";
            }
            int code = dtype_code(lt.dtype);
            fields += std::string(fields.empty() ? "" : ", ") + "{\"\", " + (code < 0 ? "-1" : dtype_macro(lt.dtype)) + ", " +
                      std::to_string(lt.shape.size()) + ", " + shape + ", host + kLoadBase + " + std::to_string(at) + "}";
            at += value_bytes(lt);
        }
        s += "        const trl_field arrays[] = {" + fields + "};\n";
        s += "        TRL_CHECK(trl_load_arrays(ctx, " + c_string(x.load_path) + ", " + c_string(x.name) + ", " +
             (x.type.is_tuple ? "1" : "0") + ", arrays, " + std::to_string(leaves.size()) + "));\n";
        s += "    }\n";
    }
    s += "    if (kLoadBytes > 0) TRL_CHECK(trl_to_device(ctx, arena + kLoadBase, host + kLoadBase, kLoadBytes));\n";
    s += "    (void)ctx;\n    (void)arena;\n    (void)host;\n}\n";
    return s;
}

}  // namespace trlc::codegen

#include "codegen/extern_call.h"
#include "codegen/extra_builtins.h"
