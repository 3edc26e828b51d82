#include "interp/interpreter.h"
#include "memory/memplan.h"
#include "schedule/schedule.h"

namespace trlc {

int interpret_scheduled(const ir::Program &, const Schedule &, const MemPlan &, const InterpOptions &,
                        Diagnostics &) {
    internal_error("scheduled interpreter not implemented yet", __FILE__, __LINE__);
}

}  // namespace trlc
