// live_ranges — when each point of a tensor is alive, from the schedule.
//
// For a tensor x (points x[p], batch dims included):
//   W = { x[p] -> time }  the time of the instance that writes p (writes⁻¹ ∘ schedule),
//   R = { x[p] -> time }  the times of every instance that reads p (reads⁻¹ ∘ schedule),
//   L = lexmax(W ∪ R)     the end of p's life (its write when nobody reads it).
// p is alive at every time τ with W(p) ≼ τ ≼ L(p) (lexicographic, inclusive).  Two
// points conflict (need distinct slots) iff their lives intersect:
//   W(p) ≼ L(q) and W(q) ≼ L(p)                       (isl_map_lex_le_map)
// The live-time set of x (for the arena) is { τ ∈ instance times : ∃p alive at τ };
// instance times only, since nothing happens between them.
#include "memory/memplan_impl.h"

#include <sstream>

namespace trlc {

namespace {

isl::space map_space(const isl::space &dom, const isl::space &ran) {
    return isl::manage(isl_space_map_from_domain_and_range(dom.copy(), ran.copy()));
}

}  // namespace

isl::union_map fix_params(const isl::union_map &m, const isl::set &context) {
    return m.intersect_params(context).project_out_all_params();
}

TensorLife tensor_life(const isl::set &domain, const MemInput &in, const isl::set &times) {
    TensorLife life;
    isl::space sp = map_space(domain.get_space(), times.get_space());
    isl::union_set dom(domain);
    isl::union_map point_time_w = in.writes.reverse().apply_range(in.schedule_map);
    isl::union_map point_time_r = in.reads.reverse().apply_range(in.schedule_map);
    life.write_time = point_time_w.intersect_domain(dom).extract_map(sp);
    isl::map read_time = point_time_r.intersect_domain(dom).extract_map(sp);
    life.last_time = life.write_time.unite(read_time).lexmax();
    life.last_instance = isl::union_map(life.last_time).apply_range(in.schedule_map.reverse());
    // One statement's instance times at a time: within one statement the schedule's constant
    // (sequence) dims are fixed, so most disjuncts of the two lexicographic orders are empty
    // at once; over all times together their intersection has (#pieces · #dims)² disjuncts and
    // took minutes for a PPO-sized program (same set either way).
    life.live_times = isl::set::empty(times.get_space());
    in.schedule_map.foreach_map([&](isl::map stmt_time) {
        isl::set ts = stmt_time.range();
        if (ts.is_empty()) return;
        isl::map id = ts.identity();
        isl::map after_write =
            isl::manage(isl_map_lex_le_map(life.write_time.copy(), id.copy()));  // W(p) ≼ τ
        isl::map before_end =
            isl::manage(isl_map_lex_ge_map(life.last_time.copy(), id.copy()));   // L(p) ≽ τ
        life.live_times = life.live_times.unite(after_write.intersect(before_end).range());
    });
    life.live_times = life.live_times.coalesce();
    return life;
}

isl::map point_conflicts(const TensorLife &life) {
    isl::map a = isl::manage(
        isl_map_lex_le_map(life.write_time.copy(), life.last_time.copy()));  // W(p) ≼ L(q)
    isl::map c = a.intersect(a.reverse());
    return c.subtract(life.write_time.domain().identity());
}

std::string instance_string(const isl::set &instance) {
    std::string name = isl_set_has_tuple_name(instance.get()) == isl_bool_true
                           ? isl_set_get_tuple_name(instance.get())
                           : "?";
    std::vector<int64_t> p = first_point(instance);
    if (p.empty()) return name;
    std::ostringstream ss;
    ss << name << "(";
    for (size_t k = 0; k < p.size(); ++k) ss << (k ? ", " : "") << p[k];
    ss << ")";
    return ss.str();
}

isl::set instance_at(const MemInput &in, const isl::set &time) {
    isl::union_set inst = in.schedule_map.intersect_range(isl::union_set(time)).domain();
    isl::set out;
    inst.foreach_set([&](isl::set s) {
        if (out.is_null()) out = s;
    });
    return out;
}

}  // namespace trlc
