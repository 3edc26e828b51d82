// profile_regions — the profiler's regions of a generated program (ProgramEmitter::region_table,
// runtime/rt/trl_profile.cpp): one per statement of the schedule, named by its tensor (or emit
// stream, saved file) and source line, and grouped the way RL-Scope groups an RL loop's
// operations, from where the statement's code comes from:
//   - a gradient (a tensor `grad.<y>...` made by passes/autodiff), the loss y itself and the
//     forward values saved for its backward pass (`<y>.<k>.saved.<n>`): loss and gradient;
//   - otherwise the standard-library module most of the equation's IR nodes come from:
//     std/envs/* environment step, std/optim.trl optimizer, std/rl.trl returns/advantages,
//     std/nn.trl and std/distributions.trl acting;
//   - emits and saves: metrics; anything else (the program's own code): other;
//   - but a statement whose source line lies in a `region "name" { … }` of the main file is in
//     the group "name" (the innermost region), so users time their own operations; a tensor of
//     the autodiff pass (grad.<y>…, or a saved forward value <y>.<k>.saved.<n>) whose own line
//     is outside every region (grad.<y>.<x> has the line of x's definition) takes the region of
//     its loss y, so a region around a loss holds its backward pass too.
// The balance report's side (actor: acting, environment step; learner: loss and gradient,
// optimizer, returns/advantages) comes from the default group, named region or not.
// Example (PPO CartPole): st (cartpole.step) is "environment step", act (a categorical sample of
// the policy network) "acting", adv and ret (rl.gae) "returns/advantages", mbloss and every
// grad.mbloss.* tensor "loss and gradient", (p, o) (optim.adam) "optimizer", the "episode" and
// "train" emits "metrics".
#include <functional>
#include <map>
#include <set>

#include "codegen/expr_emitter.h"
#include "codegen/program_emitter.h"

namespace trlc::codegen {

namespace {

/** The group of a tensor statement from the files of its equation's IR nodes. */
std::string group_by_source(const ir::Program &prog, const SourceManager *sm, const ir::Tensor &x,
                            const ir::Equation &eq) {
    if (x.allreduce_mean) return "communication";  // the gradient's mean over the ranks (--distributed)
    if (x.name.rfind("grad.", 0) == 0) return "loss and gradient";
    for (const auto &t : prog.tensors) {  // the loss of some grad(): grad.<y>.<...>
        if (t.name.rfind("grad.", 0) != 0) continue;
        std::string y = t.name.substr(5);
        size_t dot = y.find('.');
        if (dot != std::string::npos) y.resize(dot);
        if (x.name == y || x.name.rfind(y + ".", 0) == 0) return "loss and gradient";
    }
    // An element of a tuple statement's value (s2 of (s2, rew, ...) = cartpole.step(...)): the
    // tuple's group.
    if (eq.body && eq.body->kind == ir::NodeKind::TupleGet && !eq.body->args.empty() && eq.body->args[0] &&
        eq.body->args[0]->kind == ir::NodeKind::Read) {
        const ir::Tensor &t = prog.tensors.at(eq.body->args[0]->tensor);
        if (&t != &x && t.is_hidden && !t.equations.empty()) return group_by_source(prog, sm, t, t.equations[0]);
    }
    if (!sm) return "other";
    std::map<std::string, int> votes;
    std::set<const ir::Node *> seen;
    std::function<void(const ir::Node &)> walk = [&](const ir::Node &n) {
        if (!seen.insert(&n).second) return;
        if (n.loc.valid() && n.loc.file < sm->size()) {
            const std::string &path = sm->file(n.loc.file).path;
            std::string g = path.find("/std/envs/") != std::string::npos       ? "environment step"
                            : path.find("/std/optim.trl") != std::string::npos ? "optimizer"
                            : path.find("/std/rl.trl") != std::string::npos    ? "returns/advantages"
                            : path.find("/std/nn.trl") != std::string::npos ||
                                    path.find("/std/distributions.trl") != std::string::npos
                                ? "acting"
                                : "other";
            ++votes[g];
        }
        for (const auto &a : n.args)
            if (a) walk(*a);
        for (const auto &si : n.sindex)
            if (si.value) walk(*si.value);
    };
    if (eq.body) walk(*eq.body);
    std::string best = "other";
    int most = 0;
    for (const auto &v : votes)
        if (v.first != "other" && v.second > most) best = v.first, most = v.second;
    return best;
}

/** The innermost named region of the program holding "loc" (nullptr: none). */
const ir::Region *named_region(const ir::Program &prog, Loc loc) {
    const ir::Region *best = nullptr;
    for (const ir::Region &r : prog.regions)
        if (loc.valid() && loc.file == r.file && r.first_line <= loc.line && loc.line <= r.last_line &&
            (!best || r.last_line - r.first_line <= best->last_line - best->first_line))
            best = &r;
    return best;
}

/** The loss y of an autodiff tensor: "y" for grad.<y>… and <y>.<k>.saved.<n>; "" otherwise. */
std::string loss_of(const ir::Program &prog, const std::string &name) {
    if (name.rfind("grad.", 0) == 0) {
        std::string y = name.substr(5);
        return y.substr(0, y.find('.'));
    }
    size_t saved = name.find(".saved.");
    if (saved != std::string::npos) {
        std::string y = name.substr(0, name.find('.'));
        if (prog.tensor_index(y) >= 0) return y;
    }
    return "";
}

const char *side_of(const std::string &group) {
    if (group == "acting" || group == "environment step") return "actor";
    if (group == "loss and gradient" || group == "optimizer" || group == "returns/advantages") return "learner";
    return "-";
}

}  // namespace

}  // namespace trlc::codegen

namespace trlc {

const ir::Region *statement_region(const ir::Program &prog, const Statement &st) {
    Loc loc;
    std::string name;
    if (st.kind == Statement::Tensor) {
        const ir::Tensor &x = prog.tensors.at(st.index);
        name = x.name;
        loc = x.equations.at(st.equation).loc;
    } else if (st.kind == Statement::Emit) {
        loc = prog.emits.at(st.index).loc;
    } else {
        loc = prog.saves.at(st.index).loc;
    }
    const ir::Region *region = codegen::named_region(prog, loc);
    if (!region && st.kind == Statement::Tensor) {
        const int y = prog.tensor_index(codegen::loss_of(prog, name));
        if (y >= 0 && !prog.tensors[y].equations.empty())
            region = codegen::named_region(prog, prog.tensors[y].equations[0].loc);
    }
    return region;
}

}  // namespace trlc

namespace trlc::codegen {

std::string ProgramEmitter::region_table() const {
    // One string: a line per region, fields separated by tabs (trl_rt.h), written as adjacent
    // literals packed into source lines of at most 100 columns (test/lit/externs/format.test) (kept as written: clang-format off).
    std::vector<std::string> rows;
    for (const Statement &st : sched_.statements) {
        std::string name, group = "metrics";
        Loc loc;
        if (st.kind == Statement::Tensor) {
            const ir::Tensor &x = prog_.tensors.at(st.index);
            const ir::Equation &eq = x.equations.at(st.equation);
            name = x.name;
            loc = eq.loc;
            group = group_by_source(prog_, sm_, x, eq);
        } else if (st.kind == Statement::Emit) {
            name = "emit \"" + prog_.emits.at(st.index).stream + "\"";
            loc = prog_.emits.at(st.index).loc;
        } else {
            name = "save \"" + prog_.saves.at(st.index).path + "\"";
            loc = prog_.saves.at(st.index).loc;
        }
        const std::string side = side_of(group);
        if (const ir::Region *region = statement_region(prog_, st)) group = region->name;
        std::string w = where(loc);
        size_t slash = w.find_last_of('/');  // the file's name is enough in a region's label
        if (slash != std::string::npos) w = w.substr(slash + 1);
        std::string row = c_string(name) + "\\t" + c_string(group) + "\\t" + c_string(w) + "\\t" + c_string(side);
        std::string joined;  // one literal: drop the inner quotes c_string put around each field
        for (size_t i = 0; i < row.size(); ++i)
            if (row[i] != '"' || i == 0 || i + 1 == row.size() || row[i - 1] == '\\') joined += row[i];
        rows.push_back(joined.substr(0, joined.size() - 1) + "\\n\"");
    }
    std::string out =
        "// The profiler's regions (--profile): per statement, in the schedule's order, its name,\n"
        "// group, source position and side (actor, learner, -).\n// clang-format off\nstatic const char kRegions[] =";
    std::string line;
    for (const std::string &r : rows) {
        if (!line.empty() && line.size() + r.size() > 94) out += "\n   " + line, line.clear();
        line += " " + r;
    }
    if (!line.empty()) out += "\n   " + line;
    if (rows.empty()) out += " \"\"";
    return out + ";\n// clang-format on\n";
}

}  // namespace trlc::codegen
