// pdg_json — `--emit=json`: the PDG as one JSON document (later stages add sections).
//
//   {"params": {"T": 8}, "context": "[T] -> { : T = 8 }",
//    "tensors": [{"name": "h", "domain": "{ h[t] : 0 <= t <= 8 }", "shape": [], "dtype": "f32",
//                 "type": "f32", "dims": ["t"], "load": false,
//                 "equations": [{"loc": "3:1", "domain": "...", "pattern_image": "..."}]}],
//    "outputs": [{"name": "emit \"h\"", "kind": "emit", "domain": "..."}],
//    "edges": [{"from": "h", "to": "h", "read": "h[t-1]", "loc": "4:8", "access": "{ ... }"}]}
//
// With the vectorization decision (the driver's --emit=json), tensors and outputs
// gain "batch": ["b"] and the document "batch_axes": ["b"].
// Edges point from consumer to producer.  Sets are concrete (context applied);
// tensors, outputs and edges are sorted so the document is stable.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>

#include "pdg/pdg_impl.h"

namespace trlc {

namespace {

/* The document; with "batch_dims", each tensor and output gains "batch" (its batch dims, last
 * key) and the document gains "batch_axes" (after "edges"). */
std::string to_json(const Pdg &pdg, const std::vector<bool> *batch_dims) {
    const PdgImpl &g = pdg.impl();
    std::set<std::string> batch;
    if (batch_dims)
        for (const std::string &d : batch_dim_names(pdg, *batch_dims)) batch.insert(d);
    auto batch_of = [&](const PdgNode &n) {
        std::vector<std::string> out;
        for (const std::string &d : n.dim_names)
            if (batch.count(d)) out.push_back(d);
        return out;
    };
    nlohmann::ordered_json doc;
    nlohmann::ordered_json params = nlohmann::ordered_json::object();
    for (const auto &p : g.params) params[p.first] = p.second;
    doc["params"] = params;
    doc["context"] = isl_text(g.context);

    std::vector<const PdgNode *> tensors, outputs;
    for (const PdgNode &n : g.nodes) (n.kind == PdgNode::Tensor ? tensors : outputs).push_back(&n);
    auto by_name = [](const PdgNode *a, const PdgNode *b) { return a->name < b->name; };
    std::stable_sort(tensors.begin(), tensors.end(), by_name);
    std::stable_sort(outputs.begin(), outputs.end(), by_name);

    nlohmann::ordered_json jt = nlohmann::ordered_json::array();
    for (const PdgNode *n : tensors) {
        nlohmann::ordered_json t;
        t["name"] = n->name;
        t["domain"] = set_to_string(g, n->domain);
        t["shape"] = n->shape;
        t["dtype"] = n->dtype;
        t["type"] = n->type;
        t["dims"] = n->dim_names;
        t["load"] = n->is_load;
        nlohmann::ordered_json eqs = nlohmann::ordered_json::array();
        for (const PdgEquation &eq : n->equations) {
            if (eq.synthetic) continue;
            eqs.push_back({{"loc", loc_string(eq.loc)},
                           {"domain", set_to_string(g, eq.effective)},
                           {"pattern_image", set_to_string(g, eq.image)}});
        }
        t["equations"] = eqs;
        if (batch_dims) t["batch"] = batch_of(*n);
        jt.push_back(t);
    }
    doc["tensors"] = jt;

    nlohmann::ordered_json jo = nlohmann::ordered_json::array();
    for (const PdgNode *n : outputs) {
        nlohmann::ordered_json o = {{"name", n->name},
                                    {"kind", n->kind == PdgNode::Emit ? "emit" : "save"},
                                    {"dims", n->dim_names},
                                    {"domain", set_to_string(g, n->domain)}};
        if (batch_dims) o["batch"] = batch_of(*n);
        jo.push_back(o);
    }
    doc["outputs"] = jo;

    std::vector<nlohmann::ordered_json> edges;
    for (const PdgEdge &e : g.edges)
        edges.push_back({{"from", g.nodes[e.consumer].name},
                         {"to", g.nodes[e.producer].name},
                         {"read", e.text},
                         {"loc", loc_string(e.loc)},
                         {"access", map_to_string(g, e.access)}});
    std::stable_sort(edges.begin(), edges.end(), [](const auto &a, const auto &b) {
        return std::make_tuple(a["from"].template get<std::string>(), a["to"].template get<std::string>(),
                               a["read"].template get<std::string>(), a["access"].template get<std::string>()) <
               std::make_tuple(b["from"].template get<std::string>(), b["to"].template get<std::string>(),
                               b["read"].template get<std::string>(), b["access"].template get<std::string>());
    });
    doc["edges"] = edges;
    if (batch_dims) doc["batch_axes"] = batch_dim_names(pdg, *batch_dims);
    return doc.dump(2);
}

}  // namespace

std::string pdg_to_json(const Pdg &pdg) { return to_json(pdg, nullptr); }

std::string pdg_to_json(const Pdg &pdg, const std::vector<bool> &batch_dims) { return to_json(pdg, &batch_dims); }

}  // namespace trlc
