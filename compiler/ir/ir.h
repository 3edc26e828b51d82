#pragma once
// ir — the checked, typed, fn-inlined program that every later stage reads.
//
// Sema (compiler/sema) produces a `Program` from the AST.  Meaning:
//
// * A `Dim` d ranges over [0, bound(d)); every bound is a known integer.
// * A `Tensor` has an ordered list of domain dims and a value type (dtype and
//   spatial shape, or a tuple of such).  It is defined by `Equation`s.  An
//   equation binds *variables* (dims named in its left-hand pattern), each over
//   [0, bound), restricted by its guard; its pattern maps a variable point to
//   the tensor point it defines: position k is `var`, `var + c` or a constant.
//   Where two equations' points overlap, the more specific pattern wins
//   (constant > shift > plain dim, per position); the PDG builder computes the
//   effective domains with isl and reports what is still ambiguous.
// * The body of an equation is an expression tree (`Node`) evaluated at one
//   variable point.  `Read` nodes read other tensors' points through affine
//   index expressions (with min/max clamps and slices).  Nodes are immutable
//   and may be shared (a DAG, e.g. after inlining a `let`).
// * Dynamic extents (the length of `t:T`) are affine in the variables; the
//   reference interpreter materialises exactly that many elements, and
//   later backends pad to the maximum and mask.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "support/source.h"

namespace trlc::ir {

// ---- types ------------------------------------------------------------------

/** Element types.  `Key` is the opaque random key made by `rng(...)`. */
enum class DType { Bool, I32, F32, F64, Key };
const char *dtype_name(DType d);  // "bool", "i32", "f32", "f64", "key"

/** An affine form c + Σ coef[v]·var_v over an equation's variables (indices
 *  into Equation::vars).  Bounds and consts are already substituted. */
struct Affine {
    int64_t constant = 0;
    std::vector<int64_t> coef;  // may be shorter than the number of variables (missing = 0)
    int64_t coef_of(int v) const { return v < static_cast<int>(coef.size()) ? coef[v] : 0; }
    bool is_constant() const;
    bool operator==(const Affine &o) const;
};

/** An index or extent expression: an affine form, or min/max of two of them. */
struct IndexExpr {
    enum Kind { Aff, Min, Max } kind = Aff;
    Affine aff;                             // when Aff
    std::shared_ptr<const IndexExpr> a, b;  // when Min/Max
};
using IndexExprPtr = std::shared_ptr<const IndexExpr>;
/** "8 - t", "min(t + 3, 12)": variables named by "var_names" (v0, v1, … when missing). */
std::string index_expr_to_string(const IndexExpr &e, const std::vector<std::string> &var_names = {});
/** The compact form used when messages quote a read as written: "t+1", "2*t-1", "-t+7",
 *  "min(t+3, 12)" (no spaces inside affine forms). */
std::string affine_compact(const Affine &a, const std::vector<std::string> &vars);
std::string index_expr_compact(const IndexExpr &e, const std::vector<std::string> &vars);

/** One spatial extent: a constant, or (dynamic) an index expression of the
 *  equation's variables; `max_value` is its largest value over the domain
 *  (what a padded buffer needs). */
struct Extent {
    int64_t max_value = 0;
    IndexExprPtr dynamic;  // null when static
    bool is_static() const { return !dynamic; }
};

struct Type {
    bool is_tuple = false;
    DType dtype = DType::F32;
    std::vector<Extent> shape;  // spatial shape; empty = scalar
    std::vector<Type> elems;    // when is_tuple
};
std::string type_to_string(const Type &t, const std::vector<std::string> &var_names = {});
/** Bytes of one value of type "t" in a memory-plan slot: the static (padded, i.e. maximal)
 *  shape times the dtype size (bool 1, i32 4, f32 4, f64 8, key 16 = the (k0: u32, k1: u32,
 *  h: u64) of dsl/README.md §8), rounded up to 16 bytes; a tuple is the sum of its leaves,
 *  each rounded up to 16 bytes (memory/storage_kinds.cpp, schedule/sequence_order.cpp). */
int64_t slot_bytes(const Type &t);
/** True when some extent of "t" (or of a tuple element) depends on the point: a slice
 *  `k[0:t+1]` in an expression, or a tensor whose shape depends on its point (sema's
 *  EqSrc::coord_type, dsl/README.md §4). */
bool has_dynamic_extent(const Type &t);

// ---- expressions ---------------------------------------------------------------

struct Node;
using NodePtr = std::shared_ptr<const Node>;

enum class NodeKind {
    Const,     // literal: dtype + shape + data (f64 storage for all dtypes)
    Coord,     // the value of variable `var` (i32 scalar)
    Read,      // tensor `tensor` at `index` (one IndexItem per domain dim)
    Unary,     // elementwise `uop` of args[0]
    Binary,    // elementwise `bop` of args[0], args[1] with numpy broadcasting
    Where,     // where(args[0], args[1], args[2]) elementwise
    Cast,      // args[0] converted to type.dtype
    Builtin,   // `builtin` applied to args (see BuiltinOp), with attributes
    Index,     // numpy-style spatial indexing of args[0] by `sindex` (basic + gather)
    Tuple,     // (args...)
    TupleGet,  // element `int_attr` of the tuple args[0]
    Rng,       // a random key from the i32 scalars args (and the seed, tensor id)
    Extern,    // call of an `extern` function `name` with args
    Grad,      // grad(args[0] = y, args[1] = x); type = x's type.  Made by sema, replaced by
               // passes/autodiff (reads of adjoint tensors) before the PDG is built
};

/** Elementwise unary operations: the rows of ir/ops.def (name, typing, kernels, adjoint). */
enum class UnaryOp {
#define TRL_UNARY(E, ...) E,
#include "ir/ops.def"
};
enum class BinaryOp { Add, Sub, Mul, Div, Mod, Pow, Min, Max, Lt, Le, Gt, Ge, Eq, Ne, And, Or };

enum class BuiltinOp {
    Sum,
    Mean,
    ReduceMax,
    ReduceMin,
    Argmax,
    Logsumexp,  // axis attr (empty = all)
    Softmax,
    LogSoftmax,  // over the last axis (or axis attr)
    MatMul,      // numpy matmul rules
    Transpose,   // axes attr (empty = reverse)
    Reshape,     // shape = result type
    Concat,
    Stack,   // axis attr
    OneHot,  // int_attr = depth
    Gather,  // gather(x, idx, axis)
    Cumsum,
    DiscountedCumsum,  // axis attr; gamma = args[1]
    Arange,
    Zeros,
    Ones,
    Full,  // shape from result type
    Uniform,
    Normal,       // args[0] = key; shape from type
    Categorical,  // args[0] = key, args[1] = logits
    Clamp,        // clamp(x, lo, hi)
    FoldIn,       // fold_in(key, i32) → key
    Orthogonal,   // args[0] = key, args[1] = gain (f64 scalar); [rows, cols] and dtype from type
    Permutation,  // args[0] = key; i32[n], n from type (runtime/trl_linalg.h)
    // scatter_add(idx, values, n): zeros[n], then out[idx[k]] += values[k] for k in row-major
    // order (idx i32 and values of one shape; int_attr = n).  Not user-visible: autodiff writes
    // it as the adjoint of an indexing (passes/autodiff.cpp scatter_via_iota).
    ScatterAdd,
};

/** A domain index of a Read: a point (affine / clamp) or a slice [lo, hi). */
struct ReadIndex {
    bool is_slice = false;
    IndexExprPtr point;   // when !is_slice
    IndexExprPtr lo, hi;  // when is_slice
};

/** One entry of spatial (numpy) indexing.  Scalar: an i32 expression (a
 *  negative constant counts from the end); Slice: static [lo, hi) with step 1
 *  (dynamic ends are IndexExprs); Gather: an i32 tensor of indices. */
struct SpatialIndex {
    enum Kind { Scalar, Slice, Full } kind = Scalar;
    NodePtr value;        // Scalar (args of the node hold it too)
    IndexExprPtr lo, hi;  // Slice
};

struct Node {
    NodeKind kind;
    Type type;
    Loc loc;
    std::vector<NodePtr> args;

    std::vector<double> data;      // Const: row-major values
    int var = -1;                  // Coord
    int tensor = -1;               // Read: Program::tensors index
    std::vector<ReadIndex> index;  // Read
    UnaryOp uop = UnaryOp::Neg;
    BinaryOp bop = BinaryOp::Add;
    BuiltinOp builtin = BuiltinOp::Sum;
    std::vector<int64_t> axes;  // Builtin: axis / axes attribute
    bool has_axes = false;
    int64_t int_attr = 0;              // TupleGet index, OneHot depth
    std::vector<SpatialIndex> sindex;  // Index
    std::string name;                  // Extern
    /** Const: the program bound (Program::bounds key) whose value this scalar literal is, as
     *  written (`i / I`), possibly converted to another dtype; "" for any other literal.  Passes
     *  that copy a node keep it; arithmetic never folds a tagged literal into an untagged one of
     *  another value.  Code generation reads the bound's run-time variable for it when the bound
     *  is run-time (`--bound`, driver/runtime_bounds.h); the interpreter uses `data`. */
    std::string bound;
};

// ---- program -------------------------------------------------------------------

struct Dim {
    std::string name;        // t
    std::string bound_name;  // T
    int64_t bound = 0;       // value of T (after -D overrides)
    Loc loc;
};

/** A guard over an equation's variables: quasi-affine comparisons joined by and/or/not.
 *  `otherwise` is lowered to Not(Or(other guards)).  Each side of a comparison is an affine
 *  form, or (issue 22) one of these of it by a positive constant d: its floored remainder
 *  `a % d` (in [0, d), as i32 `%`), its quotient `a / d` (a float in the language, so exact:
 *  `t / 4 < 2` is `t < 8`), its floored quotient `floor(a / d)`.  In isl the remainder and the
 *  floor are integer divisions (isl manual, "Quasi-affine expressions"): `t % 10 == 0` is a
 *  set isl's AST visits with a stride. */
struct Guard;
using GuardPtr = std::shared_ptr<const Guard>;
struct Guard {
    enum Kind { True, Cmp, And, Or, Not } kind = True;
    /** What a side applies to its affine form: nothing, `% divisor`, `/ divisor`,
     *  `floor(/ divisor)`. */
    enum Quasi { Plain, Mod, Div, FloorDiv };
    BinaryOp cmp = BinaryOp::Lt;  // Lt Le Gt Ge Eq Ne
    Affine lhs, rhs;
    Quasi lhs_quasi = Plain, rhs_quasi = Plain;
    int64_t lhs_divisor = 1, rhs_divisor = 1;  // > 0; used by Mod, Div, FloorDiv
    GuardPtr a, b;
    bool quasi() const { return lhs_quasi != Plain || rhs_quasi != Plain; }
};
/** A side of a guard comparison whose affine form is "v", under kind "q" and divisor "d" > 0,
 *  as the fraction {numerator, denominator > 0}: {v, 1}, {v mod d, 1}, {v, d}, {floor(v / d), 1}. */
std::pair<int64_t, int64_t> quasi_value(Guard::Quasi q, int64_t v, int64_t d);
/** The guard `lhs op rhs` (op one of Lt Le Gt Ge Eq Ne). */
GuardPtr guard_cmp(BinaryOp op, Affine lhs, Affine rhs);
/** `a and b`; a null operand means "always", so the other one is returned as is. */
GuardPtr guard_and(GuardPtr a, GuardPtr b);

/** One position of a left-hand pattern. */
struct PatternItem {
    enum Kind { Var, Shift, Constant } kind = Var;
    int var = -1;        // Var, Shift: index into Equation::vars
    int64_t offset = 0;  // Shift: +c (c > 0); Constant: the coordinate
};

struct Equation {
    std::vector<int> vars;             // Program::dims index of each variable
    std::vector<PatternItem> pattern;  // one per domain dim of the tensor
    GuardPtr guard;                    // null = always
    bool otherwise = false;            // written `otherwise` (guard already lowered)
    NodePtr body;
    Loc loc;                  // the equation's left-hand side
    int specificity() const;  // Σ per position: constant 2, shift 1, var 0
};

struct Tensor {
    std::string name;
    std::vector<int> dims;  // Program::dims index of each domain position
    Type type;              // static type (dynamic extents only via slices in bodies)
    std::vector<Equation> equations;
    Loc loc;               // first definition (or the type declaration)
    bool is_load = false;  // defined by `load … from "file"`, or an `input` (is_input)
    std::string load_path;
    /** `input obs : f32[4]`: a value the caller supplies (library mode, `--interpret --input
     *  obs=FILE.npy`); also is_load, with no load_path. */
    bool is_input = false;
    bool is_hidden = false;  // compiler-made (the shared value of a tuple equation)
    /** Data-parallel programs (passes/distribute.h, dsl/README.md §7.12): */
    /** each point's value is the mean over the ranks of what its equation computes there (a
     *  gradient; trl_allreduce_mean's order: the ranks' values summed in rank order, / N); */
    bool allreduce_mean = false;
    /** its rng(...) streams are keyed by the rank too (§8: word 3 of the stream key's Philox
     *  input), so its values differ between ranks; rank 0 draws what a one-process run draws; */
    bool rank_keyed = false;
    /** the tensor whose stream its rng(...) uses ("": its own name); the tensor that holds a
     *  grad(...) moved out of an equation draws from that equation's tensor's stream. */
    std::string stream_name;
    const std::string &stream() const { return stream_name.empty() ? name : stream_name; }
};

/** `emit "stream"[vars] { field: expr, … } [when guard]` — one JSON object per point, in
 *  lexicographic point order; with a guard, only the points where it is true write one. */
struct Emit {
    std::string stream;
    std::vector<int> vars;  // Program::dims index of each variable, in order
    std::vector<std::pair<std::string, NodePtr>> fields;
    Loc loc;
    NodePtr guard;  // scalar bool over vars (may read tensors, data dependent); null: none
    /** The guard again as a quasi-affine Guard over vars when it is one (comparisons of the
     *  dims, no tensor reads; sema/outputs.cpp), else null: the fields are read only at its
     *  points, so the PDG, the definedness check and the memory plan count their reads there
     *  (issue 22: `emit … { loss: loss[u] } when u >= LS` with loss defined from LS on). */
    GuardPtr field_guard;
};

/** `save expr to "file.npy|.npz"` — value has no variables.  An `output act = expr` is a Save
 *  with "output" set (and no path): its value is returned to the caller (library mode) or
 *  printed by `--interpret` as the JSON line {"act": value}. */
struct Save {
    std::string path;
    NodePtr value;
    Loc loc;
    std::string output;  // the output's name; "" for a save to a file
    /** "save to \"f.npz\"" or "output act": how messages and dumps name it. */
    std::string label() const { return output.empty() ? "save to \"" + path + "\"" : "output " + output; }
};

struct ExternFn {
    std::string name, header;
    std::vector<std::pair<std::string, Type>> params;
    Type result;
    Loc loc;
};

/** A profiler region the program names (`region "update" { … }`, dsl/README §7.9): the
 *  statements whose source location lies in lines first_line .. last_line of file "file" are
 *  timed under "name" (the innermost region wins). */
struct Region {
    std::string name;
    int file = -1;
    int first_line = 0, last_line = 0;
};

struct Program {
    std::vector<Region> regions;  // the main file's, in source order
    std::vector<Dim> dims;
    std::map<std::string, int64_t> bounds;  // every bound name → value
    std::vector<Tensor> tensors;            // in definition order
    std::vector<Emit> emits;
    std::vector<Save> saves;
    std::vector<ExternFn> externs;
    /** Rewritten for data-parallel ranks (passes/distribute.h): emit records start with
     *  "rank", emit and save streams are keyed by the rank, replicated saves feed the digest. */
    bool distributed = false;
    int tensor_index(const std::string &name) const;  // -1 if absent
};

}  // namespace trlc::ir
