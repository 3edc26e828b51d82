#include "interp/interpreter.h"
namespace trlc {
int interpret(const ir::Program &, const InterpOptions &, Diagnostics &) {
    internal_error("interpreter not implemented yet", __FILE__, __LINE__);
}
}  // namespace trlc
