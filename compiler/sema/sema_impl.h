#pragma once
// sema_impl — the state shared by the files of compiler/sema (private to sema).
//
// analyze() (sema.cpp) runs, in order:
//   modules.cpp    load imports, collect every module's global names (duplicates are errors)
//   consts.cpp     bounds (-D overrides, >= 1), dims, consts (folded), type annotations
//   equations.cpp  patterns → variables, tensor domains, guards, tuple equations,
//                  tensor types (lazily, most specific equation first), emit/save/load/extern
//   lower_expr.cpp expressions → typed ir::Node (names, reads, operators, indexing)
//   builtins.cpp   the builtin functions of dsl/README.md §5
//   inline_fn.cpp  `fn` calls: arguments substituted, body lowered at each call site
//   types.cpp      promotion, broadcasting, weak literals; print_types (--emit=types)
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "frontend/ast.h"
#include "ir/ir.h"
#include "sema/sema.h"
#include "support/diagnostics.h"

namespace trlc::sema {

/** A folded `const`: an int or a float. */
struct ConstValue {
    bool is_int = true;
    int64_t i = 0;
    double f = 0.0;
    double as_double() const { return is_int ? static_cast<double>(i) : f; }
};

/** A lowered expression.  `node` is null when an error was already reported
 *  (callers propagate silently).  `weak`: a literal-only value whose dtype
 *  adapts to the other operand.  `idx`: for an integer scalar that is affine
 *  (or min/max of affine) in the equation's variables, that form. */
struct Val {
    ir::NodePtr node;
    bool weak = false;
    ir::IndexExprPtr idx;
    bool ok() const { return node != nullptr; }
    const ir::Type &type() const { return node->type; }
};

enum class EntityKind { Dim, Bound, Const, Tensor, Fn, Extern, Module };

/** What a global name denotes; `index` points into the matching table. */
struct Entity {
    EntityKind kind;
    int index = -1;
    Loc loc;
};

struct ModuleInfo {
    std::string name;  // "std.nn", "main", or the file path
    int file = -1;
    const ast::Module *ast = nullptr;
    bool is_main = false;
    std::map<std::string, Entity> names;
};

struct ConstInfo {
    const ast::Decl *decl = nullptr;
    int module = 0;
    enum State { Todo, Busy, Done, Failed } state = Todo;
    ConstValue value;
};

struct FnInfo {
    const ast::Decl *decl = nullptr;
    int module = 0;
};

/** One source equation of a tensor (a tuple equation gives one per target,
 *  plus one for the hidden tensor). */
struct EqSrc {
    const ast::Decl *decl = nullptr;
    int tuple_elem = -1;  // >= 0: body = TupleGet(tuple_elem, Read(hidden tensor here))
    int hidden = -1;
    /** Non-null: the body is this element of the tuple literal on the right of a tuple
     *  equation (`(net, opt)[t+1] = (net[t], opt[t]) otherwise`: net's element is net[t]),
     *  lowered as the target's own equation instead of through the hidden tuple tensor. */
    const ast::Expr *value = nullptr;
    /** The expression this equation's body is lowered from: "value", else the declaration's. */
    const ast::Expr *body() const { return value ? value : decl->value.get(); }
    bool ok = false;  // pattern, variables and guard were built
    ir::Equation eq;  // vars, pattern, guard, loc; body set by typing
    std::vector<std::string> var_names;
    std::string lhs_text;              // "x[t]" for messages
    bool cls_ok = false;               // the pattern was classified
    std::vector<ir::PatternItem> cls;  // classified pattern; `var` holds the Program dim
    bool typed = false;
    bool weak = false;
    /** A body whose shape depends on the point (`att[t] = softmax(k[0:t+1] @ q[t])`:
     *  f32[t + 1]): that type in the tensor's coordinates (variable j of its extents is
     *  domain position j of the tensor), which is what the tensor's type is and what its
     *  equations must agree on; the body's own type stays in the equation's variables. */
    std::optional<ir::Type> coord_type;
    const ir::Type &tensor_type() const { return coord_type ? *coord_type : eq.body->type; }
};

struct TensorInfo {
    std::vector<EqSrc> eqs;
    std::optional<ir::Type> declared;
    Loc declared_loc;
    bool dims_ok = false;
    bool has_decl_dims = false;  // a standalone type declaration gave the dims
    std::vector<int> decl_dims;
    bool partial_strong = false;
    std::vector<Loc> dim_locs;  // where each position's dim was seen
    enum State { Untyped, Busy, Done, Failed } state = Untyped;
    std::optional<ir::Type> partial;     // join of the equations typed so far (while Busy)
    std::optional<ir::Type> assumed;     // retry: the final type of a previous round
    std::vector<ir::Type> partial_uses;  // types handed to self-reads while Busy
};

/** Thrown when a body reads a tensor whose type is still being inferred and
 *  no equation of it is typed yet; the equation is retried later. */
struct Deferred {
    int tensor;
    std::vector<int> via;  // the tensors whose typing waited on it, outermost first
    Loc read = {};         // the read of `tensor` that needed its type (when known)
};

/** Where an expression is lowered: its module, its variables, local names. */
struct Scope {
    int module = 0;
    std::vector<int> vars;  // Program::dims index of each variable
    std::vector<std::string> var_names;
    bool dims_visible = true;  // false inside a fn body
    std::string binder;        // "the left-hand side x[t]", for messages
    std::map<std::string, Val> locals;
    std::string fn_name;  // inside a fn body
};

struct BuiltinCall;  // builtin_call.h

class Sema {
public:
    Sema(SourceManager &sm, Diagnostics &diag, const SemaOptions &opts) : sm_(sm), diag_(diag), opts_(opts) {}
    std::optional<ir::Program> run(const ast::Module &main);

    // ---- diagnostics (deduplicated: a fn body inlined twice reports once)
    void error(Loc loc, const std::string &msg);
    void note(Loc loc, const std::string &msg);
    std::string text(Loc loc) const;  // the source text of a one-line range

    // ---- modules.cpp
    void load_modules(const ast::Module &main);
    void collect_names();
    const Entity *lookup(int module, const std::string &name) const;
    int listed_dim(const ast::PatternItem &p, const char *what);
    bool define(int module, const std::string &name, Entity e);

    // ---- consts.cpp
    void eval_dims();
    std::optional<ConstValue> eval_const(const ast::Expr &e, int module);
    std::optional<int64_t> eval_int(const ast::Expr &e, int module, const std::string &what);
    std::optional<ConstValue> const_value(int c, Loc use);
    std::optional<ir::Type> eval_type(const ast::TypeAnnot &t, int module);

    // ---- equations.cpp
    void collect_tensors();
    int get_tensor(const std::string &name, Loc loc, bool hidden);
    bool classify(const ast::Expr &e, ir::PatternItem *out);
    std::string describe_lhs(const EqSrc &s);
    bool lower_equation(int tensor, int k);
    std::optional<ir::Type> finalize(int tensor);
    void lower_externs();
    void infer_domains();
    void build_equations();
    void type_tensors();
    void lower_outputs();
    std::optional<ir::Type> tensor_type_for_read(int tensor, Loc use);
    /** "ty" (the value of equation "s" of "tensor", in the equation's variables) with its
     *  point-dependent extents in the tensor's coordinates (EqSrc::coord_type), their
     *  max_value over the tensor's domain; nullopt with the reason in "why" when a tuple, or
     *  an extent reads a variable the pattern does not give (a constant position). */
    std::optional<ir::Type> coordinate_type(const ir::Type &ty, const EqSrc &s, const ir::Tensor &tensor,
                                            std::string *why) const;
    /** The type of a read of "tensor" whose index is "index" (point indices in the reader's
     *  variables): the tensor's type with each coordinate of its point-dependent extents
     *  replaced by the index; nullopt after an error when an extent depends on a sliced dim. */
    /** The names of "t"'s domain dims, for its type in coordinates ("f32[t + 1]"). */
    std::vector<std::string> tensor_dim_names(const ir::Tensor &t) const;
    std::optional<ir::Type> read_type(const ir::Type &tensor_type, const ir::Tensor &tensor,
                                      const std::vector<ir::ReadIndex> &index, Loc loc, const Scope &scope);
    void ensure_typed(int tensor);
    std::optional<ir::Affine> pattern_affine(const ast::Expr &e, int module);
    ir::GuardPtr lower_guard(const ast::Expr &e, Scope &scope);
    /** An emit's `when` "e" as a quasi-affine guard (lower_guard, reporting nothing): "e"
     *  itself when it is one, else the conjunction of its top-level `&&` operands that are;
     *  null when none is (they read tensors, or compare values). */
    ir::GuardPtr quiet_field_guard(const ast::Expr &e, Scope &scope);
    /** A saved value "v" with a nested tuple type as the flat tuple of its leaves (outputs.cpp). */
    ir::NodePtr flat_leaves(const ir::NodePtr &v);
    /** The note after a non-affine guard error at loc (the guard e, when known): choose with
     *  where() in the body instead; for a guard that reads values (done[t]) it says why. */
    void note_guard_alternative(Loc loc, const ast::Expr *e = nullptr);
    /** Every dim's bound fits its i32 coordinates (sema.cpp); an error at the dim otherwise. */
    void check_dim_sizes();
    /** After "cannot infer the type of x" when every pending equation of x reads x itself
     *  (self_reads: equation -> that read): a note at the read saying a recurrence needs a
     *  base case, with one built from the read's direction (`G[T-1] = …` for `G[t+1]`). */
    void note_missing_base_case(int t, const std::vector<int> &pending, const std::map<int, Loc> &self_reads);
    /** Errors for a save whose value cannot be written to its file (nested tuple, key, a
     *  tuple to .npy, another extension); false after reporting. */
    bool check_save_type(const ast::Decl &d, const ir::Type &ty);
    /** `output NAME [= expr]`: a Save with Save::output set (library mode). */
    void lower_output(const ast::Decl &d);
    /** An input's or output's type and name fit the C API: one array or scalar (no tuple, no
     *  key, static shape), a name that is no C/C++ keyword.  Reports at "at" and returns false. */
    bool check_io_type(Loc at, const std::string &what, const std::optional<ir::Type> &ty);
    void check_read_consistency();

    // ---- lower_expr.cpp
    Val lower(const ast::Expr &e, Scope &scope);
    Val lower_name(const ast::Expr &e, Scope &scope);
    Val lower_index(const ast::Expr &e, Scope &scope);
    Val lower_read(int tensor, const ast::Expr &e, Scope &scope);
    Val lower_spatial_index(Val base, const std::vector<ast::IndexItem> &items, Loc loc, Scope &scope);
    Val lower_unary(const ast::Expr &e, Scope &scope);
    Val unary_leaf(const ast::Expr &e, Val a, const Scope &scope);  // - or ! of a non-tuple
    Val lower_binary(const ast::Expr &e, Scope &scope);
    Val lower_array(const ast::Expr &e, Scope &scope);
    Val lower_call(const ast::Expr &e, Scope &scope);
    Val binary_op(ir::BinaryOp op, Val a, Val b, Loc loc, const Scope &scope, const char *spelling);
    Val const_val(double v, ir::DType d, bool weak, Loc loc);
    ir::IndexExprPtr index_of(const Val &v) const { return v.idx; }

    // ---- builtins.cpp
    bool is_builtin(const std::string &name) const;
    Val lower_builtin(const std::string &name, const ast::Expr &call, Scope &scope);
    Val matmul(Val a, Val b, Loc loc, const Scope &scope);
    Val sum_leaves(const Val &x, const ast::Expr &call, Scope &scope);  // sum(tuple) → scalar
    std::optional<std::vector<ir::Extent>> shape_arg(const ast::Expr &e, Scope &scope);
    // one family of builtins each (nullopt: "bc" is not one of them); builtin_call.h
    std::optional<Val> lower_elementwise_builtin(const BuiltinCall &bc);  // builtins_math.cpp
    std::optional<Val> lower_reduction_builtin(const BuiltinCall &bc);    // builtins_math.cpp
    std::optional<Val> lower_shape_builtin(const BuiltinCall &bc);        // builtins_shapes.cpp
    std::optional<Val> lower_constructor_builtin(const BuiltinCall &bc);  // builtins_make.cpp
    std::optional<Val> lower_random_builtin(const BuiltinCall &bc);       // builtins_make.cpp
    std::optional<Val> lower_pytree_builtin(const BuiltinCall &bc);       // builtins_make.cpp

    // ---- inline_fn.cpp
    Val inline_fn(int fn, const ast::Expr &call, Scope &scope);
    Val call_extern(int ext, const ast::Expr &call, Scope &scope);

    // ---- types.cpp
    ir::Type join_shapes(const ir::Type &a, const ir::Type &b, bool *ok) const;
    Val convert(const Val &v, ir::DType d) const;  // weak → retyped, strong → Cast
    ir::Extent extent_of(ir::IndexExprPtr e, const Scope &scope) const;
    int64_t max_value(const ir::IndexExpr &e, const std::vector<int> &vars) const;
    std::string type_str(const ir::Type &t, const Scope &scope) const;
    /** Tuple (pytree) arithmetic: applies "f" leaf by leaf when some of "args" are tuples.
     *  Tuple arguments must have the same structure (else an error naming "what" and both
     *  types); a non-tuple argument is broadcast to every leaf.  Calls f(args) directly when
     *  no argument is a tuple. */
    Val map_leaves(const std::vector<Val> &args, Loc loc, const Scope &scope, const std::string &what,
                   const std::function<Val(const std::vector<Val> &)> &f);

    SourceManager &sm_;
    Diagnostics &diag_;
    const SemaOptions &opts_;
    std::set<std::tuple<int, int, int, std::string>> reported_;
    bool last_suppressed_ = false;
    /** While set, error() and note() report nothing (a trial lowering: outputs.cpp's emit
     *  field guard, whose failure only means "not quasi-affine"). */
    bool silent_ = false;

    std::vector<std::unique_ptr<ast::Module>> owned_;  // parsed imports
    std::vector<ModuleInfo> modules_;                  // [0] = main
    std::vector<ConstInfo> consts_;
    std::vector<FnInfo> fns_;
    std::vector<const ast::Decl *> extern_decls_;
    std::vector<TensorInfo> tinfo_;                // parallel to prog_.tensors
    std::vector<std::pair<int, Loc>> call_stack_;  // fns being inlined, with call sites
    ir::Program prog_;
};

// ---- small shared helpers (types.cpp)
ir::NodePtr make_node(ir::Node n);
ir::IndexExprPtr aff_expr(ir::Affine a);
ir::IndexExprPtr idx_add(const ir::IndexExprPtr &a, const ir::IndexExprPtr &b, int64_t sign_b);
ir::IndexExprPtr idx_minmax(ir::IndexExpr::Kind k, ir::IndexExprPtr a, ir::IndexExprPtr b);
bool idx_equal(const ir::IndexExpr &a, const ir::IndexExpr &b);
/** c·e (min and max swap when c < 0). */
ir::IndexExprPtr idx_scale(const ir::IndexExprPtr &e, int64_t c);
/** "e" with variable v replaced by by[v]; null when e uses a variable with no (null) entry. */
ir::IndexExprPtr idx_substitute(const ir::IndexExprPtr &e, const std::vector<ir::IndexExprPtr> &by);
bool extent_equal(const ir::Extent &a, const ir::Extent &b);
bool type_equal(const ir::Type &a, const ir::Type &b);
ir::Type scalar(ir::DType d);
bool is_float(ir::DType d);
bool is_int_like(ir::DType d);  // bool or i32
int dtype_kind(ir::DType d);    // bool 0, int 1, float 2, key 3
ir::DType promote(ir::DType a, ir::DType b);
ir::Type with_dtype(ir::Type t, ir::DType d);
Val tuple_get(const Val &v, size_t k);                      // element k (reuses a Tuple's argument)
bool same_structure(const ir::Type &a, const ir::Type &b);  // equal tuple trees (leaves any type)

}  // namespace trlc::sema
