#pragma once
// runtime_bounds — which bounds of a program its generated executable may change at run time
// (`--bound NAME=V`, issue 4 §3): those that size no buffer and that code generation does not
// compile in anywhere except the loop nest, whose loops then read the run-time value, and the
// kernels that read the bound as a value (TRLG_BOUND(k), codegen/expr_emitter.h).
#include <memory>

#include "codegen/emit_program.h"
#include "driver/pipeline.h"
#include "memory/memplan.h"
#include "pdg/pdg.h"
#include "schedule/schedule.h"
#include "support/source.h"

namespace trlc {

/** The check, started by start_runtime_bounds before the memory plan is made. */
struct RuntimeBoundsCheck;

/** Starts the part of find_runtime_bounds that needs no memory plan ("prog", "pdg", "sched"
 *  and "sm" must outlive the result): the first bound it will check, at the first other
 *  value, compiled on a thread of its own (its own isl context) while the caller makes the
 *  memory plan on this one.  The result goes to find_runtime_bounds; dropped, it waits for
 *  that thread. */
std::shared_ptr<RuntimeBoundsCheck> start_runtime_bounds(const DriverOptions &opts, const ir::Program &prog,
                                                         const Pdg &pdg, const Schedule &sched,
                                                         const SourceManager &sm);

/** Fill codegen.bounds (one entry per prog.bounds) and codegen.loop_nest for the program that
 *  "opts" compiles ("prog", "pdg", "sched", "plan" are its stages at the compiled values;
 *  "codegen" holds the code generation flags).  The rule is runtime_bounds.cpp's header:
 *  deterministic, one more compilation without the scheduler per bound checked; a value at
 *  which the program does not compile only rules the bound out (no message).  False after
 *  an error in "diag": opts.runtime_bound names a bound that does not exist or does not
 *  qualify.  "started": start_runtime_bounds's for the same program, or null. */
bool find_runtime_bounds(const DriverOptions &opts, const ir::Program &prog, const Pdg &pdg, const Schedule &sched,
                         const MemPlan &plan, const SourceManager &sm, CodegenOptions &codegen, Diagnostics &diag,
                         RuntimeBoundsCheck *started = nullptr);

}  // namespace trlc
