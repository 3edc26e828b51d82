// dependences — flow dependences between statement instances (issue 3 §1).
//
// A read of PDG edge e (consumer point → producer points, restricted to the
// consumer equation's effective domain) becomes, for the consumer statement c
// and each statement p of the producer:
//     flow(p → c) = ( points_c ∘ access_e ∘ points_p⁻¹ )⁻¹
// where points_s maps an instance to the tensor points it stands for (batch dims
// expanded).  Each tensor point has exactly one writer (effective domains are
// disjoint, compiler/pdg), so composition is exact: no kill analysis is needed
// and only defined points appear (points_p⁻¹ is defined on p's points only).
// Loads have no statement and thus no dependences.
//
//   ret[t] = rew[t] + gamma * ret[t+1]  →  ret_1[t] -> ret_1[t' = -1 + t] : 1 <= t <= 14
//                                          ret_0[] -> ret_1[14]   (the base case, when T = 16)
#include <algorithm>

#include "pdg/pdg_impl.h"
#include "schedule/schedule_impl.h"

namespace trlc {

void build_dependences(const Pdg &pdg, Schedule &s) {
    const PdgImpl &g = pdg.impl();
    ScheduleImpl &im = s.impl();
    im.flow = isl::union_map::empty(g.isl.ctx());
    // Statements of each PDG node (a tensor's equations).
    std::vector<std::vector<int>> of_node(g.nodes.size());
    std::vector<int> node_of(s.statements.size(), -1);
    for (size_t i = 0; i < s.statements.size(); ++i) {
        const Statement &st = s.statements[i];
        for (size_t n = 0; n < g.nodes.size(); ++n) {
            const PdgNode &pn = g.nodes[n];
            bool same = pn.ir_index == st.index && ((st.kind == Statement::Tensor && pn.kind == PdgNode::Tensor) ||
                                                    (st.kind == Statement::Emit && pn.kind == PdgNode::Emit) ||
                                                    (st.kind == Statement::Save && pn.kind == PdgNode::Save));
            if (same) {
                of_node[n].push_back(static_cast<int>(i));
                node_of[i] = static_cast<int>(n);
            }
        }
    }
    for (size_t c = 0; c < s.statements.size(); ++c) {
        const Statement &st = s.statements[c];
        int n = node_of[c];
        if (n < 0) continue;
        int q = st.kind == Statement::Tensor ? st.equation : 0;
        const PdgEquation &eq = g.nodes[n].equations.at(q);
        for (int e : eq.edges) {
            const PdgEdge &edge = g.edges.at(e);
            isl::map reads = im.stmt_points[c].apply_range(concrete(g, edge.access));
            for (int p : of_node.at(edge.producer)) {
                isl::map rel = reads.apply_range(im.stmt_points[p].reverse()).reverse().coalesce();
                if (rel.is_empty()) continue;
                FlowDep d;
                d.edge = e;
                d.src = p;
                d.dst = static_cast<int>(c);
                d.rel = rel;
                im.flow = im.flow.unite(isl::union_map(rel));
                im.deps.push_back(std::move(d));
            }
        }
    }
    im.flow = im.flow.coalesce();
}

std::string dependences_to_string(const Schedule &s) {
    const ScheduleImpl &im = s.impl();
    std::vector<std::string> lines;
    for (const FlowDep &d : im.deps) {
        // One line per basic map, so that the sort is stable whatever isl's piece order.
        isl::map m = d.rel.coalesce();
        std::vector<std::string> pieces;
        m.foreach_basic_map([&](isl::basic_map bm) {
            std::string t = isl_text(isl::map(bm));
            // strip "{ " and " }"
            if (t.size() >= 4 && t.front() == '{') t = t.substr(2, t.size() - 4);
            pieces.push_back(t);
        });
        for (std::string &p : pieces) lines.push_back(p);
    }
    std::sort(lines.begin(), lines.end());
    lines.erase(std::unique(lines.begin(), lines.end()), lines.end());
    std::string out;
    for (const std::string &l : lines) out += l + "\n";
    return out;
}

isl::map first_unordered(const isl::union_map &flow, const isl::union_map &time) {
    isl::map bad;
    flow.apply_domain(time).apply_range(time).foreach_map([&](isl::map m) {
        isl::map lt = isl::manage(isl_map_lex_lt(isl_space_domain(m.space().release())));
        if (bad.is_null() && !m.is_subset(lt)) bad = m;
    });
    return bad;
}

}  // namespace trlc
