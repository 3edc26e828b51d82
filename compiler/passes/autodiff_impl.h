#pragma once
// autodiff_impl — the pieces of passes/autodiff shared by its files, private to passes/.
//
// autodiff.cpp is the driver (finding the grads, one grad's active set, adjoint tensors,
// consumers and adjoint equations: steps 1-3 and 5 of its file comment); autodiff_builders.cpp
// builds IR nodes, affine forms and guards; autodiff_rules.cpp holds the adjoint rules (the
// spatial reverse sweep over one expression, class Sweep); autodiff_access.cpp inverts the
// access relations of the differentiated reads (step 4); autodiff_saved.cpp saves forward
// values the adjoints would recompute (step 6).  This header declares what they share; nothing
// outside passes/ includes it.
#include <functional>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/ir.h"
#include "ir/rewrite.h"
#include "passes/autodiff.h"
#include "support/diagnostics.h"

namespace trlc::autodiff_detail {

using namespace ir;

/** A diagnostic that stops differentiating one grad. */
struct AdError {
    Loc loc;
    std::string message;
};

// ---- node builders (autodiff_builders.cpp) ---------------------------------------------------

NodePtr mk(Node n);

using ir::NodeRewriter;  // ir/rewrite.h

Extent sext(int64_t v);
bool ext_eq(const Extent &a, const Extent &b);
bool is_one(const Extent &e);
Type arr_type(DType d, std::vector<Extent> shape);
bool is_float_dtype(DType d);
bool has_float(const Type &t);
NodePtr cst(DType d, double v, Loc loc);
NodePtr zeros_of(const Type &t, Loc loc);
std::vector<Extent> broadcast(const std::vector<Extent> &a, const std::vector<Extent> &b);
bool is_cmp(BinaryOp op);
NodePtr bin(BinaryOp op, NodePtr a, NodePtr b, Loc loc);
NodePtr un(UnaryOp op, NodePtr a, Loc loc);
NodePtr where_(NodePtr c, NodePtr a, NodePtr b, Loc loc);
NodePtr cast_(NodePtr a, DType d, Loc loc);
NodePtr builtin(BuiltinOp op, Type t, std::vector<NodePtr> args, Loc loc, std::vector<int64_t> axes = {},
                bool has_axes = false);
NodePtr sum_axes(NodePtr x, std::vector<int64_t> axes, Loc loc);
NodePtr reshape_(NodePtr x, const std::vector<Extent> &shape, Loc loc);
NodePtr transpose_(NodePtr x, const std::vector<int64_t> &perm, Loc loc);
NodePtr swap_last2(NodePtr x, Loc loc);
NodePtr matmul_(NodePtr a, NodePtr b, Loc loc);
NodePtr unbroadcast(NodePtr g, const std::vector<Extent> &target, Loc loc);
NodePtr affine_node(const Affine &a, Loc loc);
NodePtr index_expr_node(const IndexExpr &e, Loc loc);
NodePtr count_node(const std::vector<Extent> &shape, const std::vector<int64_t> &axes, DType d, Loc loc);
IndexExprPtr aff_ix(Affine a);
Affine aff_const(int64_t c);
Affine aff_add(const Affine &a, const Affine &b, int64_t sb = 1);
Affine aff_var(int v, int64_t c = 0);
Affine aff_subst(const Affine &a, const std::vector<Affine> &map);
GuardPtr guard_subst(const GuardPtr &g, const std::vector<Affine> &map);
GuardPtr guard_not(GuardPtr a);
bool mentions(const GuardPtr &g, int v);
int guard_on_box(const GuardPtr &g, const std::vector<int64_t> &bounds);

// ---- adjoint values (a tree for tuples; autodiff_rules.cpp) ---------------------------------

struct Adj {
    NodePtr v;               // an array adjoint (null = zero)
    std::vector<Adj> elems;  // a tuple adjoint (empty = zero)
    bool zero() const {
        if (v) return false;
        for (const Adj &e : elems)
            if (!e.zero()) return false;
        return true;
    }
};

void accumulate(Adj &acc, const Adj &g, Loc loc);
void leaves(const Type &t, std::vector<int> &path, std::vector<std::vector<int>> &out);
const Type &leaf_type(const Type &t, const std::vector<int> &path);
NodePtr leaf_adj(const Adj &a, const std::vector<int> &path);

// ---- gradient-carrying arguments (autodiff_rules.cpp) -----------------------------------------

std::vector<size_t> grad_args(const Node &n);
bool contains_rng(const NodePtr &n, std::unordered_map<const Node *, bool> &memo);
void carried_reads(const NodePtr &n, std::set<const Node *> &seen, std::set<int> &out);

// ---- the spatial reverse sweep over one expression (autodiff_rules.cpp) ----------------------

class Sweep {
public:
    Sweep(const std::vector<bool> &diff) : diff_(diff) {}
    void run(const NodePtr &root, Adj seed);

    std::vector<std::pair<NodePtr, Adj>> reads;

private:
    bool active(const NodePtr &n);
    void give(const NodePtr &arg, NodePtr g);
    void give(const NodePtr &arg, const Adj &g);
    NodePtr keepdims(NodePtr g, const Type &like, const std::vector<int64_t> &axes, Loc loc);
    NodePtr expand(NodePtr g, const Type &like, const std::vector<int64_t> &axes, Loc loc);
    static std::vector<int64_t> red_axes(const Node &n, size_t rank);
    NodePtr scatter_via_iota(const NodePtr &x, const std::function<NodePtr(NodePtr)> &apply, NodePtr g, Loc loc);
    void back(const NodePtr &np, const Adj &ga);
    void scatter_back(const Node &n, NodePtr g, Loc loc);
    void builtin_back(const NodePtr &np, NodePtr g);

    const std::vector<bool> &diff_;
    std::unordered_map<const Node *, bool> active_;
    std::unordered_map<const Node *, bool> rng_;
    std::unordered_map<const Node *, Adj> adj_;
};

// ---- access inversion (autodiff_access.cpp) ----------------------------------------------------

/** How one domain position of a differentiated read indexes the tensor it reads. */
struct PosMap {
    enum Kind { Var, Const, Slice } kind = Var;
    int var = -1;            // Var: the consumer equation's variable
    int64_t a = 0;           // Var: index = var + a; Const: the coordinate
    int64_t lo = 0, hi = 0;  // Slice
    IndexExprPtr dyn_lo;     // Slice with ends that depend on the variables (x[t:T]): the
                             // adjoint of the block is first placed at dyn_lo in [0, hi)
};

int64_t index_max(const IndexExpr &e, const std::vector<int64_t> &bounds);
NodePtr place_block(NodePtr g, size_t axis, const IndexExprPtr &lo, int64_t n_out, Loc loc);

struct Contribution {
    int j_tensor;              // J: over C's domain, the adjoint of the value read
    int leaf = -1;             // >= 0: J is element `leaf` of the tuple-valued J (read at points)
    int consumer;              // C
    const Equation *eq;        // Ec
    std::vector<PosMap> pos;   // per position of z
    std::vector<int> var_pos;  // per variable of Ec: the position of z it maps to, or -1 (summed)
    // Per variable of Ec: the consumer points [lo, hi) this contribution covers (a piece of a
    // clamped read); empty = every point.
    std::vector<std::pair<int64_t, int64_t>> var_range;
    std::vector<int> path;  // the leaf of z's type
    Loc loc;                // the read
};

// ---- the program transformation (autodiff.cpp, autodiff_access.cpp, autodiff_saved.cpp) -------

class Differentiator {
public:
    Differentiator(Program &prog, Diagnostics &diag) : prog_(prog), diag_(diag) {}
    bool run();

private:
    static bool contains_grad(const NodePtr &n);

    // ---- names, new tensors and reads (autodiff.cpp) -------------------------------------------

    std::string var_name(const Equation &e, int v) const { return prog_.dims[e.vars[v]].name; }
    std::vector<std::string> var_names(const Equation &e) const;
    std::string read_text(const Node &r, const Equation &e) const;
    std::string lhs_text(int c, const Equation &e) const;
    std::string unique_name(const std::string &base);

    int new_tensor(const std::string &name, const std::vector<int> &dims, const Type &type, Loc loc);
    std::vector<Equation> shapes_of(int z, bool plain) const;
    static Equation mirror(const Equation &e, NodePtr body);
    static std::vector<Affine> pattern_point(const Equation &e);
    NodePtr read_at(int tensor, const std::vector<ReadIndex> &index, Loc loc) const;
    NodePtr read_point(int tensor, const std::vector<Affine> &point, Loc loc) const;

    // ---- one grad: steps 1-3 and 5 (autodiff.cpp) ----------------------------------------------

    /** What differentiating one grad(y, x) builds up, step by step. */
    struct OneGrad {
        int R = -1, e0_index = -1;  // the grad is in equation e0_index of tensor R ...
        Equation E0;                // ... copied (new tensors move prog_.tensors)
        NodePtr grad, y, x;
        std::vector<NodePtr> xreads;                        // x's reads, at E0's point
        std::vector<bool> is_x;                             // per tensor: read by x
        std::vector<bool> diff;                             // per tensor: differentiated (x's and the active ones)
        std::vector<int> active;                            // the active tensors (step 1)
        std::vector<int> order;                             // the active tensors, then x's: those with an adjoint
        std::map<int, int> adj;                             // z → adj_z (step 2)
        std::map<int, std::vector<Contribution>> contribs;  // z → contributions (step 3)
    };
    /** One leaf of a consumer's sweep: a read, an element of its type, and its adjoint. */
    struct Leaf {
        NodePtr read;
        std::vector<int> path;
        NodePtr value;
    };
    NodePtr differentiate_one(int R, int e0_index, const NodePtr &grad);
    GuardPtr x_guard(const OneGrad &g, int z) const;
    void collect_x_reads(OneGrad &g, const NodePtr &n);
    void name_y(const OneGrad &g);
    void find_active(OneGrad &g);
    void consume(OneGrad &g, int C, int eidx, bool seed);
    static Adj split_adjoint(const NodePtr &v, const Type &t);
    void sweep_leaves(const Sweep &sw, int C, const Equation &e, bool seed, const std::vector<int> &V,
                      std::vector<Leaf> *ls, std::vector<std::vector<Contribution>> *kpieces);
    void store_back_values(OneGrad &g, int C, const Tensor &ct, const Equation &e, int self_idx, bool seed,
                           const std::vector<Leaf> &ls, const std::vector<std::vector<Contribution>> &kpieces);
    void adjoint_equations(OneGrad &g, int z);
    std::vector<int> guarded_contributions(int z, const std::vector<Equation> &zeqs, const Type &zt,
                                           const std::vector<Contribution> &ks);
    static NodePtr tuple_of_sums(const Type &t, std::vector<int> &path, const std::map<std::vector<int>, NodePtr> &sums,
                                 Loc loc);
    static NodePtr grad_value(const OneGrad &g, const NodePtr &xn);

    // ---- step 4: access inversion (autodiff_access.cpp) ----------------------------------------

    std::vector<Contribution> analyze_read(const Node &r, int c, const Equation &e, bool seed,
                                           const std::vector<int> &V);
    std::vector<Contribution> clamped_pieces(const Node &r, const Equation &e, Contribution k,
                                             const std::vector<size_t> &clamped, const std::string &rt) const;
    void check_identity_along(const Contribution &k, const Node &r, int c, const Equation &e, bool seed,
                              const std::vector<int> &V, const std::string &rt) const;
    std::pair<int64_t, int64_t> var_range(const Contribution &k, int v) const;
    NodePtr contribution(const Contribution &k, const std::vector<Affine> &u, const std::vector<int64_t> &box,
                         GuardPtr *cond, Loc loc);

    // ---- step 6: saved forward values ---------------------------------------------------------

    /** The back tensors (K, or J when there is no K) of one consumer equation: their equation
     *  "eq" holds the adjoints, whose expressions share forward nodes with the equation's body
     *  (or with y, for the seed). */
    struct BackSite {
        int consumer = -1, eq = -1;
        NodePtr seed_y;  // the seed: y (its nodes are gone from E0's body)
        std::vector<int> backs;
    };

    void note_back(int C, int eq, const NodePtr &seed_y, int back);
    static int64_t transcendental_work(const Node &n);
    void save_forward_values(const BackSite &site);

    Program &prog_;
    Diagnostics &diag_;
    std::map<std::tuple<int, int, int>, BackSite> backs_;
    std::set<std::string> made_names_;
    std::string y_text_ = "y", base_ = "grad.";
};

}  // namespace trlc::autodiff_detail
