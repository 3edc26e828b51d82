// checkpoint_live — which buffers a checkpoint must hold (issue 15 point 1; dsl/README §7.8).
//
// A generated program checkpoints at the end of an iteration of its outermost loop
// (schedule.h: checkpoint_loop), and a resumed run first runs what comes before that loop
// again, then puts the checkpoint's bytes back and continues with the next iteration.  So a
// checkpoint must hold exactly the points that are written inside the loop at or before the
// boundary and read after it: in a later iteration, or after the loop.  Points written before
// the loop are computed again by the resumed run (the random streams are counter-based and
// the loads are read again, so they come out the same); points whose life ends inside their
// iteration are dead at every boundary.
//
// In the time space of the schedule (memplan_impl.h: instance -> time, lexicographic), the
// loop's instances share a constant prefix of time dims and vary first along dim d, the
// loop's iterator.  With W and L the write time and the end of life of each point
// (live_ranges.cpp), a tensor crosses an iteration boundary when some point p has
//   W(p) in the loop  and  ( L(p) after the loop  or  L(p)[d] > W(p)[d] ),
// or when it is written in the loop and read by a statement outside the loop: isl may give a
// statement it calls after the loop a time inside the loop's range (PPO's `save_0[] -> [977]`
// after a loop over 0 .. 977, whose last iteration writes the saved network), and a statement
// before the loop reads nothing the loop writes, so every statement outside counts as after;
// this also holds for another nest of the same schedule that cuts the loop elsewhere, as long
// as no statement of this loop runs after that one's (codegen checks: checkpoint_table).
// Statements that isl's AST calls before the loop but whose times lie in it (PPO's `net_0[0]
// -> [0]`) count as in the loop, which can only keep more.
// Its whole buffer is then kept (a buffer is one interval of the arena; a window of k points
// is all live at the boundary anyway), and the kept intervals are merged.
//
//   PPO CartPole, before: the whole arena (2,364,928 bytes) in every checkpoint.
//   after:  the parameters, the optimizer's moments, the episode state and the running
//           metrics; the rollout and minibatch buffers, rewritten every iteration, are not.
#include "memory/memplan_impl.h"

#include <algorithm>

namespace trlc {

namespace {

/** The value of dim "k" of "s" when it takes only one value there; false otherwise. */
bool fixed_dim(const isl::set &s, int k, int64_t *value) {
    isl::set one = isl::manage(isl_set_project_out(s.copy(), isl_dim_set, k + 1, s.tuple_dim() - k - 1));
    one = isl::manage(isl_set_project_out(one.release(), isl_dim_set, 0, k));
    if (!one.is_singleton()) return false;
    isl::val v = one.dim_min_val(0);
    if (!v.is_int()) return false;
    *value = v.get_num_si();
    return true;
}

/** The universe of "space" with dims 0 .. k-1 fixed to prefix[0 .. k-1]. */
isl::set with_prefix(const isl::space &space, const std::vector<int64_t> &prefix, int k) {
    isl_set *s = isl_set_universe(space.copy());
    for (int j = 0; j < k; ++j) s = isl_set_fix_si(s, isl_dim_set, j, static_cast<int>(prefix[j]));
    return isl::manage(s);
}

}  // namespace

void iteration_boundary(const MemInput &in, const LifeContext &lc, IterationBoundary *out) {
    IterationBoundary &b = *out;  // filled in place: a copy of null isl objects throws
    if (in.checkpoint_statements.empty() || lc.times.is_null()) return;
    isl::set loop_times = isl::manage(isl_set_empty(lc.times.get_space().release()));
    in.schedule_map.foreach_map([&](isl::map m) {
        const char *name = isl_map_get_tuple_name(m.get(), isl_dim_in);
        for (int s : in.checkpoint_statements)
            if (name && in.statements[s].name == name) loop_times = loop_times.unite(m.range());
    });
    if (loop_times.is_empty()) return;
    const int n = static_cast<int>(loop_times.tuple_dim());
    for (int k = 0; k < n; ++k) {
        int64_t v = 0;
        if (!fixed_dim(loop_times, k, &v)) {
            b.dim = k;
            break;
        }
        b.prefix.push_back(v);
    }
    if (b.dim < 0) {  // one time only: no boundary inside the loop
        b.prefix.clear();
        return;
    }
    const isl::space space = lc.times.get_space();
    const isl::set in_loop = with_prefix(space, b.prefix, b.dim);
    isl::set after = isl::manage(isl_set_empty(space.copy()));
    for (int k = 0; k < b.dim; ++k) {
        isl_set *later = with_prefix(space, b.prefix, k).release();
        later = isl_set_lower_bound_si(later, isl_dim_set, k, static_cast<int>(b.prefix[k] + 1));
        after = after.unite(isl::manage(later));
    }
    isl_map *next = isl_map_from_domain_and_range(in_loop.copy(), in_loop.copy());
    next = isl_map_order_lt(next, isl_dim_in, b.dim, isl_dim_out, b.dim);
    isl_map *to_after = isl_map_from_domain_and_range(in_loop.copy(), after.release());
    b.crossing = isl::manage(isl_map_wrap(isl_map_union(next, to_after)));
    b.in_loop = in_loop;
    in.reads.foreach_map([&](isl::map m) {
        const char *stmt = isl_map_get_tuple_name(m.get(), isl_dim_in);
        const char *point = isl_map_get_tuple_name(m.get(), isl_dim_out);
        bool in_loop_stmt = false;
        for (int s : in.checkpoint_statements)
            if (stmt && in.statements[s].name == stmt) in_loop_stmt = true;
        if (!in_loop_stmt && point) b.read_after.push_back(point);
    });
}

bool crosses_iterations(const isl::set &domain, const TensorLife &life, const IterationBoundary &b) {
    if (b.dim < 0) return true;  // no boundary found: keep the buffer (the safe answer)
    if (life.write_time.is_empty()) return false;
    const char *name = isl_set_get_tuple_name(domain.get());
    if (name && std::find(b.read_after.begin(), b.read_after.end(), name) != b.read_after.end() &&
        !life.write_time.range().intersect(b.in_loop).is_empty())
        return true;
    isl::set lives = life.write_time.range_product(life.last_time).range();
    return !lives.intersect(b.crossing).is_empty();
}

std::vector<std::pair<int64_t, int64_t>> merge_ranges(std::vector<std::pair<int64_t, int64_t>> r) {
    std::sort(r.begin(), r.end());
    std::vector<std::pair<int64_t, int64_t>> out;  // (offset, bytes)
    for (const auto &[off, bytes] : r) {
        if (bytes <= 0) continue;
        if (!out.empty() && off <= out.back().first + out.back().second)
            out.back().second = std::max(out.back().second, off + bytes - out.back().first);
        else
            out.push_back({off, bytes});
    }
    return out;
}

}  // namespace trlc
