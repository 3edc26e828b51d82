#pragma once
// pdg — the polyhedral dependence graph (TimeRL §4).
//
// Nodes are the equations of the program, each with an isl domain: the set of
// tensor points it defines, with the program's bounds as isl parameters
//   { ret[t] : 0 <= t <= T - 2 }
// Edges are reads: an isl access relation from consumer point to producer point
//   { ret[t] -> ret[t'] : t' = t + 1 }
// (slices give one-to-many relations).  The definedness and zero-cycle checks
// (compiler/checks) are isl computations on this graph.
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "support/diagnostics.h"

namespace trlc {

struct PdgImpl;  // holds the isl context and objects (pdg/pdg.cpp)

class Pdg {
public:
    Pdg();
    ~Pdg();
    Pdg(Pdg &&) noexcept;
    Pdg &operator=(Pdg &&) noexcept;
    PdgImpl &impl() { return *impl_; }
    const PdgImpl &impl() const { return *impl_; }

private:
    std::unique_ptr<PdgImpl> impl_;
};

/** Build the PDG of "prog"; reports overlapping/ambiguous definitions to "diag". */
Pdg build_pdg(const ir::Program &prog, Diagnostics &diag);

/** The dead-points pass (pdg/dead_points.cpp): every tensor equation's effective domain keeps
 *  only the points an emit or save needs, directly or through the tensors that read them (a
 *  cycle of tensors keeps the points that outside reads, and its own kept points, need: an
 *  unread tail of a recurrence inside each step of its outermost non-batch dim goes; a tensor
 *  or cycle nothing else reads is kept whole); the reads' accesses follow.  "batch_dims" (per
 *  Program dim, vectorize's) and "prog"'s bounds say which dims the trimming keeps whole.
 *  Returns the number of equations restricted. */
int restrict_to_needed_points(const ir::Program &prog, const std::vector<bool> &batch_dims, Pdg &g);

/** --emit=pdg: sorted, stable text.  --emit=pdg-dot: Graphviz. */
void print_pdg(const Pdg &g, std::ostream &out);
/** The same, marking batch axes chosen by vectorization ("batch_dims" per Program::dims index). */
void print_pdg(const Pdg &g, std::ostream &out, const std::vector<bool> &batch_dims);
void print_pdg_dot(const Pdg &g, std::ostream &out);
/** The names of the dims marked in "batch_dims" (per Program::dims index), in declaration order. */
std::vector<std::string> batch_dim_names(const Pdg &g, const std::vector<bool> &batch_dims);
/** --emit=json: {"tensors": [{"name","domain","shape","dtype"}], "edges": [{"from","to","access"}]} */
std::string pdg_to_json(const Pdg &g);
/** The same with the vectorization decision: adds "batch_axes": ["b"] at the top level and
 *  "batch": ["b"] (its batch dims) to every tensor and output. */
std::string pdg_to_json(const Pdg &g, const std::vector<bool> &batch_dims);

}  // namespace trlc
