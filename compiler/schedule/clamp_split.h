#pragma once
// clamp_split — index-set splitting of statements at their clamped reads, tried when isl finds
// no schedule of the statements as they are (schedule_pdg.cpp's no-schedule path), and the
// located diagnostic when there is still none.  Private to compiler/schedule.
#include <functional>
#include <string>

#include "schedule/schedule_impl.h"

namespace trlc {

/** isl's scheduler has found no schedule for "sc" (validity, coincidence and proximity over the
 *  statements of "s" and their deallocation statements), with bounded and unbounded
 *  coefficients, and no ILP ran over its budget.  Split each statement whose reads are clamped
 *  (`p[u] = ob[max(u - 2, 0)]`) into pieces on which every clamp takes one branch (pdg
 *  clamp_pieces; at most kClampSplitMaxPieces pieces per statement, reads in body order: the
 *  reads past the cap stay whole), schedule the pieces with "set_options" and "attempt"
 *  (bounded, then unbounded coefficients; Feautrier's algorithm when an ILP ran over its budget
 *  or "accept" refused the result), and copy the schedule back onto the original statements:
 *  each split statement keeps its name and gets a piecewise schedule.  The
 *  statements, reads and memory plan are those of the unsplit program.
 *  Returns accept(schedule) when a schedule was found; otherwise reports the failure to "diag"
 *  (at the clamped reads, with the guard-splitting workaround; without a location when no read
 *  is clamped) and returns false. */
bool schedule_split_clamps(const Pdg &pdg, const Schedule &s, const isl::schedule_constraints &sc,
                           void (*set_options)(isl::ctx ctx, bool bounded, bool outer, bool feautrier),
                           isl::schedule (*attempt)(const isl::schedule_constraints &sc, const std::string &label,
                                                    bool *over_budget),
                           const std::function<bool(isl::schedule)> &accept, Diagnostics &diag);

/** The most pieces one statement is split into. */
constexpr int kClampSplitMaxPieces = 8;

}  // namespace trlc
