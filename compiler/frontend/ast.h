#pragma once
// ast — the syntax tree of one `.trl` file, exactly as written.
//
// The parser builds it; `--emit=ast` prints it (frontend/ast_printer.cpp);
// sema (compiler/sema) resolves names, inlines `fn`s and turns it into the
// typed IR (compiler/ir/ir.h).  Nodes are plain structs held by shared_ptr;
// nothing here is resolved: `x[a, b]` is an Index node whether `x` is a
// recurrent tensor (domain read) or a spatial value (numpy indexing).
//
// Grammar: dsl/README.md (EBNF).  Example:
//
//   dim t < T = 8                  DimDecl{name=t, bound=T, bound_expr=nullptr, default=8}
//   ret[T-1] = rew[T-1]            Equation{targets=[ret], pattern=[Const(T-1)], ...}
//   ret[t] = rew[t] + 0.9*ret[t+1] Equation{pattern=[Dim t], body=Binary(+,...)}
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "support/source.h"

namespace trlc::ast {

struct Expr;
using ExprPtr = std::shared_ptr<Expr>;

enum class ExprKind {
    IntLit,    // 42                 int_value
    FloatLit,  // 0.99, 1e-3         float_value, text (as written)
    BoolLit,   // true, false        bool_value
    StrLit,    // "train"            text
    ArrayLit,  // [0.1, 0.2]         args = elements
    Name,      // gamma, t, net      name
    Member,    // nn.linear          args[0] = object (a Name or Member), name = member
    Index,     // x[a, 1:3]          args[0] = base, indices
    Call,      // f(a, b, axis=0)    args[0] = callee (Name/Member), args[1..] = positional, kwargs
    Unary,     // -x, !x             op, args[0]
    Binary,    // a + b              op, args[0], args[1]
    Tuple,     // (a, b)             args = elements
};

enum class OpKind {
    // unary
    Neg,
    Not,
    Plus,
    // binary
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    MatMul,
    Pow,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    And,
    Or,
};

/** One entry of an index list: a single expression, or a slice `lo:hi` where
 *  either end may be absent (`:`, `1:`, `:n`). */
struct IndexItem {
    bool is_slice = false;
    ExprPtr value;  // when !is_slice
    ExprPtr lo;     // when is_slice; may be null
    ExprPtr hi;     // when is_slice; may be null
    Loc loc;
};

struct KeywordArg {
    std::string name;
    ExprPtr value;
    Loc loc;
};

struct Expr {
    ExprKind kind;
    Loc loc;  // the whole expression's range
    int64_t int_value = 0;
    double float_value = 0.0;
    bool bool_value = false;
    std::string text;  // literal as written (numbers, strings)
    std::string name;  // Name, Member
    OpKind op = OpKind::Add;
    std::vector<ExprPtr> args;
    std::vector<IndexItem> indices;
    std::vector<KeywordArg> kwargs;
};

/** A type annotation `f32[4, 64]` or `(f32[4], i32)`.  Extents are expressions
 *  (constants, consts, bounds) evaluated by sema. */
struct TypeAnnot {
    bool is_tuple = false;
    std::string dtype;             // "f32", "f64", "i32", "bool"; empty for a tuple
    std::vector<ExprPtr> shape;    // spatial extents
    std::vector<TypeAnnot> elems;  // when is_tuple
    Loc loc;
};

// ---- declarations ---------------------------------------------------------

enum class DeclKind { Import, Dim, Const, Equation, TypeDecl, Fn, Emit, Save, Load, Extern, Input, Output };

/** One position of a left-hand-side pattern: `t`, `t+1`, `0`, `T-1`.  The parser
 *  keeps the expression; sema classifies it (dim / shift / constant). */
struct PatternItem {
    ExprPtr expr;
    Loc loc;
};

/** A statement in a `fn` block body. */
struct FnStmt {
    enum Kind { Let, Return } kind = Let;
    std::vector<std::string> names;  // `let a = …` one name; `let (a, b) = …` several
    std::vector<Loc> name_locs;
    ExprPtr value;
    Loc loc;
};

struct Param {
    std::string name;
    Loc loc;
    bool has_type = false;
    TypeAnnot type;  // extern declarations: `s: f32[8]`
};

struct Decl {
    DeclKind kind;
    Loc loc;  // the keyword or the first token of the declaration

    // Import: module path `std.envs.cartpole` (dotted, is_path=false) or a
    // quoted file path (is_path=true); alias = `as name` or the last component.
    std::string module;
    bool is_path = false;
    std::string alias;

    // Dim: `dim t < T = 500` / `dim k < 2*T`; bound_expr is null in the first
    // form, default_value null when no `= N` is given.
    // Const: `const gamma = 0.99` → name, value.
    std::string name;
    Loc name_loc;
    std::string bound;
    Loc bound_loc;
    ExprPtr bound_expr;
    ExprPtr value;  // Dim: default value; Const, Equation: right-hand side

    // Equation: `x[p…] : T = value when guard` / `(a, b)[p…] = value otherwise`.
    // targets has one name, or several for a tuple equation; has_pattern is
    // false for a tensor with an empty domain (`w = …`).
    std::vector<std::string> targets;
    std::vector<Loc> target_locs;
    bool has_pattern = false;
    std::vector<PatternItem> pattern;
    bool has_type = false;
    TypeAnnot type;          // Equation (inline annotation) and TypeDecl
    ExprPtr guard;           // `when cond`
    bool otherwise = false;  // `otherwise`

    // Fn: `fn f(a, b) = expr` (body has one Return) or a block.  Extern: header
    // path in `module`, params with types, result type in `type`.
    std::vector<Param> params;
    std::vector<FnStmt> body;

    // Emit: `emit "train"[i] { key: expr, … }` → stream name in `name`,
    // pattern (dims only), fields, optional `when cond` in guard.  Save: `save expr to "file"` → value, path
    // in `module`.  Load: `load name from "file"` (optionally typed).
    // Input: `input obs : f32[4]` → name, type (the caller supplies the value, library mode).
    // Output: `output act = expr` → name, value; `output act` → name, value = the Name `act`.
    std::vector<std::pair<std::string, ExprPtr>> fields;
    std::vector<Loc> field_locs;
};

/** A named profiler region: `region "update" { decls }` (dsl/README §7.9).  Its declarations
 *  are the module's like any other (Module::decls); the region keeps the source lines they
 *  span, so every statement whose location falls inside (the passes' gradients and saved
 *  values keep the location of the equation they come from) is timed under "name". */
struct Region {
    std::string name;
    Loc loc;             // the `region` keyword
    int first_line = 0;  // the line of `region`
    int last_line = 0;   // the line of the closing `}`
};

struct Module {
    int file = -1;  // SourceManager id
    std::vector<Decl> decls;
    std::vector<Region> regions;  // in source order; a nested region follows its parent
};

}  // namespace trlc::ast
