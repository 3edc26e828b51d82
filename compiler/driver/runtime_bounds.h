#pragma once
// runtime_bounds — which bounds of a program its generated executable may change at run time
// (`--bound NAME=V`, issue 4 §3): those that size no buffer and that code generation does not
// compile in anywhere except the loop nest, whose loops then read the run-time value, and the
// kernels that read the bound as a value (TRLG_BOUND(k), codegen/expr_emitter.h).
#include "codegen/emit_program.h"
#include "driver/pipeline.h"
#include "memory/memplan.h"
#include "pdg/pdg.h"
#include "schedule/schedule.h"
#include "support/source.h"

namespace trlc {

/** Fill codegen.bounds (one entry per prog.bounds) and codegen.loop_nest for the program that
 *  "opts" compiles ("prog", "pdg", "sched", "plan" are its stages at the compiled values;
 *  "codegen" holds the code generation flags).  The rule is runtime_bounds.cpp's header:
 *  deterministic, one more compilation without the scheduler per bound checked; a value at
 *  which the program does not compile only rules the bound out (no message).  False after
 *  an error in "diag": opts.runtime_bound names a bound that does not exist or does not
 *  qualify. */
bool find_runtime_bounds(const DriverOptions &opts, const ir::Program &prog, const Pdg &pdg, const Schedule &sched,
                         const MemPlan &plan, const SourceManager &sm, CodegenOptions &codegen, Diagnostics &diag);

}  // namespace trlc
