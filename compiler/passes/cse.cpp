// cse — see cse.h for what it does, when it applies and an example.
#include "passes/cse.h"

#include <cstring>
#include <map>
#include <sstream>

namespace trlc {

namespace {

using namespace ir;

/** One scope of merging (an equation body, an emit, a save): canonical nodes by their key. */
class Merger {
public:
    int merged = 0;

    NodePtr visit(const NodePtr &n) {
        if (!n) return n;
        auto d = done_.find(n.get());
        if (d != done_.end()) return d->second;
        std::vector<NodePtr> args;
        bool changed = false;
        for (const NodePtr &a : n->args) {
            NodePtr c = visit(a);
            changed = changed || c != a;
            args.push_back(c);
        }
        NodePtr m = n;
        std::vector<SpatialIndex> sindex = n->sindex;
        for (SpatialIndex &s : sindex) {
            if (!s.value) continue;
            NodePtr c = visit(s.value);
            changed = changed || c != s.value;
            s.value = c;
        }
        if (changed) {
            Node copy = *n;
            copy.args = std::move(args);
            copy.sindex = std::move(sindex);
            m = std::make_shared<const Node>(std::move(copy));
        }
        if (n->kind == NodeKind::Extern || n->kind == NodeKind::Grad) {  // never merged: a number of
            id_[m.get()] = id_.size();  // its own, so that nodes using two equal calls stay apart
            return done_[n.get()] = m;
        }
        std::string k = key(*m);
        auto c = canon_.find(k);
        if (c != canon_.end()) {
            ++merged;
            return done_[n.get()] = c->second;
        }
        canon_.emplace(k, m);
        id_[m.get()] = id_.size();
        return done_[n.get()] = m;
    }

private:
    std::map<const Node *, NodePtr> done_;  // original -> its canonical node
    std::map<std::string, NodePtr> canon_;  // key -> canonical node
    std::map<const Node *, size_t> id_;     // canonical node -> its number in this scope

    std::string ref(const NodePtr &p) const {
        if (!p) return "-";
        auto i = id_.find(p.get());
        return i == id_.end() ? "?" : std::to_string(i->second);
    }
    static void index_text(std::ostringstream &o, const IndexExprPtr &e) {
        o << (e ? index_expr_to_string(*e) : std::string("-")) << ";";
    }

    /** Everything that makes a node's value, except its location; operands by number. */
    std::string key(const Node &n) const {
        std::ostringstream o;
        o << static_cast<int>(n.kind) << "|" << type_to_string(n.type) << "|";
        for (double v : n.data) {
            uint64_t b;
            std::memcpy(&b, &v, sizeof b);
            o << std::hex << b << std::dec << ",";
        }
        o << "|" << n.var << "|" << n.tensor << "|";
        for (const ReadIndex &r : n.index) {
            o << r.is_slice << ":";
            index_text(o, r.point);
            index_text(o, r.lo);
            index_text(o, r.hi);
        }
        o << "|" << static_cast<int>(n.uop) << "|" << static_cast<int>(n.bop) << "|" << static_cast<int>(n.builtin)
          << "|" << n.has_axes << ":";
        for (int64_t a : n.axes) o << a << ",";
        o << "|" << n.int_attr << "|";
        for (const SpatialIndex &s : n.sindex) {
            o << static_cast<int>(s.kind) << ":" << ref(s.value) << ":";
            index_text(o, s.lo);
            index_text(o, s.hi);
        }
        o << "|" << n.name << "|" << n.bound << "|";
        for (const NodePtr &a : n.args) o << ref(a) << ",";
        return o.str();
    }
};

}  // namespace

int eliminate_common_subexpressions(ir::Program &prog) {
    int merged = 0;
    for (Tensor &t : prog.tensors)
        for (Equation &eq : t.equations) {
            Merger m;
            eq.body = m.visit(eq.body);
            merged += m.merged;
        }
    for (Emit &e : prog.emits) {
        Merger m;
        for (auto &f : e.fields) f.second = m.visit(f.second);
        e.guard = m.visit(e.guard);
        merged += m.merged;
    }
    for (Save &s : prog.saves) {
        Merger m;
        s.value = m.visit(s.value);
        merged += m.merged;
    }
    return merged;
}

}  // namespace trlc
