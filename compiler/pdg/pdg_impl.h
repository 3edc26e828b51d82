#pragma once
// pdg_impl — the isl objects behind a Pdg.  Private: only compiler/pdg/*.cpp and
// compiler/checks/*.cpp include this header (isl stays out of public headers).
//
// Every isl object here lives in the space of the program's bounds as
// parameters (`[B, T] -> { ... }`) and is exact *without* the context; the
// context `[B, T] -> { : B = 4 and T = 8 }` fixes the values and every check
// intersects with it.  Printers show sets with the context applied and the
// parameters projected out (concrete numbers), next to a `context:` line.
#include <isl/cpp.h>

#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "pdg/pdg.h"

namespace trlc {

/** Owns one isl_ctx (isl::ctx does not): created first in PdgImpl, freed last.
 *  isl errors become isl::exception (no messages on stderr). */
class IslContext {
public:
    IslContext();
    ~IslContext();
    IslContext(const IslContext &) = delete;
    IslContext &operator=(const IslContext &) = delete;
    isl::ctx ctx() const { return isl::ctx(raw_); }
    isl_ctx *raw() const { return raw_; }

private:
    isl_ctx *raw_;
};

/** One equation of a tensor (or the single pseudo-equation of an emit/save). */
struct PdgEquation {
    Loc loc;
    std::vector<int> spec;  // per pattern position: 2 constant, 1 shift, 0 var
    /** { [t] : 0 <= t < T and guard } over the equation's variables (unnamed tuple). */
    isl::set vars;
    /** { [t] -> x[t'] : t' = t + 1 } variable point → tensor point it defines. */
    isl::map pattern;
    /** { x[t] : 1 <= t <= T } the points the pattern covers. */
    isl::set image;
    /** image minus the images of more specific equations of the same tensor. */
    isl::set effective;
    std::vector<int> edges;  // indices into PdgImpl::edges, in body order
    bool synthetic = false;  // the identity pseudo-equation of an emit, save or load
    /** The points of effective that no output needs (pdg/dead_points.cpp), removed from it;
     *  none before that pass (an optional: isl's C++ objects may not be copied null). */
    std::optional<isl::set> dead;
};

/** A PDG node: a tensor, or an output (emit / save) that only consumes. */
struct PdgNode {
    enum Kind { Tensor, Emit, Save } kind = Tensor;
    std::string name;   // tensor name; `emit "loss"`; `save "w.npy"`
    std::string tuple;  // isl tuple name (tensor name; emit_loss; save_0)
    int ir_index = -1;  // index into Program::tensors / emits / saves
    std::vector<std::string> dim_names;
    Loc loc;
    std::string dtype;           // "f32", … ; "tuple" for a tuple type
    std::string type;            // "f32[4]", "(f32, i32)"
    std::vector<int64_t> shape;  // static extents (max for dynamic ones)
    bool is_load = false;
    /** { x[t] : ... } every defined point: the union of the equations' images
     *  (a load defines its whole box; an output's domain is its variable box). */
    isl::set domain;
    std::vector<PdgEquation> equations;
    /** A note for an error about a read of this consumer at an undefined point ("" none):
     *  an emit whose guard reads values says that such a guard restricts nothing. */
    std::string read_note;
};

/** A read: one Read node of a consumer's equation body. */
struct PdgEdge {
    int consumer = -1;  // PdgImpl::nodes index
    int equation = -1;  // index into the consumer's equations
    int producer = -1;  // PdgImpl::nodes index (a tensor)
    Loc loc;            // the Read node
    std::string text;   // the read as written, rebuilt from the IR: x[t+1]
    /** { y[t] -> x[t'] : t' = t + 1 } consumer point → producer points, restricted
     *  to the consumer equation's effective domain (slices: one-to-many). */
    isl::map access;
    /** The Read's domain indices as in the IR (clamp_pieces reads their min/max). */
    std::vector<ir::ReadIndex> index;
};

struct PdgImpl {
    IslContext isl;                                       // first member: destroyed after every isl object below
    std::vector<std::pair<std::string, int64_t>> params;  // bound name → value, sorted
    /** [T] -> { : T = 8 } */
    isl::set context;
    std::vector<std::string> program_dims;  // Program::dims names, in order (batch-axis printing)
    std::vector<PdgNode> nodes;             // tensors in definition order, then emits, then saves
    std::vector<PdgEdge> edges;
};

// ---- helpers shared by pdg and checks (pdg/to_isl.cpp) --------------------------------

/** to_isl.cpp: per output position k of access relation "reads" (consumer instance -> the
 *  points it reads), the widest extent minus one of the points one consumer instance reads
 *  along k: 0 for a point read, n - 1 for a window of n points (r[t-n+1:t+1]); LONG_MAX when
 *  unbounded or not computable (isl_map_lexmax/lexmin_pw_multi_aff, isl_pw_aff_max_val). */
std::vector<long> read_spans(const isl::map &reads);

/** isl's own text of any isl object. */
template <class T>
std::string isl_text(const T &obj) {
    std::ostringstream ss;
    ss << obj;
    return ss.str();
}

/** "s" under the context with the parameters projected out: concrete points. */
isl::set concrete(const PdgImpl &g, const isl::set &s);
isl::map concrete(const PdgImpl &g, const isl::map &m);

/** isl text of "s"/"m" (concrete), its pieces sorted so that output is stable:
 *  `{ h[t] : 0 <= t <= 7 }`, `{ h[t] -> h[t' = -1 + t] : 1 <= t <= 8 }`. */
std::string set_to_string(const PdgImpl &g, const isl::set &s);
std::string map_to_string(const PdgImpl &g, const isl::map &m);

/** Describe a (concrete, nonempty) point set for a message, with "names" for
 *  its dims: "t = 8", "t in [0, 7]", "(b, t) = (0, 8)", "b in [0, 3], t in [8, 8]",
 *  "t in [0, 2] or t in [4, 7]", else isl text. */
std::string describe_points(const PdgImpl &g, const isl::set &s, const std::vector<std::string> &names);

/** Tarjan's strongly connected components of the graph of "n" nodes with successor lists
 *  "succ", each sorted, in the order Tarjan completes them: a component comes after every
 *  component reachable from it (reversed, a topological order of the condensation). */
std::vector<std::vector<int>> strongly_connected_components(int n, const std::vector<std::vector<int>> &succ);

/** The coordinates of the lexicographically smallest point of concrete "s". */
std::vector<int64_t> first_point(const isl::set &s);

/** Runs "f" with at most "operations" isl operations on "ctx" (isl_ctx_set_max_operations;
 *  0: no limit); false when f threw isl::exception (the budget ran out, or another isl error),
 *  the context's error then reset.  The limit is 0 again afterwards. */
bool with_operation_budget(isl_ctx *ctx, unsigned long operations, const std::function<void()> &f);

/** R+ of a concrete (parameter-free, finite) "r", exactly, by repeated squaring
 *  (C := C ∪ C∘C until C stops growing; 64 rounds cover any path length), or the C of the
 *  first round for which "enough" (if given) holds: the pairs joined by a path of at most 2^k
 *  steps, a subset of R+.  Returns false if isl exceeded "operations" (checks/no_zero_cycle.cpp). */
bool exact_transitive_closure(const isl::union_map &r, isl::union_map *out, unsigned long operations,
                              const std::function<bool(const isl::union_map &)> &enough = nullptr);

/** The branches of the clamps of read "e" (pdg/clamp_pieces.cpp): the consumer equation's
 *  effective points (parametric, in the consumer's tensor space) partitioned so that on each
 *  piece every min/max of the read's indices (points and slice ends, nested ones too) takes one
 *  branch, i.e. the read is affine there.  Pieces empty under the context are dropped; fewer
 *  than two pieces (no clamp, or none that changes branch on the domain) gives {}.  The order
 *  is isl's piece order, refined index by index: deterministic for one isl version.
 *    p[u] = ob[max(u - 2, 0)]   →   { p[u] : u <= 1 }, { p[u] : u >= 2 }  (within p's points) */
std::vector<isl::set> clamp_pieces(const PdgImpl &g, const PdgEdge &e);

/** "line:col" of "loc". */
std::string loc_string(const Loc &loc);

}  // namespace trlc
