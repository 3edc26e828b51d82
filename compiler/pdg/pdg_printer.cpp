// pdg_printer — `--emit=pdg` (sorted, stable text) and `--emit=pdg-dot` (Graphviz).
//
//   context: [T] -> { : T = 8 }
//   tensor h : f32
//     domain: { h[t] : 0 <= t <= 8 }
//     equation @3:1: { h[t] : t = 0 }
//     equation @4:1: { h[t] : 0 < t <= 8 }
//       read h[t]: { h[t] -> h[t'] : t' = -1 + t and 0 < t <= 8 }
//
// Sets are shown with the context applied and parameters projected out, so the
// numbers are the ones every check used.  Tensors are sorted by name, then the
// outputs (emit, save) by name; equations in source order; reads sorted by
// producer, text and relation; the pieces of every relation are sorted.
// An equation line shows its effective domain; `overridden:` lists the points
// of its pattern that a more specific equation defines instead, `dead:` those that no output
// needs (removed by the dead-points pass, pdg/dead_points.cpp).
#include <algorithm>
#include <ostream>
#include <set>

#include "pdg/pdg_impl.h"

namespace trlc {

namespace {

std::vector<int> sorted_nodes(const PdgImpl &g) {
    std::vector<int> order(g.nodes.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
        const PdgNode &x = g.nodes[a], &y = g.nodes[b];
        bool xo = x.kind != PdgNode::Tensor, yo = y.kind != PdgNode::Tensor;
        if (xo != yo) return !xo;
        return x.name < y.name;
    });
    return order;
}

std::vector<int> sorted_edges(const PdgImpl &g, const PdgEquation &eq, std::vector<std::string> *texts) {
    std::vector<std::pair<std::string, int>> lines;
    for (int e : eq.edges) {
        const PdgEdge &edge = g.edges[e];
        std::string line = "read " + edge.text + ": " + map_to_string(g, edge.access);
        lines.push_back({g.nodes[edge.producer].name + "\x01" + line, e});
    }
    std::sort(lines.begin(), lines.end());
    std::vector<int> out;
    texts->clear();
    for (const auto &l : lines) {
        out.push_back(l.second);
        texts->push_back(l.first.substr(l.first.find('\x01') + 1));
    }
    return out;
}

std::string dot_escape(const std::string &s) {
    std::string out;
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out;
}

}  // namespace

std::vector<std::string> batch_dim_names(const Pdg &pdg, const std::vector<bool> &batch_dims) {
    const PdgImpl &g = pdg.impl();
    std::vector<std::string> out;
    for (size_t k = 0; k < batch_dims.size() && k < g.program_dims.size(); ++k)
        if (batch_dims[k]) out.push_back(g.program_dims[k]);
    return out;
}

void print_pdg(const Pdg &pdg, std::ostream &out) {
    const PdgImpl &g = pdg.impl();
    out << "context: " << isl_text(g.context) << "\n";
    for (int i : sorted_nodes(g)) {
        const PdgNode &n = g.nodes[i];
        if (n.kind == PdgNode::Tensor)
            out << "tensor " << n.name << " : " << n.type << "\n";
        else
            out << n.name << "\n";
        out << "  domain: " << set_to_string(g, n.domain) << "\n";
        for (const PdgEquation &eq : n.equations) {
            if (n.kind == PdgNode::Tensor && !eq.synthetic)
                out << "  equation @" << loc_string(eq.loc) << ": " << set_to_string(g, eq.effective) << "\n";
            isl::set over = eq.image.subtract(eq.effective);
            if (eq.dead) over = over.subtract(*eq.dead);
            if (!concrete(g, over).is_empty()) out << "    overridden: " << set_to_string(g, over) << "\n";
            if (eq.dead && !concrete(g, *eq.dead).is_empty()) out << "    dead: " << set_to_string(g, *eq.dead) << "\n";
            std::vector<std::string> texts;
            sorted_edges(g, eq, &texts);
            for (const std::string &t : texts) out << "    " << t << "\n";
        }
    }
}

// With the vectorization decision: a header before `context:` naming the batch
// axes, then one line per tensor or output that has one, in the same order as
// the body (a separate block, so the lines of the graph itself do not change):
//   batch axes: b
//     tensor act: batch b
//     emit "x": batch b
// `batch axes: (none)` when no dim is one (or -fno-vectorize).
void print_pdg(const Pdg &pdg, std::ostream &out, const std::vector<bool> &batch_dims) {
    const PdgImpl &g = pdg.impl();
    std::vector<std::string> names = batch_dim_names(pdg, batch_dims);
    std::set<std::string> batch(names.begin(), names.end());
    out << "batch axes: ";
    if (names.empty()) out << "(none)";
    for (size_t k = 0; k < names.size(); ++k) out << (k ? ", " : "") << names[k];
    out << "\n";
    for (int i : sorted_nodes(g)) {
        const PdgNode &n = g.nodes[i];
        std::string dims;
        for (const std::string &d : n.dim_names)
            if (batch.count(d)) dims += (dims.empty() ? "" : ", ") + d;
        if (dims.empty()) continue;
        out << "  " << (n.kind == PdgNode::Tensor ? "tensor " : "") << n.name << ": batch " << dims << "\n";
    }
    print_pdg(pdg, out);
}

void print_pdg_dot(const Pdg &pdg, std::ostream &out) {
    const PdgImpl &g = pdg.impl();
    out << "digraph pdg {\n";
    out << "  node [shape=box, fontname=\"monospace\"];\n";
    std::vector<int> order = sorted_nodes(g);
    for (int i : order) {
        const PdgNode &n = g.nodes[i];
        std::string label = n.kind == PdgNode::Tensor ? n.name + " : " + n.type : n.name;
        label = dot_escape(label) + "\\n" + dot_escape(set_to_string(g, n.domain));
        out << "  \"" << dot_escape(n.name) << "\" [label=\"" << label << "\""
            << (n.kind == PdgNode::Tensor ? "" : ", shape=ellipse") << "];\n";
    }
    // Edges point from consumer to producer ("depends on"), labelled by the read.
    std::vector<std::string> edges;
    for (int i : order)
        for (const PdgEquation &eq : g.nodes[i].equations) {
            std::vector<std::string> texts;
            for (int e : sorted_edges(g, eq, &texts)) {
                const PdgEdge &edge = g.edges[e];
                edges.push_back("  \"" + dot_escape(g.nodes[edge.consumer].name) + "\" -> \"" +
                                dot_escape(g.nodes[edge.producer].name) + "\" [label=\"" + dot_escape(edge.text) +
                                "\"];");
            }
        }
    for (const std::string &e : edges) out << e << "\n";
    out << "}\n";
}

}  // namespace trlc
