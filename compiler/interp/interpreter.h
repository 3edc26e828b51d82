#pragma once
// interpreter — `trlc --interpret`: the reference semantics of a program.
//
// Evaluates each needed point of each tensor in the most literal way: on
// demand, memoized per (tensor, point), exactly the equation that defines the
// point (most specific pattern first).  No vectorization, no schedule, no
// memory plan: every later backend must reproduce its outputs.
//   emit   → one JSON object per point, in lexicographic point order (JSON Lines)
//   save   → .npy (one array) or .npz (a tuple: arr_0, arr_1, …)
// Randomness: runtime/trl_philox.h (documented in dsl/README.md).
#include <cstdint>
#include <map>
#include <ostream>
#include <string>

#include "ir/ir.h"
#include "support/diagnostics.h"

namespace trlc {

class Schedule;
struct MemPlan;

struct InterpOptions {
    uint64_t seed = 0;
    std::ostream *log = nullptr;   // JSON Lines destination (stdout when null)
    std::string output_dir = ".";  // where relative `save` paths go
    /** `--input NAME=FILE.npy`: the value of each `input` (dsl/README §7.10). */
    std::map<std::string, std::string> inputs;
    /** `--ranks N`: N data-parallel ranks in one process (interp/ranks.h): every emit record
     *  of every rank, each starting with "rank", in (stream, point, rank) order; saves of rank
     *  0; the digest of the saves every rank holds alike on stderr.  0: one process. */
    int ranks = 0;
};

/** Run "prog"; returns 0, or 1 after reporting a run-time error to "diag". */
int interpret(const ir::Program &prog, const InterpOptions &opts, Diagnostics &diag);

/** `--interpret=scheduled`: run "prog" in the order of "sched", statement instance by
 *  statement instance (batch axes at once), every value stored in and read from one
 *  arena laid out by "plan" (window indexing; freed slots poisoned, so a read after
 *  free or overwrite is an error).  Its output must equal interpret()'s byte for byte. */
int interpret_scheduled(const ir::Program &prog, const Schedule &sched, const MemPlan &plan, const InterpOptions &opts,
                        Diagnostics &diag);

}  // namespace trlc
