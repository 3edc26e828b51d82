#pragma once
// schedule — the execution order of a checked program, decided by isl.
//
// A *statement* is one equation of a tensor (or an emit / save) over its
// effective domain (compiler/pdg), minus the dims chosen as *batch axes* by
// vectorization: one statement instance computes the tensor at every value of
// its batch dims at once.  The schedule (isl_schedule from validity =
// flow dependences, proximity, coincidence; isl manual, "Scheduling") becomes an
// isl AST, converted here into a small loop-nest IR (`LoopNode`) that the
// scheduled interpreter walks and the code generator prints.
//
//   statement ret_1[t] : 0 <= t <= 14      (ret's general equation)
//   schedule  { rew_0[t] -> [-t, 0]; ret_1[t] -> [-t, 1]; ... }
//   loop nest for (c0 = -15; c0 <= 0; c0 += 1) { rew_0(-c0); ret_1(-c0); }
#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "pdg/pdg.h"
#include "support/diagnostics.h"

namespace trlc {

/** One statement: equation "equation" of PDG node "node" (a tensor, emit or save). */
struct Statement {
    std::string name;  // isl tuple name, e.g. "ret_1", "emit_returns", "save_0"
    enum Kind { Tensor, Emit, Save } kind = Tensor;
    int index = -1;     // Program::tensors / emits / saves index
    int equation = -1;  // Tensor: index into Tensor::equations
    /** Domain dims of the statement instance, in order (Program::dims indices):
     *  the tensor's (or emit's) dims without the batch dims. */
    std::vector<int> dims;
    /** Positions (in the tensor's / emit's full domain) that are batch axes. */
    std::vector<int> batch_positions;
    Loc loc;
};

/** An integer expression of the loop nest (from isl_ast_expr). `Var` reads the
 *  iterator of the enclosing For with id `var`.  `Bound` (only in a loop nest made
 *  parametric by parametric_loop_nest, schedule/runtime_loop_nest.h) reads the run-time
 *  value of program bound number `var` (Program::bounds order); `value` holds its compiled
 *  value. */
struct AstExpr;
using AstExprPtr = std::shared_ptr<const AstExpr>;
struct AstExpr {
    enum Op {
        Int,
        Var,
        Neg,
        Add,
        Sub,
        Mul,
        FloorDiv,
        Mod,
        Min,
        Max,
        Select,
        Lt,
        Le,
        Gt,
        Ge,
        Eq,
        And,
        Or,
        Bound
    } op = Int;
    int64_t value = 0;  // Int; Bound: the compiled value
    int var = -1;       // Var; Bound: the bound's index
    std::vector<AstExprPtr> args;
};
int64_t eval_ast_expr(const AstExpr &e, const std::vector<int64_t> &iterators);

struct LoopNode;
using LoopNodePtr = std::shared_ptr<const LoopNode>;
/** The loop nest.  For: `for (it = init; cond; it += step) body` with iterator
 *  id `var` (index into the iterator vector); If: cond ? then : else_;
 *  Block: children in order; User: run statement `stmt` at the point whose
 *  coordinates (in Statement::dims order) are `args`. */
struct LoopNode {
    enum Kind { For, If, Block, User } kind = Block;
    int var = -1;
    AstExprPtr init, cond, step;
    AstExprPtr if_cond;
    std::vector<LoopNodePtr> children;  // For: {body}; If: {then[, else]}; Block: items
    int stmt = -1;
    std::vector<AstExprPtr> args;
};

struct ScheduleImpl;  // isl objects (schedule/schedule_impl.h, private)

struct ScheduleOptions {
    std::string load_schedule;  // trl-opt --load-schedule=FILE: isl YAML schedule tree
    /** How the outermost band is chosen (schedule/outer_band.h): "auto" tries the dims
     *  outer_band_candidates names, "none" lets isl schedule the whole program, any other value
     *  is the one dim to try (a warning when it cannot be the outer band). */
    std::string outer_band = "auto";
    /** The schedule cache's directory (schedule/schedule_cache.h; support/cache_key.h's
     *  build_cache_dir()); "" computes every schedule (--no-cache, TRLC_CACHE_DIR=off). */
    std::string cache_dir;
};

class Schedule {
public:
    Schedule();
    ~Schedule();
    Schedule(Schedule &&) noexcept;
    Schedule &operator=(Schedule &&) noexcept;

    std::vector<Statement> statements;
    /** Per Program::dims index: whether the dim is a batch axis program-wide. */
    std::vector<bool> batch_dims;
    LoopNodePtr root;
    int num_iterators = 0;

    ScheduleImpl &impl() { return *impl_; }
    const ScheduleImpl &impl() const { return *impl_; }

private:
    std::unique_ptr<ScheduleImpl> impl_;
};

/** Build statements (dropping the batch dims chosen by the vectorize pass),
 *  schedule constraints, the isl schedule and its loop nest.  A schedule that
 *  cannot be found or loaded is reported to "diag". */
Schedule schedule_program(const ir::Program &prog, const Pdg &pdg, const std::vector<bool> &batch_dims,
                          const ScheduleOptions &opts, Diagnostics &diag);

/** --emit=schedule: the isl schedule tree (YAML, re-readable by --load-schedule),
 *  then the loop nest as C-like text naming the statements. */
void print_schedule(const Schedule &s, std::ostream &out);
/** The `"schedule"` section of --emit=json: {"tree": YAML, "loop_nest": text,
 *  "statements": [{"name", "domain", "batch"}]}. */
std::string schedule_to_json(const Schedule &s);

/** trl-opt --print-dependences: the flow dependences, one sorted line per piece,
 *  producer instance -> consumer instance (concrete):
 *  `ret_1[t] -> ret_1[t' = -1 + t] : 1 <= t <= 14`. */
std::string dependences_to_string(const Schedule &s);

/** Walk the loop nest in execution order: "fn"(statement index, instance coordinates
 *  in Statement::dims order) for every statement instance. */
void for_each_instance(const Schedule &s, const std::function<void(int, const std::vector<int64_t> &)> &fn);

/** The loop whose iterations a generated program checkpoints at (`--checkpoint`, issue 15;
 *  runtime/rt/trl_checkpoint.cpp): among the loops at the top of "root" (reached through blocks,
 *  never through an if or another loop), the one with the most statement calls in its body;
 *  nullptr when the nest has none.  The memory plan and the code generator both ask, so the
 *  live ranges a checkpoint holds (MemPlan::checkpoint_ranges) belong to the loop codegen marks. */
const LoopNode *checkpoint_loop(const LoopNode *root);
/** The statements (Schedule::statements indices) called in the body of "loop", sorted, once. */
std::vector<int> statements_in(const LoopNode &loop);
/** The statements called after "loop" in the nest "root" (in program order, so executed after
 *  it when "loop" is at the top: checkpoint_loop), sorted, once.  Their instances may have
 *  times inside the loop's range: isl puts `save_0[] -> [977]` after a loop over 0..977. */
std::vector<int> statements_after(const LoopNode *root, const LoopNode *loop);

}  // namespace trlc
