// memplan — the static memory plan: storage per tensor, live ranges, donation, arena.
//
// plan_memory takes the schedule's isl objects (schedule/schedule_impl.h: schedule_map,
// writes, reads) and, per non-load tensor x:
//   1. the life of every point (live_ranges.cpp: W, L, the live-time set);
//   2. the conflict relation between its points, minus donation pairs (donation.cpp);
//   3. the successive-modulo storage mapping and its kind (storage_kinds.cpp);
//   4. the readable live range (first write .. last use) and frees_after per statement.
// Then whole buffers may be donated across tensors (x reuses y's buffer when their
// live-time sets meet only at hand-over instances, donation.cpp), and all buffers (one
// group per donation chain) get offsets by greedy-by-size packing (arena.cpp), where
// two groups conflict when some members' live-time sets intersect.  Everything is exact
// (isl on concrete relations), so the predicted peak is the arena size.
//
// Cost (--time-passes splits it): the union-wide compositions are made once (LifeContext),
// live-time sets stay one piece per statement, and every lexicographic order is built over
// either the universe of times or a few times, never over the union of all instance times
// (one disjunct per statement, so (#statements · #dims)² disjuncts: that took 60 s of a PPO
// compile, now under 1 s; see live_ranges.cpp and live_strict below).  What remains is per
// tensor: W, L = lexmax (the one PIP question), one piece per statement, the conflict map.
#include "memory/memplan.h"

#include <map>
#include <optional>

#include "memory/memplan_impl.h"
#include "support/time_passes.h"

#if __has_include("schedule/schedule_impl.h")
#include "schedule/schedule_impl.h"
#define TRLC_HAVE_SCHEDULE_IMPL 1
#endif

namespace trlc {

namespace {

constexpr int64_t kArenaAlign = 256;

const PdgNode *tensor_node(const PdgImpl &g, int tensor) {
    for (const PdgNode &n : g.nodes)
        if (n.kind == PdgNode::Tensor && n.ir_index == tensor) return &n;
    return nullptr;
}

isl::set one_set(const isl::union_set &u, bool *ok) {
    isl::set out;
    int count = 0;
    u.foreach_set([&](isl::set s) {
        if (count++ == 0) out = s;
    });
    *ok = count <= 1;
    return out;
}

/** { τ ∈ times : ∃p: W(p) ≺ τ ≼ L(p) } (strict = after) or { τ ∈ times : ∃p: W(p) ≼ τ ≺ L(p) }.
 *  Called with "times" = the few times where two buffers meet: over every instance time the
 *  two lexicographic orders have (#pieces · #dims)² disjuncts (26 of REINFORCE's 31 s). */
isl::set live_strict(const TensorLife &life, const isl::set &times, bool strict_after_write) {
    isl::map id = times.identity();
    isl::map a = isl::manage(strict_after_write ? isl_map_lex_lt_map(life.write_time.copy(), id.copy())
                                                : isl_map_lex_le_map(life.write_time.copy(), id.copy()));
    isl::map b = isl::manage(strict_after_write ? isl_map_lex_ge_map(life.last_time.copy(), id.copy())
                                                : isl_map_lex_gt_map(life.last_time.copy(), id.copy()));
    return a.intersect(b).range();
}

/** Buffer::read_window of tensor "tuple" (its points' extent per position) from "reads"
 *  (instance -> tensor points, concrete). */
std::vector<int64_t> read_windows(const isl::union_map &reads, const std::string &tuple,
                                  const std::vector<int64_t> &extent) {
    std::vector<int64_t> window(extent.size(), 0);
    reads.foreach_map([&](isl::map m) {
        const char *name = isl_map_get_tuple_name(m.get(), isl_dim_out);
        if (!name || tuple != name) return;
        std::vector<long> spans = read_spans(m);
        for (size_t d = 0; d < window.size() && d < spans.size(); ++d) {
            int64_t w = spans[d] >= extent[d] - 1 ? extent[d] : spans[d] + 1;
            window[d] = std::max(window[d], w);
        }
    });
    return window;
}

}  // namespace

MemPlan plan_memory_from(const ir::Program &prog, const PdgImpl &g, const MemInput &raw, Diagnostics &diag) {
    MemPlan plan;
    MemInput in = raw;
    in.schedule_map = fix_params(raw.schedule_map, g.context);
    in.writes = fix_params(raw.writes, g.context);
    in.reads = fix_params(raw.reads, g.context);
    plan.frees_after.assign(in.statements.size(), {});
    std::map<std::string, int> stmt_index;
    for (size_t s = 0; s < in.statements.size(); ++s) stmt_index[in.statements[s].name] = s;

    bool one_space = true;
    isl::set times = one_set(in.schedule_map.range(), &one_space);
    TRLC_ASSERT(one_space) << "memplan: schedule times in several spaces";
    if (times.is_null()) return plan;  // nothing is scheduled

    std::optional<PassTimer> timer;
    timer.emplace("lives and storage of each tensor");
    LifeContext lc = life_context(in, times);
    isl::union_map single_reads = single_point_reads(prog, g, in);
    IterationBoundary boundary;
    iteration_boundary(in, lc, &boundary);

    ArenaState st;
    std::vector<TensorLife> &lives = st.lives;
    std::vector<isl::set> domains;
    std::map<std::string, int> buffer_of_tuple;  // PDG tuple name → plan.buffers index
    for (size_t t = 0; t < prog.tensors.size(); ++t) {
        const ir::Tensor &tensor = prog.tensors[t];
        const PdgNode *node = tensor_node(g, static_cast<int>(t));
        if (tensor.is_load || !node) continue;
        Buffer buf;
        buf.tensor = static_cast<int>(t);
        buf.slot_bytes = ir::slot_bytes(tensor.type);
        isl::set domain = concrete(g, node->domain);
        TensorLife life = tensor_life(domain, lc);
        isl::map conflict = point_conflicts(life);
        isl::map self = donatable_pairs(domain, life, lc, single_reads);
        if (!self.is_empty()) {
            conflict = conflict.subtract(self).subtract(self.reverse());
            buf.donated_from = buf.tensor;
        }
        std::vector<bool> batch(tensor.dims.size(), false);
        for (size_t d = 0; d < tensor.dims.size(); ++d)
            batch[d] = tensor.dims[d] < static_cast<int>(in.batch_dims.size()) && in.batch_dims[tensor.dims[d]];
        storage_from_conflicts(domain, conflict, batch, &buf);
        buf.bytes = buf.slots * buf.slot_bytes;
        if (buf.kind == Buffer::Block) buf.read_window = read_windows(in.reads, node->tuple, buf.extent);
        if (!life.write_time.is_empty()) {
            isl::set first = life.write_time.range().lexmin();
            isl::set last = life.last_time.range().lexmax();
            buf.dealloc_after = instance_string(instance_at(lc, last));
            buf.live_range = instance_string(instance_at(lc, first)) + " .. " + buf.dealloc_after;
        } else {
            buf.bytes = 0;  // never written in this schedule
        }
        buf.checkpointed =
            buf.bytes > 0 && !in.checkpoint_statements.empty() && crosses_iterations(domain, life, boundary);
        life.last_instance.range().foreach_set([&](isl::set s) {
            const char *n = isl_set_get_tuple_name(s.get());
            auto it = stmt_index.find(n ? n : "");
            if (it != stmt_index.end()) plan.frees_after[it->second].push_back(buf.tensor);
        });
        buffer_of_tuple[node->tuple] = static_cast<int>(plan.buffers.size());
        plan.buffers.push_back(buf);
        lives.push_back(life);
        domains.push_back(domain);
    }

    timer.emplace("buffer conflicts");
    const size_t n = plan.buffers.size();
    st.live_conflict.assign(n, std::vector<bool>(n, false));
    std::vector<std::vector<bool>> &live_conflict = st.live_conflict;
    for (size_t a = 0; a < n; ++a)
        for (size_t b = a + 1; b < n; ++b)
            live_conflict[a][b] = live_conflict[b][a] = lives_meet(lives[a], lives[b], lc);

    // Whole-buffer donation across tensors (donation.cpp): x reuses y when they are alive
    // together only at instances that write x from single-point reads of the last live
    // points of y.  Groups are donation chains; a group shares one offset.
    timer.emplace("donation across tensors");
    st.group.resize(n);
    std::vector<int> &group = st.group;
    for (size_t i = 0; i < n; ++i) group[i] = static_cast<int>(i);
    std::vector<bool> has_cross_donor(n, false), donated(n, false);
    for (size_t x = 0; x < n; ++x) {
        for (size_t y = 0; y < n && !has_cross_donor[x]; ++y) {
            if (y == x || donated[y] || !live_conflict[x][y]) continue;
            if (plan.buffers[x].slot_bytes != plan.buffers[y].slot_bytes) continue;
            if (plan.buffers[x].bytes != plan.buffers[y].bytes) continue;  // same size only
            if (plan.buffers[x].bytes == 0 || plan.buffers[y].bytes == 0) continue;
            bool clash = group[x] == group[y];        // members of the two groups must not meet,
            for (size_t a = 0; a < n && !clash; ++a)  // except x and y at the hand-over
                for (size_t b = 0; b < n && !clash; ++b)
                    if (group[a] == group[x] && group[b] == group[y] && !(a == x && b == y) && live_conflict[a][b])
                        clash = true;
            if (clash) continue;
            // The isl conditions are pure, so their order is free: the pair test first (cheap,
            // and empty for most candidates), then the undonated ends (sets of times, no
            // order relation), then the strict lives restricted to the meet, whose
            // lexicographic orders cost the most: on the DQN sample a meet of every training
            // step (mod-10 pieces) took 10.4 s there, where the ends test refuses it first.
            isl::map pairs = donatable_pairs(domains[x], lives[y], lc, single_reads);
            if (pairs.is_empty()) continue;
            isl::set meet = meet_times(lives[x], lives[y], lc);
            isl::set undonated_ends =
                isl::manage(isl_map_subtract_domain(lives[y].last_time.copy(), pairs.range().release())).range();
            if (!undonated_ends.intersect(meet).is_empty()) continue;
            if (!live_strict(lives[x], meet, true).is_empty()) continue;
            if (!live_strict(lives[y], meet, false).is_empty()) continue;
            has_cross_donor[x] = true;
            donated[y] = true;
            plan.buffers[x].donated_from = plan.buffers[y].tensor;
            int gx = group[x], gy = group[y];
            for (size_t z = 0; z < n; ++z)
                if (group[z] == gx) group[z] = gy;
        }
    }

    timer.reset();
    place_buffers(st, &plan);
    if (in.budget > 0) {
        st.touched.assign(n, {});
        for (const isl::union_map *acc : {&in.reads, &in.writes})
            acc->foreach_map([&](isl::map m) {
                const char *s_name = isl_map_get_tuple_name(m.get(), isl_dim_in);
                const char *t_name = isl_map_get_tuple_name(m.get(), isl_dim_out);
                auto si = stmt_index.find(s_name ? s_name : "");
                auto bi = buffer_of_tuple.find(t_name ? t_name : "");
                if (si != stmt_index.end() && bi != buffer_of_tuple.end() && !m.is_empty()) {
                    st.touched[bi->second].insert(si->second);
                    st.accesses[{si->second, bi->second}].push_back(m);
                }
            });
        PassTimer swap_timer("swaps under the memory budget");
        plan_swaps(prog, in, lc, st, &plan, diag);
    }
    std::vector<std::pair<int64_t, int64_t>> kept;
    for (const Buffer &b : plan.buffers)
        if (b.checkpointed) kept.push_back({b.offset, b.bytes});
    plan.checkpoint_ranges = merge_ranges(kept);
    plan.checkpoint_statements = in.checkpoint_statements;
    return plan;
}

void place_buffers(const ArenaState &st, MemPlan *plan) {
    // Arena: one item per group.
    const size_t n = plan->buffers.size();
    std::map<int, int> item_of;
    std::vector<int64_t> item_bytes;
    for (size_t i = 0; i < n; ++i) {
        auto it = item_of.find(st.group[i]);
        if (it == item_of.end()) {
            it = item_of.emplace(st.group[i], static_cast<int>(item_bytes.size())).first;
            item_bytes.push_back(0);
        }
        item_bytes[it->second] = std::max(item_bytes[it->second], plan->buffers[i].bytes);
    }
    const size_t m = item_bytes.size();
    std::vector<std::vector<bool>> item_conflict(m, std::vector<bool>(m, false));
    for (size_t a = 0; a < n; ++a)
        for (size_t b = 0; b < n; ++b) {
            int ia = item_of[st.group[a]], ib = item_of[st.group[b]];
            if (ia != ib && st.live_conflict[a][b]) item_conflict[ia][ib] = true;
        }
    std::vector<int64_t> offsets;
    plan->peak_bytes = pack_arena(item_bytes, item_conflict, kArenaAlign, &offsets);
    for (size_t i = 0; i < n; ++i) plan->buffers[i].offset = offsets[item_of[st.group[i]]];
}

MemPlan plan_memory(const ir::Program &prog, const Pdg &pdg, const Schedule &sched, Diagnostics &diag,
                    const std::vector<int> *checkpoint_statements, int64_t budget) {
#ifdef TRLC_HAVE_SCHEDULE_IMPL
    const ScheduleImpl &si = sched.impl();
    if (si.schedule_map.is_null()) return MemPlan();
    MemInput in;
    in.statements = sched.statements;
    in.batch_dims = sched.batch_dims;
    in.schedule_map = si.schedule_map;
    in.writes = si.writes;
    in.reads = si.reads;
    in.budget = budget;
    in.root = sched.root.get();
    if (checkpoint_statements)
        in.checkpoint_statements = *checkpoint_statements;
    else if (const LoopNode *loop = checkpoint_loop(sched.root.get()))
        in.checkpoint_statements = statements_in(*loop);
    return plan_memory_from(prog, pdg.impl(), in, diag);
#else
    (void)budget;
    return MemPlan();  // the scheduler's isl objects have not landed yet
#endif
}

bool MemPlan::overlap(int a, int b) const {
    if (a < 0 || b < 0) return false;
    const Buffer &x = buffers.at(a), &y = buffers.at(b);
    return x.bytes > 0 && y.bytes > 0 && x.offset < y.offset + y.bytes && y.offset < x.offset + x.bytes;
}

int64_t MemPlan::checkpoint_bytes() const {
    int64_t sum = 0;
    for (const auto &r : checkpoint_ranges) sum += r.second;
    return sum;
}

int MemPlan::buffer_of(int tensor) const {
    for (size_t i = 0; i < buffers.size(); ++i)
        if (buffers[i].tensor == tensor) return static_cast<int>(i);
    return -1;
}

}  // namespace trlc
