#pragma once
// memplan — static storage for every tensor, and one arena for all of them.
//
// For each tensor, from the schedule and the access relations: which points
// are alive at once (a point lives from its write to its last read), hence a
// modular storage mapping: slot(p) = Σ_d ((p_d - lower_d) mod modulus_d) · stride_d
// with modulus_d = 1 (one value along d at a time), k (a window of the last k
// points) or the extent (a block).  Kind: point (all moduli 1 except batch
// axes), window (some modulus 1 < k < extent), block otherwise.  Buffers that
// are never alive at the same time may share memory; offsets in one arena come
// from an interval-packing algorithm (see memory/arena.cpp), and the peak is
// the arena's size.  Under a budget (--mem-budget, memory/swap.cpp) buffers not touched by a
// run of a block's children move to a host arena for that run, and the arena is packed again.
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "pdg/pdg.h"
#include "schedule/schedule.h"
#include "support/diagnostics.h"

namespace trlc {

struct Buffer {
    int tensor = -1;  // Program::tensors index
    enum Kind { Point, Window, Block } kind = Point;
    std::vector<int64_t> lower;    // per domain position: smallest coordinate stored
    std::vector<int64_t> modulus;  // per domain position: 1, a window k, or the extent
    std::vector<int64_t> stride;   // per domain position, in slots (row-major over modulus)
    std::vector<int64_t> extent;   // per domain position: the domain's extent (max - lower + 1)
    std::vector<bool> batch;       // per domain position: a batch axis (modulus = extent)
    int64_t slots = 1;             // Π modulus
    int64_t slot_bytes = 0;        // one point's value, static (padded) shape, 16-byte aligned
    int64_t bytes = 0;             // slots · slot_bytes
    int64_t offset = 0;            // in the arena (256-byte aligned)
    int donated_from = -1;         // Program::tensors index whose buffer this one reuses
    std::string live_range;        // readable: "ret_1(15) .. ret_1(0)" / statements spanned
    std::string dealloc_after;     // readable: statement after which the buffer is dead
    /** Some point is written in the checkpointed loop and read after the end of its iteration
     *  (memory/checkpoint_live.cpp): a checkpoint holds this buffer. */
    bool checkpointed = false;
    /** Per domain position of a block buffer (empty otherwise): the widest window, in points,
     *  that one instance of any statement reads of this tensor along it (1: single points;
     *  the extent when some read spans it all or is unbounded; 0: never read).  A window
     *  narrower than a whole stored position means the schedule, not the reads, keeps it
     *  all: a reader runs after later points are written (--emit=memplan says so). */
    std::vector<int64_t> read_window;
    /** Slot index of tensor point "p" (full domain coordinates). */
    int64_t slot_of(const std::vector<int64_t> &p) const;
};

/** A buffer moved to the host arena while a run of consecutive children of a Block of the loop
 *  nest does not touch it (--mem-budget; memory/swap.cpp): copied out of the arena before child
 *  `first` runs and back after child `last` has run, every time the block runs.  Meanwhile its
 *  arena bytes may hold other buffers. */
struct Swap {
    int buffer = -1;                  // MemPlan::buffers index
    const LoopNode *block = nullptr;  // a Block of the nest plan_memory was given (Schedule::root)
    size_t first = 0, last = 0;       // children [first, last] of block
    int64_t host_offset = 0;          // in the host arena (256-byte aligned)
    std::string run_first, run_last;  // readable: the first and last statements called in the run
};

/** A buffer of which the arena holds one slice at a time (--mem-budget; memory/staging.cpp): the
 *  points whose coordinates at `positions` equal the iterators `vars` of enclosing loops, the
 *  innermost of which is `loop`.  Each iteration of `loop`'s body starts by copying its slice
 *  from the host arena into the buffer's arena bytes and ends by copying it back.  The buffer's
 *  storage (modulus 1 at those positions) addresses the slice; the host arena keeps every slice,
 *  slice (Σ_k ((c_k - lower_k) mod modulus_k) · host_stride_k) at host_offset + that ·
 *  slice_bytes. */
struct Staging {
    int buffer = -1;                                   // MemPlan::buffers index
    const LoopNode *loop = nullptr;                    // a For of the nest plan_memory was given
    std::vector<int> positions;                        // domain positions of the tensor, outer loop first
    std::vector<int> vars;                             // per position: the LoopNode::var whose iterator it equals
    std::vector<int64_t> lower, modulus, host_stride;  // per position: the storage before staging
    int64_t slice_bytes = 0;                           // = the buffer's bytes now
    int64_t host_offset = 0;                           // in the host arena (256-byte aligned)
};

struct MemPlan {
    int64_t peak_bytes = 0;       // = arena size
    std::vector<Buffer> buffers;  // one per non-load tensor, in Program::tensors order
    /** Per statement (Schedule::statements index): tensors whose points read for the last
     *  time by an instance of it may be freed after it (for poisoning and codegen). */
    std::vector<std::vector<int>> frees_after;
    /** What a checkpoint at the end of an iteration of the outermost loop holds (issue 15;
     *  memory/checkpoint_live.cpp): the checkpointed buffers' arena intervals (offset, bytes),
     *  sorted and merged.  Empty when the schedule has no such loop. */
    std::vector<std::pair<int64_t, int64_t>> checkpoint_ranges;
    /** The statements (Schedule::statements indices) of the loop the ranges were planned for
     *  (schedule.h: checkpoint_loop of the nest given to plan_memory); sorted. */
    std::vector<int> checkpoint_statements;
    /** --mem-budget: the budget (0: none), the peak planned without swaps, the host arena's
     *  size (the swapped buffers and the staged buffers' slices), the swaps (by buffer and first
     *  child) and the stagings. */
    int64_t budget = 0;
    int64_t unconstrained_peak = 0;
    int64_t host_bytes = 0;
    std::vector<Swap> swaps;
    std::vector<Staging> stagings;     // by buffer
    int64_t checkpoint_bytes() const;  // Σ bytes of checkpoint_ranges
    int buffer_of(int tensor) const;   // index into buffers, or -1
    /** Whether buffers "a" and "b" (indices into buffers; -1: none) share arena bytes. */
    bool overlap(int a, int b) const;
};

/** "checkpoint_statements": the statements of the loop the checkpoint ranges are planned for
 *  (the run-time bound check plans the program at another bound value for the compiled
 *  program's loop); nullptr: those of checkpoint_loop(sched.root). */
MemPlan plan_memory(const ir::Program &prog, const Pdg &pdg, const Schedule &sched, Diagnostics &diag,
                    const std::vector<int> *checkpoint_statements = nullptr, int64_t budget = 0);

/** --emit=memplan: per tensor storage kind, extent, bytes, live range, offset, donation; peak. */
void print_memplan(const ir::Program &prog, const MemPlan &m, std::ostream &out);
/** The `"memplan"` section of --emit=json: {"peak_bytes": N, "buffers": [{"tensor",
 *  "storage": "point|window|block", "extent", "bytes", "offset", "donated_from",
 *  "checkpointed", "read_window" (block buffers: Buffer::read_window)}]}. */
std::string memplan_to_json(const ir::Program &prog, const MemPlan &m);

}  // namespace trlc
