#pragma once
// memplan_impl — the isl side of the memory planner.  Private: only compiler/memory/*.cpp
// and the memory unit tests include this header.
//
// plan_memory (memplan.cpp) fills a `MemInput` from the Schedule's isl objects
// (schedule/schedule_impl.h) and calls `plan_memory_from`; unit tests build a
// `MemInput` by hand (isl::union_map strings in the PDG's context) to test the
// storage computation without the scheduler.
//
// Conventions (notes/issue3.md): statement instances are named by the statement
// (`x_1[t]`), tensor points by the PDG tuple (`x[b, t]`), `schedule_map` maps every
// instance to its time vector (one space), and time is lexicographic order there.
// A point lives from the time of its writer to the time of its last reader
// (inclusive); a point nobody reads lives only at its write.
#include <isl/cpp.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "memory/memplan.h"
#include "pdg/pdg_impl.h"

namespace trlc {

/** What the planner needs from a schedule. */
struct MemInput {
    std::vector<Statement> statements;  // Schedule::statements
    std::vector<bool> batch_dims;       // per Program::dims index
    isl::union_map schedule_map;        // instance -> time
    isl::union_map writes;              // instance -> tensor points it defines
    isl::union_map reads;               // instance -> tensor points it reads
    /** Statements (indices into statements) in the loop a checkpoint ends iterations of
     *  (schedule.h: checkpoint_loop); empty when there is none. */
    std::vector<int> checkpoint_statements;
    /** --mem-budget (0: none) and the loop nest the swaps refer to (its Blocks). */
    int64_t budget = 0;
    const LoopNode *root = nullptr;
};

/** One tensor's point-level facts (concrete isl, no parameters). */
struct TensorLife {
    int tensor = -1;
    isl::map write_time;           // { x[p] -> time }   W
    isl::map last_time;            // { x[p] -> time }   L = lexmax(W ∪ R)
    isl::union_map last_instance;  // { x[p] -> instance } the instance at L(p)
    /** The live times { τ ∈ instance times : some point of x is live at τ }, split by
     *  statement: (LifeContext::stmt_times index, its non-empty part), by increasing index.
     *  (Their union is never built: coalescing it took a fifth of PPO's plan.) */
    std::vector<std::pair<int, isl::set>> live_pieces;
};

/** Union-wide relations that every tensor's life needs, computed once per plan
 *  (live_ranges.cpp); each tensor then extracts its own space instead of composing the
 *  whole program's relations again. */
struct LifeContext {
    isl::set times;                            // every instance's time (one space)
    std::vector<isl::set> stmt_times;          // per statement: its instances' times (non-empty)
    std::vector<std::string> stmt_names;       // per stmt_times entry: the statement's tuple name
    std::vector<isl::map> stmt_time_instance;  // per stmt_times entry: { time -> instance }
    /** stmt_overlap[s][t]: stmt_times[s] and stmt_times[t] intersect (true for s = t; false
     *  otherwise for an injective schedule). */
    std::vector<std::vector<bool>> stmt_overlap;
    isl::union_map point_write_time;  // { x[p] -> time } writes⁻¹ ∘ schedule, all tensors
    isl::union_map point_read_time;   // { x[p] -> time } reads⁻¹ ∘ schedule, all tensors
    isl::union_map point_writer;      // { x[p] -> instance } writes⁻¹
};

/** The live times of "a" and "b" intersect: from the pieces, comparing only statements whose
 *  times meet (live_ranges.cpp). */
bool lives_meet(const TensorLife &a, const TensorLife &b, const LifeContext &lc);

/** The times where "a" and "b" are both live (a set in the time space). */
isl::set meet_times(const TensorLife &a, const TensorLife &b, const LifeContext &lc);

// ---- storage_kinds.cpp ------------------------------------------------------------

/** Successive-modulo storage of a tensor whose points are "domain" (concrete) under the
 *  conflict relation "conflict" ({ x[p] -> x[q] }, symmetric, irreflexive).  Fills lower,
 *  modulus, stride, slots and kind of "buf"; "batch" marks domain positions kept whole. */
void storage_from_conflicts(const isl::set &domain, const isl::map &conflict, const std::vector<bool> &batch,
                            Buffer *buf);

// ---- live_ranges.cpp --------------------------------------------------------------

/** Parameter-free copy of "m" under the context "ctx_params". */
isl::union_map fix_params(const isl::union_map &m, const isl::set &context);

/** The shared relations of "in" (parameter-free); "times" = every instance's time. */
LifeContext life_context(const MemInput &in, const isl::set &times);

/** W, L, last instance and live times of the tensor whose points are "domain"
 *  (concrete). */
TensorLife tensor_life(const isl::set &domain, const LifeContext &lc);

/** { x[p] -> x[q] : p != q, W(p) <= L(q) and W(q) <= L(p) } (lexicographic). */
isl::map point_conflicts(const TensorLife &life);

/** "x_1(3, 0)" for an instance point; "x_1" when it has no coordinates. */
std::string instance_string(const isl::set &instance);

/** The instance scheduled at the (single) time of "time" (a set with one point): the first
 *  statement whose times hold it (one, for an injective schedule), looked up statement by
 *  statement (the union-wide lookup was 15 % of PPO CartPole's memory plan). */
isl::set instance_at(const LifeContext &lc, const isl::set &time);

// ---- donation.cpp ------------------------------------------------------------------

/** { x[p] -> y[q] } reads through single-point accesses (one PDG edge whose access is
 *  single-valued) for the statements of tensors: for y = x, q read by p's instance; for
 *  y != x, q read by p itself and no other point of its instance, at p's batch point
 *  (the batch-kernel conditions in donation.cpp). */
isl::union_map single_point_reads(const ir::Program &prog, const PdgImpl &g, const MemInput &in);

/** { x[p] -> y[q] : the instance writing p is the last reader of q, through a single-point
 *  read } for points p of "out" (domain) and q of "in" (with its life). */
isl::map donatable_pairs(const isl::set &out_domain, const TensorLife &in_life, const LifeContext &lc,
                         const isl::union_map &single_reads);

// ---- checkpoint_live.cpp -------------------------------------------------------------

/** The iteration boundaries of the checkpointed loop in the time space: "dim", the loop's
 *  time dim (-1: no loop, or one time only), "prefix" the time dims before it (constant over
 *  the loop), "crossing" the pairs { [w -> l] : w in the loop, l after the loop or in a later
 *  iteration (l[dim] > w[dim]) } (a set of wrapped time pairs). */
struct IterationBoundary {
    int dim = -1;
    std::vector<int64_t> prefix;
    isl::set crossing;
    isl::set in_loop;  // the times with the loop's prefix
    /** Tuple names of the tensor points that statements outside the loop read (those after
     *  it; one before it reads nothing the loop writes). */
    std::vector<std::string> read_after;
};
void iteration_boundary(const MemInput &in, const LifeContext &lc, IterationBoundary *out);

/** Some point of the tensor (its points: "domain") is written in the loop and alive at the end
 *  of its iteration, or read after the loop (true when "b" has no dim: the buffer is kept). */
bool crosses_iterations(const isl::set &domain, const TensorLife &life, const IterationBoundary &b);

/** Sorted, merged (offset, bytes) intervals; empty ones dropped. */
std::vector<std::pair<int64_t, int64_t>> merge_ranges(std::vector<std::pair<int64_t, int64_t>> r);

// ---- arena.cpp -----------------------------------------------------------------------

/** Greedy-by-size offsets (arena.cpp): items "bytes", symmetric "conflict" matrix;
 *  offsets aligned to "align".  Returns the peak (max offset + bytes; 0 when empty). */
int64_t pack_arena(const std::vector<int64_t> &bytes, const std::vector<std::vector<bool>> &conflict, int64_t align,
                   std::vector<int64_t> *offsets);

// ---- swap.cpp -------------------------------------------------------------------------

/** What the arena packing and the swap planner share (memplan.cpp). */
struct ArenaState {
    std::vector<TensorLife> lives;                 // per MemPlan::buffers index
    std::vector<std::vector<bool>> live_conflict;  // buffers' live times meet
    std::vector<int> group;                        // donation chain (shares one offset)
    std::vector<std::set<int>> touched;            // statements (Schedule indices) reading or writing it
    /** (statement, buffer) → its reads and writes of the buffer's points (instance -> points). */
    std::map<std::pair<int, int>, std::vector<isl::map>> accesses;
};

/** Offsets for every buffer (one item per donation group; two items conflict when members'
 *  lives meet) by greedy-by-size packing; sets plan->peak_bytes and the offsets. */
void place_buffers(const ArenaState &st, MemPlan *plan);

/** --mem-budget: while the arena exceeds in.budget, moves buffers to a host arena over runs of
 *  a block's children that do not touch them, removing those runs' times from their lives, and
 *  packs again; an error in "diag" when no set of swaps brings the arena under the budget. */
void plan_swaps(const ir::Program &prog, const MemInput &in, const LifeContext &lc, ArenaState &st, MemPlan *plan,
                Diagnostics &diag);

// ---- staging.cpp ----------------------------------------------------------------------

/** --mem-budget, before swaps: while the arena exceeds in.budget, keeps one slice of a buffer in
 *  the arena at a time where every statement touching it runs inside loops whose iterators fix
 *  some of its coordinates (MemPlan::stagings), largest saving first; packs again. */
void plan_stagings(const MemInput &in, ArenaState &st, MemPlan *plan);

/** Undoes staging "k" of plan->stagings on its buffer's storage (for dropping unneeded ones). */
void unstage(MemPlan *plan, size_t k);

// ---- memplan.cpp ---------------------------------------------------------------------

/** The whole plan from a MemInput (all isl objects in g's context). */
MemPlan plan_memory_from(const ir::Program &prog, const PdgImpl &g, const MemInput &in, Diagnostics &diag);

}  // namespace trlc
