#pragma once
// schedule_impl — the isl objects behind a Schedule.  Private to compiler/schedule;
// compiler/memory and compiler/interp .cpp files may include it (isl stays out of
// public headers).
//
// Every object lives in the PDG's isl context (pdg.impl().isl.ctx()) and is
// *concrete*: the context's parameter values are substituted and the
// parameters projected out, so sets read `{ ret_1[t] : 0 <= t <= 14 }`.
// Tuple names: statement instances use Statement::name (`ret_1`, `emit_returns`,
// `save_0`); tensor points use the PDG tuple names (`ret`, `tuple_a_b`).
// Coordinates of an instance: the tensor's (emit's) point without the batch
// dims, in domain order (Statement::dims).
//
// Deallocation statements `D_<tensor>` (one per scheduled tensor, instances =
// the tensor's points without batch dims) exist only while the schedule is
// computed: they make isl's proximity favour short live ranges
// (isl manual, "Schedule Constraints": proximity).  They are removed from `schedule` (intersect_domain
// with `domain`) before the AST is built, so they appear neither in the loop
// nest nor in the printed tree, and `domain` never contains them.
#include <isl/cpp.h>

#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "schedule/schedule.h"

namespace trlc {

/** One flow dependence family: the reads of PDG edge "edge" by statement "dst"
 *  of points written by statement "src": { src[...] -> dst[...] } (concrete). */
struct FlowDep {
    int edge = -1;  // PdgImpl::edges index
    int src = -1;   // Schedule::statements index (producer)
    int dst = -1;   // Schedule::statements index (consumer)
    isl::map rel;
};

struct ScheduleImpl {
    /** Statement instances (no deallocation statements). */
    isl::union_set domain;
    /** The isl schedule tree over `domain`. */
    isl::schedule schedule;
    /** instance → time vector; all ranges in one (unnamed) space; lexicographic
     *  order of the range = execution order. */
    isl::union_map schedule_map;
    /** instance → tensor points it defines, batch dims expanded:
     *  { act_0[i, t] -> act[b, i, t] : 0 <= b < B }.  Emits and saves write nothing. */
    isl::union_map writes;
    /** instance → tensor points it reads (loads included: their values exist from
     *  the start and have no writer). */
    isl::union_map reads;
    /** producer instance → consumer instance (union of `deps`). */
    isl::union_map flow;
    std::vector<FlowDep> deps;
    /** Per statement: its instance set (same order as Schedule::statements). */
    std::vector<isl::set> stmt_domain;
    /** Per statement: instance → points of its PDG node (tensor / emit / save),
     *  batch dims expanded (for a tensor statement: its part of `writes`). */
    std::vector<isl::map> stmt_points;
    /** The isl AST the loop nest was converted from (null before the AST is built). */
    isl::ast_node ast;
};

}  // namespace trlc

namespace trlc {

class Pdg;

// ---- stages of schedule_program (one file each) ------------------------------------

/** statements.cpp: Schedule::statements, stmt_domain, stmt_points, domain, writes, reads. */
void build_statements(const ir::Program &prog, const Pdg &pdg, Schedule &s);
/** statements.cpp: { node[full] -> stmt[non-batch] } on "points" (a PDG node's points, its
 *  batch positions projected out, the range named "stmt"); parametric sets stay parametric. */
isl::map projection(const isl::set &points, const std::vector<int> &batch_positions, const std::string &stmt);
/** statements.cpp: "sub" (taken) under a band of "mupa" (taken) whose permutable flag and
 *  coincident members are those of band node "like" (not taken): how a band is rebuilt over
 *  another domain (schedule_pdg.cpp, runtime_loop_nest.cpp). */
isl_schedule *insert_band_like(isl_schedule *sub, isl_multi_union_pw_aff *mupa, isl_schedule_node *like);
/** statements.cpp: the children of sequence or set node "node", child(i, copy of "domain")
 *  each, in sequence in child order, or in "order" when given ("domain" taken); null as soon
 *  as a child is null. */
isl_schedule *sequence_children(isl_schedule_node *node, isl_union_set *domain,
                                const std::function<isl_schedule *(int, isl_union_set *)> &child,
                                const std::vector<int> *order = nullptr);
/** sequence_order.cpp: an order of the children of sequence node "seq" (indices, a
 *  permutation of 0 .. n-1) that keeps every flow dependence between instances at the same
 *  time of the bands above and the order of emits and saves, and runs the readers of a
 *  tensor before a child that writes it at the same time where the dependences allow
 *  (shorter live ranges, fewer slots); the identity when nothing moves. */
std::vector<int> storage_order(isl_schedule_node *seq, const Schedule &s);
/** dependences.cpp: deps and flow from the PDG edges composed with the writers. */
void build_dependences(const Pdg &pdg, Schedule &s);
/** dependences.cpp: for the first map of "flow" (producer instance -> consumer instance) some
 *  of whose pairs "time" (instance -> time vector) does not run producer strictly first
 *  (lexicographically), its pairs as times (producer time -> consumer time); a null map when
 *  every pair is ordered. */
isl::map first_unordered(const isl::union_map &flow, const isl::union_map &time);
/** schedule_pdg.cpp: impl().schedule and schedule_map, computed by isl or loaded from
 *  opts.load_schedule, and the loop nest (build_loop_nest; a computed schedule whose loop
 *  nest breaks a dependence gives way to the next scheduler attempt, a loaded one is an
 *  internal error); false (after a diagnostic) when there is none. */
bool build_schedule(const ir::Program &prog, const Pdg &pdg, const ScheduleOptions &opts, Diagnostics &diag,
                    Schedule &s);
/** build_ast.cpp: impl().ast and Schedule::root / num_iterators, checked by
 *  check_loop_nest_order; when isl's AST breaks a dependence, built again with every band
 *  member "separate" and checked again; throws AstOrderError (naming the first AST's
 *  violation) when that one breaks a dependence too. */
void build_loop_nest(Schedule &s);

/** The loop nest isl built runs some instance in an order the dependences forbid; what()
 *  names the two instances (check_loop_nest_order). */
struct AstOrderError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/** ast_order.cpp: the iteration schedule of loop nest "root" over the statements of "s":
 *  { S[instance] -> [t0, ..., tn] }, all ranges in one space padded with 0, whose
 *  lexicographic order is the order in which walking "root" runs the instances (each node
 *  on the path from the root adds one dim: Block the child's position, If 0 / 1, For its
 *  iterator).  AstExpr::Bound k reads isl parameter params[k].  Null with the reason in
 *  "why" when the nest uses a construct the relation cannot express (a loop whose step is
 *  not a positive constant or whose condition is not an upper bound of its iterator). */
isl::union_map loop_nest_schedule(const Schedule &s, const LoopNode &root, isl::ctx ctx,
                                  const std::vector<std::string> &params, std::string *why);
/** ast_order.cpp: "" when s.root runs every instance of impl().domain exactly once and
 *  every flow dependence (impl().flow) producer strictly first; else what is wrong, e.g.
 *  "isl's AST runs mask_0[0, 0] before fin_1[0, 0] which it reads (the schedule map orders
 *  fin_1[0, 0] at [...] before mask_0[0, 0] at [...])". */
std::string check_loop_nest_order(const Schedule &s);
/** ast_order.cpp: the same for a parametric loop nest "root" (runtime_loop_nest.cpp) over
 *  the parametric statement "domain" and "flow" dependences: "" when, for every value of
 *  the parameters, it runs each instance of "domain" once and each flow pair producer first.
 *  "params": isl parameter name → (Program::bounds index, compiled value), as for
 *  loop_nest_from_ast. */
std::string check_loop_nest_order(const Schedule &s, const LoopNode &root, const isl::union_set &domain,
                                  const isl::union_map &flow,
                                  const std::map<std::string, std::pair<int, int64_t>> &params);

/** isl text with the pieces of each top-level union (`{ a; b }`) sorted: stable output. */
std::string sorted_union_text(const std::string &isl_text);

}  // namespace trlc
