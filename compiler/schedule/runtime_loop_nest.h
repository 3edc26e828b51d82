#pragma once
// runtime_loop_nest — the compiled schedule carried over to other bound values (run-time
// `--bound NAME=V`, issue 4 §3; driver/runtime_bounds.cpp decides which bounds).  Private to
// compiler/schedule and compiler/driver/runtime_bounds.cpp: isl types appear here.
#include <isl/ast.h>
#include <isl/cpp.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "ir/ir.h"
#include "pdg/pdg.h"
#include "schedule/schedule.h"

namespace trlc {

/** The loop nest of "sched" (the compiled schedule of "prog" / "pdg") for every value of the
 *  bounds in "min_values" (Program::bounds index → smallest value) at once: the statement
 *  domains and flow dependences are rebuilt from the PDG's parametric sets with those bounds
 *  as isl parameters ([I] -> { ... : I >= m }), sched's schedule tree is applied to them
 *  (unchanged, except that a constant time c in [v - 1, v + 1] of a bound compiled at v, a statement
 *  after the loop over it, becomes c - v + I, when "shift"), and isl builds the AST under that context; its parameters read as
 *  AstExpr::Bound.  Proven for every value >= m (and < 2^31) by isl: the schedule orders
 *  every parametric dependence, and the parametric domains equal sched's at the compiled
 *  values.  Null with the reason in "why" otherwise (a statement that exists only at some
 *  values, a piecewise band, a dependence the schedule breaks at some value).  "domains"
 *  (when not null) receives the parametric statement domains and flow dependences as isl
 *  text, for schedule_like's comparison at another value. */
LoopNodePtr parametric_loop_nest(const ir::Program &prog, const Pdg &pdg, const Schedule &sched,
                                 const std::map<int, int64_t> &min_values, bool shift, std::string *why,
                                 std::string *domains = nullptr);

/** What steps 1 to 3 of parametric_loop_nest proved (the parametric domains, dependences,
 *  lifted schedule and context), for its steps 4 and 5 later without redoing them. */
struct ParametricSteps {
    const Schedule *sched = nullptr;
    isl::set context;
    isl::union_set domain;
    isl::union_map flow;
    isl::schedule lifted;
    std::map<std::string, std::pair<int, int64_t>> ast_params;
};

/** Steps 1 to 3 of parametric_loop_nest without isl's AST and the loop nest's order check (its
 *  costly part: 1.7 of PPO CartPole's 2.4 s): true when the parametric domains match and the
 *  schedule orders every parametric dependence, with "domains" as there, and (when "steps" is
 *  not null) what they proved.  The run-time bound check compares the program at another
 *  value against "domains" first, and builds the loop nest only for a bound that passes, from
 *  "steps" (0.07 s of PPO CartPole's compile was steps 1 to 3 again). */
bool parametric_domains(const ir::Program &prog, const Pdg &pdg, const Schedule &sched,
                        const std::map<int, int64_t> &min_values, bool shift, std::string *why, std::string *domains,
                        std::shared_ptr<const ParametricSteps> *steps = nullptr);

/** parametric_loop_nest from what parametric_domains proved ("steps", of the same schedule,
 *  bounds and shift): steps 4 and 5 only. */
LoopNodePtr parametric_loop_nest(const ParametricSteps &steps, std::string *why);

/** "s"'s isl schedule tree as isl text (what schedule_like carries over). */
std::string schedule_tree_text(const Schedule &s);

/** The schedule of "base" (of "base_prog") applied to the same program compiled at other
 *  bound values ("prog" / "pdg" / "batch_dims"): statements and dependences from "pdg",
 *  base's schedule tree ("base_tree": schedule_tree_text(base), so that base's isl context is
 *  not used here and a thread with "pdg"'s own context may call this while another uses base's;
 *  constant times at or past the end
 *  of a changed bound's loop move with the bound, as in parametric_loop_nest),
 *  schedule_map and the loop nest.  False with the
 *  reason in "why" when the statements differ or base's schedule cannot be carried over or
 *  breaks a dependence at these values, or when "domains" (parametric_loop_nest's, if not
 *  empty) at these values are not the statement domains and flow dependences of "pdg": a
 *  guard or index constant that follows a bound (IR constants are concrete: `when t < T - 2`
 *  is `t < 3` at T = 5, `save net[I]` reads net[977]) makes the parametric sets wrong away
 *  from the compiled values.  "out" is
 *  default-constructed on entry.  Without "loop_nest", out.root stays null: no isl AST is built
 *  nor checked (the run-time bound check emits the variant under the parametric loop nest,
 *  whose order parametric_loop_nest proves for every value, this one included). */
bool schedule_like(const ir::Program &prog, const Pdg &pdg, const std::vector<bool> &batch_dims,
                   const ir::Program &base_prog, const Schedule &base, const std::string &base_tree, bool shift,
                   const std::string &domains, Schedule &out, std::string *why, bool loop_nest = true);

/** build_ast.cpp: the LoopNode tree of "ast" over the statements of "s"; an isl parameter
 *  named in "params" (name → Program::bounds index, compiled value) becomes AstExpr::Bound. */
LoopNodePtr loop_nest_from_ast(const Schedule &s, isl_ast_node *ast,
                               const std::map<std::string, std::pair<int, int64_t>> &params);

}  // namespace trlc
