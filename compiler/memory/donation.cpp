// donation — a statement's output takes the storage of an input point that dies there.
//
// Condition (checked per pair of points, exactly, with isl): point p of the output x
// may take the slot of point q of the input y when
//   1. the instance i that writes p is the last reader of q (L(q) = time(i)), so q is
//      dead once i has finished reading;
//   2. i reads q through a single-point access (an edge whose access relation is
//      single-valued: `net[i]`, `x[t-1]`, a clamp; not a slice `r[t:t+n]`);
//   3. one point of x and of y take the same bytes (slot_bytes; for x = y, trivially).
// Then p and q are alive together only at time(i), and i computes its whole result
// before writing it (the scheduled interpreter does; generated code must too), so the
// pair need not be a conflict.  For x = y this lowers moduli: `net[i+1] = f(net[i])`
// or `x[t+1] = x[t] + 1` keep one slot instead of two.  Between different tensors the
// planner (memplan.cpp) lets x reuse y's whole buffer when both buffers have the same
// bytes (a smaller donor would merge conflicts for little gain) and their live-time sets
// meet only at such hand-over instances, where every live point of y dies and every
// live point of x is being written.
// (Compare research/tempo.md §6.4: the reference donates moving point reads whose
// later consumers do not exist; the isl rule there is the same "last reader" test.)
#include "memory/memplan_impl.h"

namespace trlc {

namespace {

isl::space map_space(const isl::space &dom, const isl::space &ran) {
    return isl::manage(isl_space_map_from_domain_and_range(dom.copy(), ran.copy()));
}

std::string tuple_name(const isl::map &m) {
    const char *n = isl_map_get_tuple_name(m.get(), isl_dim_in);
    return n ? n : "";
}

}  // namespace

isl::union_map single_point_reads(const ir::Program &prog, const PdgImpl &g,
                                  const MemInput &in) {
    isl::union_map out = isl::union_map::empty(g.isl.ctx());
    // instance → written points, per statement name
    std::map<std::string, isl::union_map> writes_of;
    in.writes.foreach_map([&](isl::map m) {
        std::string n = tuple_name(m);
        auto it = writes_of.find(n);
        if (it == writes_of.end()) writes_of.emplace(n, isl::union_map(m));
        else it->second = it->second.unite(isl::union_map(m));
    });
    for (const Statement &s : in.statements) {
        if (s.kind != Statement::Tensor) continue;
        auto w = writes_of.find(s.name);
        if (w == writes_of.end()) continue;
        for (const PdgNode &node : g.nodes) {
            if (node.kind != PdgNode::Tensor || node.ir_index != s.index) continue;
            if (s.equation < 0 || s.equation >= static_cast<int>(node.equations.size())) break;
            for (int e : node.equations[s.equation].edges) {
                isl::map access = concrete(g, g.edges[e].access);
                if (!access.is_single_valued()) continue;
                out = out.unite(w->second.apply_range(isl::union_map(access)));
            }
            break;
        }
    }
    return out;
}

isl::map donatable_pairs(const isl::set &out_domain, const TensorLife &in_life,
                         const MemInput &in, const isl::union_map &single_reads) {
    isl::space in_space = in_life.write_time.get_space().domain();
    isl::union_map last_single = single_reads.intersect(in_life.last_instance.reverse());
    isl::union_map pairs = in.writes.reverse()
                               .intersect_domain(isl::union_set(out_domain))
                               .apply_range(last_single);
    return pairs.extract_map(map_space(out_domain.get_space(), in_space));
}

}  // namespace trlc
