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
// before writing it (the scheduled interpreter does), so the pair need not be a conflict.
// A batched instance is one kernel with a thread per batch point that writes its point
// as soon as it has computed it, so between different tensors two more conditions hold:
//   4. q is read by p's thread only: no other point of the instance reads q through any
//      access (else x[b] = y[K-1] would let thread K-1 overwrite y[K-1] while the others
//      still read it; test/lit/memplan/donation-batch-race.trl);
//   5. q is at p's batch point: y has the same batch dims and the access keeps them.
// Within one tensor (x = y) the instance-level rule is kept: batch axes are stored whole,
// so p and q can share a slot only at one batch point, and the vectorizer makes every
// read of x by x keep the batch coordinates, so that slot is read and written by one
// thread.  (Residual assumption for 4-5: x and y are then both stored by batch point; a
// pair of buffers whose other dims have windows in different orders would need their
// slot maps compared, which the planner does not do yet.)  For x = y this lowers moduli: `net[i+1] = f(net[i])`
// or `x[t+1] = x[t] + 1` keep one slot instead of two.  Between different tensors the
// planner (memplan.cpp) lets x reuse y's whole buffer when both buffers have the same
// bytes (a smaller donor would merge conflicts for little gain) and their live-time sets
// meet only at such hand-over instances, where every live point of y dies and every
// live point of x is being written.
// (Compare TimeRL's donation, arXiv 2501.05408: the reference implementation donates moving point reads whose
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

isl::union_map single_point_reads(const ir::Program &prog, const PdgImpl &g, const MemInput &in) {
    isl::union_map out = isl::union_map::empty(g.isl.ctx());
    // instance → written points, per statement name
    std::map<std::string, isl::union_map> writes_of;
    in.writes.foreach_map([&](isl::map m) {
        std::string n = tuple_name(m);
        auto it = writes_of.find(n);
        if (it == writes_of.end())
            writes_of.emplace(n, isl::union_map(m));
        else
            it->second = it->second.unite(isl::union_map(m));
    });
    auto batch_of = [&](int t) {
        std::vector<int> pos;
        const auto &dims = prog.tensors.at(t).dims;
        for (size_t k = 0; k < dims.size(); ++k)
            if (dims[k] < static_cast<int>(in.batch_dims.size()) && in.batch_dims[dims[k]])
                pos.push_back(static_cast<int>(k));
        return pos;
    };
    for (const Statement &s : in.statements) {
        if (s.kind != Statement::Tensor) continue;
        auto w = writes_of.find(s.name);
        if (w == writes_of.end()) continue;
        for (const PdgNode &node : g.nodes) {
            if (node.kind != PdgNode::Tensor || node.ir_index != s.index) continue;
            if (s.equation < 0 || s.equation >= static_cast<int>(node.equations.size())) break;
            const std::vector<int> &edges = node.equations[s.equation].edges;
            // Points of x computed by the same instance as p (other threads), and what every
            // point of x reads through any access of this equation.
            isl::union_map points = w->second;
            isl::union_map other = points.reverse().apply_range(points).subtract(
                isl::union_map(isl::manage(isl_union_set_identity(points.range().release()))));
            isl::union_map all_reads = isl::union_map::empty(g.isl.ctx());
            for (int e : edges) all_reads = all_reads.unite(isl::union_map(concrete(g, g.edges[e].access)));
            isl::union_map shared = other.apply_range(all_reads);
            std::vector<int> xb = batch_of(s.index);
            for (int e : edges) {
                isl::map access = concrete(g, g.edges[e].access);
                if (!access.is_single_valued()) continue;
                const PdgNode &prod = g.nodes[g.edges[e].producer];
                if (prod.kind == PdgNode::Tensor && prod.ir_index == s.index) {
                    // Self: the instance-level rule (batch axes keep whole, so p and q share a
                    // slot only at the same batch point, which one thread reads and writes).
                    isl::union_map inst = points.apply_range(isl::union_map(access));
                    out = out.unite(points.reverse().apply_range(inst));
                    continue;
                }
                // Across tensors: q read by p's thread only, at p's batch point.
                isl::union_map pairs = isl::union_map(access).subtract(shared);
                if (!xb.empty()) {
                    if (prod.kind != PdgNode::Tensor) continue;
                    std::vector<int> yb = batch_of(prod.ir_index);
                    std::vector<int> xd, yd;
                    for (int k : xb) xd.push_back(prog.tensors[s.index].dims[k]);
                    for (int k : yb) yd.push_back(prog.tensors[prod.ir_index].dims[k]);
                    if (xd != yd) continue;
                    isl_map *eq = isl_map_universe(access.get_space().release());
                    for (size_t i = 0; i < xb.size(); ++i)
                        eq = isl_map_equate(eq, isl_dim_in, xb[i], isl_dim_out, yb[i]);
                    pairs = pairs.intersect(isl::union_map(isl::manage(eq)));
                }
                out = out.unite(pairs);
            }
            break;
        }
    }
    return out;
}

isl::map donatable_pairs(const isl::set &out_domain, const TensorLife &in_life, const LifeContext &lc,
                         const isl::union_map &single_reads) {
    isl::space in_space = in_life.write_time.get_space().domain();
    // { x[p] -> y[q] : the instance writing p is the last reader of q }
    isl::union_map at_last =
        lc.point_writer.intersect_domain(isl::union_set(out_domain)).apply_range(in_life.last_instance.reverse());
    isl::union_map pairs = at_last.intersect(single_reads);
    return pairs.extract_map(map_space(out_domain.get_space(), in_space));
}

}  // namespace trlc
