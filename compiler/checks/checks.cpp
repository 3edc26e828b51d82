#include "checks/checks.h"
namespace trlc {
void check_reads_defined(const Pdg &, Diagnostics &) {}
void check_no_zero_cycle(const Pdg &, Diagnostics &) {}
}  // namespace trlc
