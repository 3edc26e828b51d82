#pragma once
// runtime_bounds — which bounds of a program its generated executable may change at run time
// (`--bound NAME=V`, issue 4 §3): those that size no buffer and that code generation does not
// compile in anywhere except the loop nest, whose loops then read the run-time value.
#include "codegen/emit_program.h"
#include "driver/pipeline.h"
#include "frontend/source.h"
#include "memory/memplan.h"
#include "pdg/pdg.h"
#include "schedule/schedule.h"

namespace trlc {

/** Fill codegen.bounds (one entry per prog.bounds) and codegen.loop_nest for the program that
 *  "opts" compiles ("prog", "pdg", "sched", "plan" are its stages at the compiled values).
 *  Compiles the program again at other values of each candidate bound; no message is printed
 *  (a value at which the program does not compile only rules the bound out). */
void find_runtime_bounds(const DriverOptions &opts, const ir::Program &prog, const Pdg &pdg,
                         const Schedule &sched, const MemPlan &plan, const SourceManager &sm,
                         CodegenOptions &codegen);

}  // namespace trlc
