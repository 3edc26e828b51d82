// schedule — schedule_program: statements → flow dependences → isl schedule →
// loop nest (issue 3 §1–2).  The stages live in statements.cpp, dependences.cpp,
// schedule_pdg.cpp and build_ast.cpp (the loop nest's order checked by ast_order.cpp);
// printers in schedule_printer.cpp.
// Source: the isl manual (Scheduling, AST Generation) and the TimeRL paper (Silvestre &
// Pietzuch, arXiv 2501.05408).  Any isl failure becomes a diagnostic, never a crash.
#include "schedule/schedule.h"

#include "pdg/pdg_impl.h"
#include "schedule/schedule_impl.h"

#include "support/time_passes.h"

namespace trlc {

Schedule::Schedule() : impl_(std::make_unique<ScheduleImpl>()) {}
Schedule::~Schedule() = default;
Schedule::Schedule(Schedule &&) noexcept = default;
Schedule &Schedule::operator=(Schedule &&) noexcept = default;

Schedule schedule_program(const ir::Program &prog, const Pdg &pdg, const std::vector<bool> &batch_dims,
                          const ScheduleOptions &opts, Diagnostics &diag) {
    Schedule s;
    s.batch_dims = batch_dims;
    s.batch_dims.resize(prog.dims.size(), false);
    try {
        {
            PassTimer timer("statements and dependences");
            build_statements(prog, pdg, s);
            build_dependences(pdg, s);
        }
        build_schedule(prog, pdg, opts, diag, s);  // the loop nest too (checked)
    } catch (const isl::exception &e) {
        diag.error(std::string("scheduling failed: isl: ") + (e.what() ? e.what() : "error"));
    } catch (const std::runtime_error &e) {
        diag.error(std::string("scheduling failed: ") + e.what());
    }
    return s;
}

}  // namespace trlc
