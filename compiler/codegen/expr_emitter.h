#pragma once
// expr_emitter — the C++ of one expression DAG inside a kernel or host function, for
// emit_program.cpp, horizontal_fusion.cpp and plan_blas.cpp.
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
//
// This header holds the class ExprEmitter (its members, the doc comment of every method, the
// short ones inline) and the small free helpers.  The method bodies are in one file per
// family: expr_emitter.cpp (emit, fusion of elementwise chains, lines and locals, shapes and
// broadcasting, loops), expr_elementwise.cpp (unary, binary, where, cast), expr_memory.cpp
// (arena addresses, reads, views, loads, stores, aliasing), expr_reduce.cpp (reductions,
// softmax, categorical), expr_index.cpp (indexing, gather), expr_matmul.cpp (matmul and the
// BLAS binding helpers), expr_shape.cpp (transpose, reshape, cumsum, discounted_cumsum,
// concat), expr_builtin.cpp (the dispatch: emit_uncached, emit_builtin, field_init),
// extra_builtins.cpp, extern_call.cpp; prelude() is prelude.cpp.
#include <algorithm>
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
#include "codegen/row_split.h"
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

/** Bytes of a value of static type "t" in a buffer's slot: its leaves in order, each padded to
 *  a multiple of 4 bytes (bool leaves are the only ones it changes), so that an i32 or f32 leaf
 *  after a bool one starts 4-byte aligned (the slot is 16-byte aligned, buffer_align) and is
 *  read and written with typed loads and stores (a packed tuple's i32 after two bools was a
 *  memcpy: byte loads on the GPU), while f32 leaves stay contiguous (horizontal fusion runs over
 *  consecutive ones).  An f64 leaf after an odd number of f32 elements stays unaligned and is
 *  copied bytewise.  The memory plan's slots (ir::slot_bytes: each leaf rounded to 16) have room. */
inline int64_t value_bytes(const ir::Type &t) {
    if (t.is_tuple) {
        int64_t n = 0;
        for (const auto &e : t.elems) n += value_bytes(e);
        return n;
    }
    return (static_numel(t) * leaf_size(t.dtype) + 3) / 4 * 4;
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
        if (s.empty())
            s = term;
        else if (term[0] == '-')
            s += " - " + term.substr(1);
        else
            s += " + " + term;
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

inline std::string c_string(const std::string &s) {
    std::string r = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') r += '\\';
        if (c == '\n') {
            r += "\\n";
            continue;
        }
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
inline std::map<int, int64_t> load_offsets(const ir::Program &prog, int64_t *total = nullptr) {
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

/** Locals larger than this (bytes, static maximum size) live in a per-thread heap buffer on
 *  the host (TRLG_LARGE_LOCAL in kernels, TRLG_HEAP_LOCAL in host functions), where a few
 *  [2048, 256] f32 intermediates (2 MiB each) overflow an 8 MiB thread stack. */
constexpr int64_t kStackArrayBytes = 64 * 1024;

/** The private arrays (registers / local memory) a device kernel's thread may hold, in bytes
 *  of static maximum size; its other arrays live in its frame (KernelFrame).  CUDA's limit is
 *  512 KiB of local memory per thread, and the driver reserves frame x resident threads (~270k
 *  on an H100), so a 900 KB stack frame cannot launch (issue 18 point 2); private arrays are
 *  laid out by the hardware with the threads of a warp interleaved (coalesced), which frames
 *  in global memory are not, so small ones stay private. */
constexpr int64_t kDevicePrivateBytes = 4 * 1024;

/** The frame of a device kernel's thread (issue 18 point 2): the arrays beyond
 *  kDevicePrivateBytes, at static offsets in a region of global memory of `max` bytes per
 *  thread (`TRLG_FRAME(max)` at the kernel's start; TRLG_LOCAL(T, name, n, offset)).  On the
 *  host the same source declares them as stack (or heap) arrays.  Offsets follow the scopes of
 *  the kernel: a block's locals are released at its end (ExprEmitter::open / close), so the
 *  frame is the deepest nesting's sum, not the kernel's.
 *  Example: a one-point kernel with float[4096] and float[256] locals: both private would be a
 *  17 KB stack; here the first gets `TRLG_LOCAL(float, val9, 4096, 0)`, frame 16 KiB in global
 *  memory, and the [256] stays `float val4[256]`. */
/** The threads of the device grid of a launch of "points" points: TRL_GRID_THREADS of
 *  runtime/trl_rt.h (blocks of the points rounded up to a warp below 256, of 256 above, at most
 *  256 blocks), which indexes the frames; the unit test RuntimeHost.DeviceGridThreadsMatch
 *  checks that the two agree. */
inline int64_t device_grid_threads(int64_t points) {
    const int64_t block = points < 256 ? (points + 31) / 32 * 32 : 256;
    return std::min<int64_t>((points + block - 1) / block, 256) * block;
}

/** The most threads of a row-split kernel's block on the device: TRL_ROWS_MAX_BLOCK of
 *  runtime/trl_rt.h (trl_rows_block), for which its frames are sized. */
constexpr int64_t kDeviceRowsMaxBlock = 256;

struct KernelFrame {
    int64_t at = 0;                  // next free offset (bytes)
    int64_t max = 0;                 // the frame's size so far (bytes, a multiple of 16)
    int64_t priv = 0;                // private array bytes in scope
    void reset() { at = priv = 0; }  // a new scope at the kernel's top (a fused member)
};

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
    std::vector<int64_t> maxs;      // static maximum shape
    std::vector<std::string> dims;  // actual shape (C expressions)
    bool tuple = false;
    std::vector<Val> elems;
    /** >= 0: a view of the arena (operands read in place): "name" is a const typed pointer into
     *  the bytes of this memory-plan buffer (a scalar: a value loaded from them). */
    int buffer = -1;
    /** "name" is a const typed pointer into stored bytes (the arena or a loaded tensor; view_value),
     *  never a local array: indexing its leading axes can give a view again (emit_index). */
    bool view = false;
    /** Set: an elementwise value that is not stored (fused into its single consumer's loop):
     *  lazy(ix) writes the lines computing element ix of this value (ix indexes its own shape)
     *  and returns a C expression of it, to be used once.  Only ExprEmitter::emit_ew returns
     *  such values; emit() materializes them. */
    std::function<std::string(const Ix &)> lazy;
    /** Only rows [trl_r0, trl_r1) of the leading axis are computed (a split value of a row-split
     *  kernel, codegen/row_split.h): loops over it (for_nd, for_elems, stores) run over them. */
    bool split = false;
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

/** Thrown when a row-split kernel (codegen/row_split.h) meets a value the emitter cannot keep
 *  by rows where the plan said it would: the caller emits the kernel for one thread instead. */
struct RowSplitUnsupported {
    std::string why;
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

    /** Emit a row-split kernel (codegen/row_split.h): the nodes of "rs" compute rows
     *  [trl_r0, trl_r1) only, stores of other values are thread 0's (`if (trl_r0 == 0)`).  Null:
     *  the whole kernel on one thread.  Emitting then throws RowSplitUnsupported where a split
     *  value would reach a consumer that needs all of its rows. */
    void set_row_split(const RowSplit *rs) { row_split_ = saved_row_split_ = rs; }
    bool row_mode() const { return row_split_ != nullptr; }
    /** Where a row-split kernel publishes (codegen/row_split.h): a C expression of the region's
     *  start ("ws + 412160"), and the bytes its publications take so far (the kernel's; the
     *  caller sizes the region by the largest).  Empty / null: nothing is published, and a
     *  planned publication throws RowSplitUnsupported as a split value read whole does. */
    std::string publish_base;
    int64_t *publish_bytes = nullptr;
    /** In a row-split kernel whose value overwrites bytes it read (buffer "dst_buffer"), a
     *  barrier of the launch's threads: every thread has read them (its value is in locals by
     *  now: materialized, unaliased) before any stores.  Nothing otherwise. */
    void row_barrier_before_store(int dst_buffer) {
        if (!row_mode()) return;
        for (int t : reads)
            if (overlap(plan_.buffer_of(t), dst_buffer)) {
                line("TRL_ROW_BARRIER();  // every thread has read the bytes the store overwrites");
                return;
            }
    }
    /** The nodes memoized so far (bound products and operands: the leaves of a row split). */
    std::set<const ir::Node *> memoized() const {
        std::set<const ir::Node *> s;
        for (const auto &m : memo_) s.insert(m.first);
        return s;
    }

    /** The value of "n", stored (a local, a view of the arena, or a scalar). */
    Val emit(const ir::Node &n);

    /** The value of "n" for an elementwise consumer: possibly lazy (fused into the consumer's
     *  loop) when "n" is an elementwise node with one use (count_uses). */
    Val emit_ew(const ir::Node &n);

    /** Fusion of elementwise chains in the expression DAG below "root": counts each node's
     *  uses; an elementwise node (unary, binary, cast) with one use is then computed inside its
     *  consumer's loop instead of into a local array of its own (tanh(x @ W + b) stores
     *  tanh(acc + b) as it goes, with no [rows, N] intermediates).  Without this call nothing
     *  is fused. */
    void count_uses(const ir::Node &root);
    /** Node "n" is computed into an array of its own even with one use (a value that is also
     *  stored for later kernels: computed once, not once fused and once for the store). */
    void keep_stored(const ir::Node &n) { uses_[&n] += 2; }
    /** Whether value "r" of node "n" may stay lazy (see count_uses): one use, an array, and
     *  float arithmetic only (operands and result f32 / f64, or a bool result), which raises no
     *  run-time error, so computing it element by element inside the consumer cannot change
     *  which error is reported first. */
    bool lazy_ok(const ir::Node &n, const Val &r) const;

    /** One line at the current indent.  A loop header ("for (...") is preceded by TRLG_SEQ
     *  (#pragma unroll 1 in device code, nothing on the host) unless its trip count is a literal <= 4:
     *  these loops run sequentially in one thread, and NVVM's optimizer, left to unroll the
     *  hundreds of static loops (64 to 4096 iterations, byte-wise arena copies) of a training
     *  program's kernels, spent ~15 min of CPU on one sample (see test/lit/cuda). */
    void line(const std::string &s);
    /** Whether "s" is a loop header "for (init; v < BOUND; ...)" whose BOUND is not a literal
     *  <= 4 (short literal loops stay unrollable: cheap to compile, faster on the device). */
    static bool sequential_loop(const std::string &s);
    void open(const std::string &s) {
        line(s.empty() ? "{" : s + " {");
        ++indent_;
        if (frame) scopes_.push_back({frame->at, frame->priv});
    }
    void close() {
        --indent_;
        line("}");
        if (frame && !scopes_.empty()) {
            frame->at = scopes_.back().first, frame->priv = scopes_.back().second;
            scopes_.pop_back();
        }
    }
    /** Device kernel code: arrays beyond kDevicePrivateBytes go to this frame.  Null: host code
     *  (emits, saves, run_program), whose arrays are host arrays. */
    KernelFrame *frame = nullptr;
    /** The declaration of a local array "name" of n elements of C type "ct" (elem_bytes each):
     *  private, in the kernel's frame, or on the heap (see KernelFrame, kStackArrayBytes). */
    std::string local_array(const std::string &ct, const std::string &name, int64_t n, int64_t elem_bytes);
    std::string fresh(const char *p) { return p + std::to_string(counter_++); }

    /** A new local of "dt" with the shape of node type "t" (dims from the type's extents). */
    Val declare(DType dt, const std::vector<int64_t> &maxs, const std::vector<std::string> &dims);

    static std::vector<int64_t> maxs_of(const ir::Type &t);
    static std::vector<std::string> dims_of(const ir::Type &t);

    // ---- shapes as C expressions: literals fold, dynamic lengths stay names --------------------

    static bool static_dim(const std::string &d) {
        return !d.empty() && d.find_first_not_of("0123456789") == std::string::npos;
    }
    /** a · b, folded when both are literals or one is 0 / 1. */
    static std::string mul_c(const std::string &a, const std::string &b);
    /** "e" in parentheses unless it is a name or a literal. */
    static std::string paren(const std::string &e);
    /** Whether "e" is a name, a literal or a name[index] (one subscript, no call): used as an
     *  operand without parentheses, and cheap to repeat. */
    static bool simple_operand(const std::string &e);
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
                                  const std::vector<std::string> &rdims, const std::string &i);

    /** Index of operand "a" at result element "i" of a result with shape "r" (broadcasting). */
    std::string operand_at(const Val &a, const Val &r, const std::string &i, const Loc &);

    /** Result shape of an elementwise op over "ops" with node type "t". */
    std::pair<std::vector<int64_t>, std::vector<std::string>> ew_shape(const std::vector<const Val *> &ops,
                                                                       const ir::Type &t);

    /** Loop over the elements of "r": calls body(i) inside. */
    void for_elems(const Val &r, const std::function<void(const std::string &)> &body);

    /** Loop nest over the axes of "r" (outer to inner, row-major): calls body(ix) inside with
     *  the coordinates and the flat index.  The innermost loop runs over the last axis, so
     *  elementwise and broadcast accesses are unit-stride or invariant in it (vectorizable). */
    void for_nd(const Val &r, const std::function<void(const Ix &)> &body);

    /** The C expression of operand "a" at element "ix" of result shape "r" (numpy broadcasting;
     *  a lazy "a" has r's shape and computes its element here). */
    std::string elem(const Val &a, const Val &r, const Ix &ix);

    /** A lazy operand used at another shape than its consumer's (broadcast) is stored first,
     *  so that it is computed once per element. */
    Val fit(const Val &a, const Val &r) { return a.lazy && a.dims != r.dims ? materialize(a) : a; }

    /** The source position arguments of a run-time check at "loc" ("arena, file, line, col"):
     *  a failing check reports "path:line:col: error: message" as the interpreter does. */
    std::string site(const Loc &loc) const {
        return error_base + ", " + std::to_string(loc.file) + ", " + std::to_string(loc.line) + ", " +
               std::to_string(loc.col);
    }
    /** The first argument of run-time checks: the arena, whose tail holds the error record; in
     *  an emit's kernel "trlg_earena", which puts a point's error in its staged record
     *  (runtime/trl_emit_stage.h). */
    std::string error_base = "arena";
    /** A statement raising run-time error "kind" (TRLG_E_*) with values a, b, c at "loc". */
    std::string raise(const char *kind, const Loc &loc, const std::string &a = "0", const std::string &b = "0",
                      const std::string &c = "0") const {
        return std::string("trlg_raise(") + site(loc) + ", " + kind + ", (double)(" + a + "), (double)(" + b +
               "), (double)(" + c + "));";
    }

    /** One element of unary "op" on "x" of dtype "dt": a call of the kernel that ir/ops.def
     *  names (runtime/trl_ops.h, trl_math.h or libm; the interpreter calls the same function).
     *  On i32 the kernel computes in long long; a checked row's result must fit i32. */
    std::string unary_expr(UnaryOp op, DType dt, const std::string &x, const Loc &loc);

    static bool is_cmp(BinaryOp op) {
        return op == BinaryOp::Lt || op == BinaryOp::Le || op == BinaryOp::Gt || op == BinaryOp::Ge ||
               op == BinaryOp::Eq || op == BinaryOp::Ne;
    }

    std::string binary_expr(BinaryOp op, DType dt, const std::string &a, const std::string &b, const Loc &loc);

    /** a op b elementwise; lazy (count_uses) when "node" is given and has one use. */
    Val emit_binary(BinaryOp op, const Val &a0, const Val &b0, DType result, const ir::Type &t, const Loc &loc,
                    const ir::Node *node = nullptr);

    Val emit_where(const Val &c, const Val &a, const Val &b, DType result, const ir::Type &t, const Loc &loc,
                   const ir::Node *node = nullptr);

    /** "x" converted to "to" as interp::cast does; with a valid "loc", a float → i32 conversion
     *  of NaN or of a value outside the i32 range is the interpreter's run-time error. */
    Val emit_cast(const Val &x, DType to, const Loc &loc = Loc{});

    /** The arena address expression of tensor "t" at point coordinates "p" (C expressions). */
    std::string address(int t, const std::vector<std::string> &p);

    /** Load leaves of static type "t" from address variable "src" + byte offset into "dst"
     *  starting at element "at" (C expression). Returns bytes consumed.  "aligned": src + off
     *  is aligned to the leaf size (a buffer's slot, buffer_align), so each element is one
     *  typed load; otherwise a memcpy of its bytes (a packed tuple's leaf), which nvcc makes
     *  byte loads. */
    int64_t load_leaves(const ir::Type &t, const std::string &src, int64_t off, const Val &dst, const std::string &at,
                        bool aligned = false);

    Val emit_read(const ir::Node &n);

    /** The alignment (bytes) of every address of tensor "t"'s buffer: the memory plan puts
     *  buffers at multiples of 256 bytes and pads slots to 16 (memory/arena.cpp, memplan.h) in an
     *  arena allocated 256-byte aligned, so 16; checked here, since typed pointers rely on it. */
    /** emit_read of a slice along one position whose points are consecutive bytes: a view. */
    bool slice_view(const ir::Node &n, const ir::Tensor &x, std::vector<std::string> p,
                    const std::vector<size_t> &slice_pos, const std::vector<std::string> &los,
                    const std::vector<int64_t> &maxs, const std::vector<std::string> &dims, Val &out);
    int64_t buffer_align(int t) const;

    /** The value of type "t" at address variable "src" + "off" of tensor "tensor"'s buffer, read
     *  in place: each leaf a const typed pointer into the arena (a scalar leaf one typed load),
     *  no copy.  Leaves whose address is not a multiple of their element size (a tuple element
     *  after a bool one) and bool / key leaves are copied as load_value does. */
    Val view_value(const ir::Type &t, const std::string &src, int64_t off, int tensor);

    /** "v" copied into a new local (a view whose bytes the statement is about to overwrite). */
    Val materialize(const Val &v);

    /** Whether buffers "a" and "b" share arena bytes. */
    bool overlap(int a, int b) const;

    /** "v" with every leaf that views bytes of buffer "dst" (which the caller is about to write)
     *  copied to a local first. */
    Val unalias(const Val &v, int dst);

    Val load_value(const ir::Type &t, const std::string &src, int64_t off = 0);

    /** Store "v" (converted to the leaf dtypes of "t") at address expression "dst" + off. */
    int64_t store_value(const ir::Type &t, const Val &v, const std::string &dst, int64_t off, const Loc &loc);

    /** Normalised axis (negative counts from the end); unsupported when out of range (sema
     *  rejects such axes). */
    static int64_t norm_axis(int64_t axis, int64_t rank, const Loc &loc);

    /** sum / mean / max / min / argmax / logsumexp over all axes or over "axes", as value.cpp's
     *  reduce(): per output element, the members in increasing flat index order, accumulated
     *  sequentially in the compute dtype. */
    Val emit_reduce(const ir::Node &n, const Val &x1);

    /** softmax / log_softmax over one axis, as value.cpp's softmax(): per fiber, the max, the
     *  sum of exp(x - max) and its log, sequentially in fiber order. */
    Val emit_softmax(const ir::Node &n, const Val &x0);

    /** softmax / log_softmax along a static axis of length L <= 8 (2 logits, a few actions):
     *  the L elements of a row unrolled, so the loop over rows is straight-line code that the
     *  host compiler vectorizes across rows (a loop over k inside stops GCC 12).  The same
     *  operations in the same order as the general loop: m the running max from element 0, s
     *  the sum of exp(x - m) from 0, then (x - m) - log(s) or exp(x - m) / s. */
    Val emit_short_softmax(const Val &x, const Val &r, int64_t axis, bool log, DType dt, DType result);

    /** categorical(key, logits): one i32 sample per row of the last axis (trl::categorical). */
    Val emit_categorical(const ir::Node &n, const Val &key, const Val &logits);

    /** Check "v" (a long long variable) as an index of an axis of length "size" (numpy: -size
     *  <= v < size), then make it non-negative; out of range is the interpreter's error (and
     *  reads element 0 so that a kernel that goes on stays inside its arrays). */
    void check_index(const std::string &v, const std::string &size, int64_t axis, const Loc &loc);

    /** "e" is a read of one point of a tensor (no slices, not a load, not yet emitted) or a
     *  chain of tuple elements of one: sets the read "b", the type "t" of the part "e" selects
     *  and its byte offset "off" in the tensor's value. */
    bool point_read_part(const ir::Node &e, const ir::Node *&b, const ir::Type *&t, int64_t &off);

    /** A tuple element of a point read (`x[p][1]`) loads that element only. */
    bool try_tuple_part(const ir::Node &n, Val &out);

    /** A view of "n" elements of dtype "dt" (f32 / f64) at byte "off" of the value of point read
     *  "read", read in place: the concatenated leaves a horizontal-fusion group reads
     *  (codegen/horizontal_fusion.h). */
    Val flat_view(const ir::Node &read, int64_t off, DType dt, int64_t n);

    /** A scalar element of a point read: `x[p][i, j]` (through tuple elements, `x[p][1][i]`)
     *  with one scalar index per axis of a static shape loads that element from the arena
     *  instead of the whole value (autodiff reads one element of a [B, T] adjoint per point).
     *  Checks the indices as emit_index does, in the same order; false (nothing emitted) when
     *  the pattern does not apply. */
    bool try_index_element(const ir::Node &n, Val &out);

    /** numpy indexing (eval.cpp's eval_index): ints and slices select, i32 arrays gather; with
     *  any array index the scalar indices are advanced too, and the broadcast advanced dims go
     *  where the advanced indices stand if they are adjacent, else first. */
    /** emit_index of "x" (a view) when "n" fixes only leading axes: a view of the rest. */
    bool try_index_view(const ir::Node &n, const Val &x, Val &out);
    Val emit_index(const ir::Node &n);

    /** The operand x of "t" when "t" is transpose(x) of a 2-D x (axes reversed), else null: a
     *  product can read transpose(x)[i][q] as x[q][i] in place (here, and trl_gemm_tn in
     *  plan_blas.cpp) instead of copying x transposed. */
    static const ir::Node *transpose_2d_source(const ir::Node &t);

    /** matmul with numpy's rules (value.cpp's matmul): 1-D operands get a unit dim that the
     *  result drops, leading dims broadcast; per result element a sequential k loop. */
    Val emit_matmul(const ir::Node &n);

    // ---- matrix products handed to BLAS (emit_program.cpp's BlasPlan) -------------------

    /** Make "n" evaluate to "v" from now on (a product computed by trl_gemm, read from the
     *  workspace): later emits of "n", and of nodes using it, reuse "v". */
    void bind(const ir::Node &n, const Val &v) { memo_[&n] = v; }

    /** Operand "k" of matmul node "n" converted to dtype "dt" and written row-major to the
     *  C pointer "dst" (numel elements of the operand's static shape). */
    void store_operand(const ir::Node &n, size_t k, DType dt, const std::string &dst);
    /** The elements of "v" written row-major to the C pointer "dst": a lazy (elementwise) v
     *  computed as it is stored, a scalar as element 0. */
    void store_elems(const Val &v, const std::string &dst);

    /** The value of node "n" written row-major to the typed C pointer "dst" (n's dtype; one
     *  element for a scalar): a value computed here that later kernels read (BlasSpill). */
    void store_node(const ir::Node &n, const std::string &dst);

    /** transpose(x, axes): the axes permuted (reversed without axes). */
    Val emit_transpose(const ir::Node &n);

    /** reshape: the same row-major elements under the node type's shape. */
    Val emit_reshape(const ir::Node &n);

    /** gather(x, idx, axis) = numpy take: x's axis replaced by idx's dims. */
    Val emit_gather(const ir::Node &n);

    /** gather(r[lo:hi], idx) along the slice of a read with one static-length slice (a replay
     *  window, `gather(ob[t-N+1:t+1], idx[t])`): each index reads its point of r in place, so
     *  the window is never copied (N points per use) — the same values and index checks as
     *  emit_gather over emit_read's copy.  False (nothing emitted) when "n" is not that form. */
    bool gather_from_slice(const ir::Node &n, Val *out);

    /** cumsum(x, axis): running sums along the axis (the flattened array without one). */
    Val emit_cumsum(const ir::Node &n);

    /** discounted_cumsum(x, gamma, axis): y[n-1] = x[n-1], y[k] = x[k] + g·y[k+1] along the
     *  axis, with g a scalar or an array broadcast to x (g at the position of x[k]). */
    Val emit_discounted_cumsum(const ir::Node &n);

    /** stack / concat along any axis (value.cpp's concat): per outer index, each operand's
     *  chunk in turn. */
    Val emit_concat(const ir::Node &n);

    Val emit_builtin(const ir::Node &n);

    /** The C expression of scalar literal "n": its value, or the run-time bound it is. */
    std::string const_scalar(const ir::Node &n);

    Val emit_uncached(const ir::Node &n);

    /** A trl_field initializer for emit field / saved array "v" named "key" (declares its shape
     *  array; a tuple declares the array of its element fields, dtype TRL_TUPLE). */
    std::string field_init(const std::string &key, const Val &v, const Loc &loc);

    /** Builtins added after the core set (codegen/extra_builtins.cpp). */
    Val emit_extra_builtin(const ir::Node &n);
    /** A call of an `extern` function (codegen/extern_call.cpp). */
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
    const RowSplit *row_split_ = nullptr;              // set_row_split (null inside a thread-0 store)
    const RowSplit *saved_row_split_ = nullptr;        // set_row_split
    bool cur_split_ = false;                           // the node being emitted is a split value
    std::vector<std::pair<int64_t, int64_t>> scopes_;  // frame->at, frame->priv at each open()
    /** After emitting node "n" as "v": a split value only where the plan says so, and read only
     *  by split consumers (or a stored root tuple). */
    void check_split(const ir::Node &n, const Val &v);
    /** The published copy of split value "v" (row_split.h): this thread's rows copied into the
     *  publish region, then a barrier of the launch's threads; a whole value (split false). */
    Val publish(const Val &v);
};

/** What every generated file defines after its includes and kArenaBytes: kTrlFiles (the
 *  source paths that run-time error messages name), then runtime/trl_gen.h (the helpers of
 *  generated code and its run-time errors: messages of interp/value.cpp and eval.cpp, reported
 *  as "path:line:col: error: message" and exit 1), and trlg_start, which reads the loaded
 *  tensors into the region after the arena tail. */
std::string prelude(const ir::Program &prog, const SourceManager *sm);

}  // namespace trlc::codegen
