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

#include <map>
#include <string>

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

namespace {

/** Every pair (a, b) of "pairs" (time -> time, one space) has a ≺ b: every difference b − a is
 *  lexicographically positive, decided one time dim at a time (the differences whose earlier
 *  dims are 0 must not be negative at dim k; those still 0 at every dim are a pair at one
 *  time).  Equivalent to pairs ⊆ lex_lt, for every parameter value, but each level is one
 *  emptiness test on a set of the time dims, where lex_lt has a piece per dim over twice as
 *  many: most dependences are decided at the first or second dim. */
bool lex_ordered(const isl::map &pairs) {
    isl::set d = pairs.deltas();
    const int n = static_cast<int>(isl_set_dim(d.get(), isl_dim_set));
    for (int k = 0; k < n; ++k) {
        if (d.is_empty()) return true;
        isl::set below = isl::manage(isl_set_upper_bound_si(d.copy(), isl_dim_set, k, -1));  // x_k < 0
        if (!below.is_empty()) return false;
        d = isl::manage(isl_set_fix_si(d.release(), isl_dim_set, k, 0));
    }
    return d.is_empty();
}

}  // namespace

isl::map first_unordered(const isl::union_map &flow, const isl::union_map &time) {
    // One dependence (a statement pair) at a time, composed with the times of its two
    // statements only: all times share one space, so composing the whole flow with the whole
    // time map gave one map of every dependence's pieces (PPO CartPole's front end spent ~10 %
    // here, over 151 calls).
    auto key = [](const isl::map &m, isl_dim_type type) {  // a statement's tuple: name and arity
        const char *name = isl_map_get_tuple_name(m.get(), type);
        return std::make_pair(std::string(name ? name : ""), static_cast<int>(isl_map_dim(m.get(), type)));
    };
    std::map<std::pair<std::string, int>, isl::map> time_of;  // statement -> its times
    time.foreach_map([&](isl::map t) { time_of.emplace(key(t, isl_dim_in), t); });
    isl::map bad;
    flow.foreach_map([&](isl::map dep) {
        if (!bad.is_null()) return;
        auto tp = time_of.find(key(dep, isl_dim_in)), tc = time_of.find(key(dep, isl_dim_out));
        if (tp == time_of.end() || tc == time_of.end()) return;  // an instance without a time: no pair
        isl::map pairs = dep.apply_domain(tp->second).apply_range(tc->second);
        if (!lex_ordered(pairs)) bad = pairs;
    });
    return bad;
}

}  // namespace trlc
