// compile_parts — the kernels of a host program split into an -O3 part and an -O1 part; see
// compile_parts.h.
#include "codegen/compile_parts.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <set>
#include <vector>

#include "codegen/work_estimate.h"
#include "schedule/schedule.h"
#include "schedule/schedule_impl.h"

namespace trlc::codegen {

const char *const kUnitsLine = "// trlc compile units (the part of each):";
const char *const kProgramHashComment = " /* program hash */";
const char *const kHostBegin = "\x03host\x03\n";
const char *const kHostEnd = "\x03endhost\x03\n";

namespace {

int64_t weight(const ir::Node &n) {
    using ir::NodeKind;
    switch (n.kind) {
    case NodeKind::Unary:
        switch (n.uop) {
        case ir::UnaryOp::Sin:
        case ir::UnaryOp::Cos: return n.type.dtype == ir::DType::F64 ? 64 : 16;
        case ir::UnaryOp::Exp:
        case ir::UnaryOp::Log:
        case ir::UnaryOp::Tanh:
        case ir::UnaryOp::Sigmoid:
        case ir::UnaryOp::Softplus: return 16;
        default: return 1;
        }
    case NodeKind::Binary: return n.bop == ir::BinaryOp::Pow ? 16 : 1;
    case NodeKind::Extern: return 64;
    case NodeKind::Rng: return 16;
    case NodeKind::Builtin:
        switch (n.builtin) {
        case ir::BuiltinOp::Logsumexp:
        case ir::BuiltinOp::Softmax:
        case ir::BuiltinOp::LogSoftmax:
        case ir::BuiltinOp::Uniform:
        case ir::BuiltinOp::Normal:
        case ir::BuiltinOp::Categorical:
        case ir::BuiltinOp::Orthogonal: return 16;
        case ir::BuiltinOp::Permutation: {
            int64_t w = 16, m = work_numel(n.type);
            while (m > 1) m >>= 1, w += 16;
            return w;
        }
        default: return 1;
        }
    default: return 1;
    }
}

}  // namespace

int64_t weighted_work(const ir::Node &root) {
    std::set<const ir::Node *> seen;
    return work_estimate(root, seen, &weight);
}

int64_t statement_instances(const Schedule &sched, int si) {
    const isl::set &dom = sched.impl().stmt_domain.at(si);
    if (dom.is_empty()) return 0;
    int64_t n = 1;
    const int dims = static_cast<int>(dom.tuple_dim());
    for (int d = 0; d < dims; ++d) {
        isl::val lo = dom.dim_min_val(d), hi = dom.dim_max_val(d);
        if (!lo.is_int() || !hi.is_int()) return INT64_MAX / 4;  // unbounded: count it heavy
        const int64_t extent = hi.get_num_si() - lo.get_num_si() + 1;
        n = std::min<int64_t>(INT64_MAX / 4, n * std::max<int64_t>(1, extent));
    }
    return n;
}

std::string part_begin_marker(const std::string &name) { return "\x03part " + name + "\x03\n"; }
std::string part_end_marker(const std::string &name) { return "\x03end " + name + "\x03\n"; }

namespace {

struct Marked {
    std::string name;
    size_t begin = 0, end = 0;  // offsets of the two marker lines
};

std::vector<Marked> find_marked(const std::string &src) {
    std::vector<Marked> out;
    const std::string open = "\x03part ";
    for (size_t at = src.find(open); at != std::string::npos; at = src.find(open, at + 1)) {
        Marked m;
        size_t close = src.find('\x03', at + open.size());
        m.name = src.substr(at + open.size(), close - at - open.size());
        m.begin = at;
        m.end = src.find(part_end_marker(m.name), close);
        out.push_back(m);
    }
    return out;
}

void erase_all(std::string &src, const std::string &what) {
    for (size_t at = src.find(what); at != std::string::npos; at = src.find(what, at)) src.erase(at, what.size());
}

}  // namespace

bool assign_compile_parts(std::string &src, const std::map<std::string, KernelWeight> &weights) {
    std::vector<Marked> kernels = find_marked(src);
    std::map<std::string, KernelWeight> weight_of;  // every marked kernel's (missing: nothing)
    double total = 0;
    int64_t most = 0;
    for (const Marked &m : kernels) {
        auto w = weights.find(m.name);
        const KernelWeight v = w == weights.end() ? KernelWeight{} : w->second;
        weight_of[m.name] = v;
        total += static_cast<double>(v.work);
        most = std::max(most, v.launches);
    }
    // The lightest kernels, together at most kColdShare of the total, go to part 0, unless
    // launched at least an eighth as often as the most launched kernel; operand kernels never.
    std::vector<std::pair<int64_t, std::string>> order;
    for (const auto &w : weight_of)
        if (!w.second.operands) order.push_back({w.second.work, w.first});
    std::sort(order.begin(), order.end());
    std::map<std::string, int> part;
    for (const Marked &m : kernels) part[m.name] = 1;
    double cold = 0;
    for (const auto &o : order) {
        bool fits =
            cold + static_cast<double>(o.first) <= kColdShare * total && weight_of[o.second].launches < most / 8 + 1;
        if (fits) cold += static_cast<double>(o.first);
        part[o.second] = fits ? 0 : 1;
    }
    int hot = 0;
    for (const auto &p : part) hot += p.second;
    if (hot == 0 || hot == static_cast<int>(part.size()) || src.find(kHostBegin) == std::string::npos) {
        for (const Marked &m : kernels) {
            erase_all(src, part_begin_marker(m.name));
            erase_all(src, part_end_marker(m.name));
        }
        erase_all(src, kHostBegin);
        erase_all(src, kHostEnd);
        return false;
    }
    // The compile units (compile_parts.h): 0 the host code, 1 part 0's kernels, then part 1's
    // kernels in units of about kUnitLines lines, largest first onto the least loaded unit.
    std::map<std::string, int> unit;
    std::vector<std::pair<int64_t, std::string>> hot_by_lines;
    int64_t hot_lines = 0;
    for (const Marked &m : kernels) {
        if (part[m.name] == 0) {
            unit[m.name] = 1;
            continue;
        }
        const int64_t lines = std::count(src.begin() + static_cast<std::ptrdiff_t>(m.begin),
                                         src.begin() + static_cast<std::ptrdiff_t>(m.end), '\n');
        hot_by_lines.push_back({-lines, m.name});
        hot_lines += lines;
    }
    std::sort(hot_by_lines.begin(), hot_by_lines.end());
    const int hot_units =
        static_cast<int>(std::clamp<int64_t>((hot_lines + kUnitLines - 1) / kUnitLines, 1, kMaxHotUnits));
    std::vector<int64_t> load(hot_units, 0);
    for (const auto &h : hot_by_lines) {
        const int b = static_cast<int>(std::min_element(load.begin(), load.end()) - load.begin());
        unit[h.second] = 2 + b;
        load[b] -= h.first;
    }
    // Back to front, so that the offsets found stay valid.  Each guard says why.
    for (auto m = kernels.rbegin(); m != kernels.rend(); ++m) {
        const size_t end_len = part_end_marker(m->name).size(), begin_len = part_begin_marker(m->name).size();
        const KernelWeight &v = weight_of[m->name];
        char share[160];
        snprintf(share, sizeof share, "  // %s%.2f %% of the estimated work, %lld launches\n",
                 v.operands ? "a product's operands, " : "",
                 total > 0 ? 100.0 * static_cast<double>(v.work) / total : 0.0, static_cast<long long>(v.launches));
        std::string why = share;
        const int p = part[m->name];
        if (p == 1) {
            const bool no_peel =
                total > 0 && static_cast<double>(v.work) < kNoPeelShare * total && v.launches < most / 8 + 1;
            if (no_peel) {  // kNoPeelShare: back to front within the body, before the offsets move
                const std::string seq = "TRLG_SEQ\n", cold = "TRLG_SEQ_COLD\n";
                for (size_t at = src.rfind(seq, m->end); at != std::string::npos && at > m->begin;
                     at = at ? src.rfind(seq, at - 1) : std::string::npos) {
                    src.replace(at, seq.size(), cold);
                    m->end += cold.size() - seq.size();
                }
                why += "// its loops not unrolled: TRLG_SEQ_COLD (kNoPeelShare)\n";
            }
        }
        // the other units call it: its declaration, the header line with ";" for " {"
        size_t body = m->begin + begin_len, eol = src.find('\n', body);
        std::string header = src.substr(body, eol - body);
        if (header.size() >= 2 && header.compare(header.size() - 2, 2, " {") == 0) header.resize(header.size() - 2);
        src.replace(m->end, end_len, "#else\n" + header + ";\n#endif\n");
        src.replace(m->begin, begin_len,
                    "#if TRL_IN_UNIT(" + std::to_string(p) + ", " + std::to_string(unit[m->name]) + ")" + why);
    }
    size_t host = src.find(kHostBegin);
    src.replace(host, std::string(kHostBegin).size(), "#if TRL_IN_UNIT(0, 0)  // run_program, main\n");
    size_t host_end = src.find(kHostEnd);
    src.replace(host_end, std::string(kHostEnd).size(), "#endif  // TRL_IN_UNIT(0, 0)\n");
    std::string units = kUnitsLine;
    for (int u = 0; u < 2 + hot_units; ++u) units += u < 2 ? " 0" : " 1";
    const size_t first = src.find("#if TRL_IN_UNIT(");
    src.insert(first, std::string("// trlc -o compiles this source in two parts") +
                          " (codegen/compile_parts.h): part 0 (-DTRL_PART=0:\n"
                          "// run_program, main, the kernels that do the least work, at -O1) and part 1\n"
                          "// (-DTRL_PART=1: the other kernels, at -O3), each in compile units (-DTRL_UNIT=u:\n"
                          "// unit 0 run_program and main, 1 part 0's kernels, 2.. part 1's), compiled side by\n"
                          "// side and cached one by one, then linked.  Without TRL_PART it compiles whole.\n" +
                          units +
                          "\n"
                          "#if defined(TRL_PART)\n"
                          "#define TRL_IN_PART(p) (TRL_PART == (p))\n"
                          "#else\n"
                          "#define TRL_IN_PART(p) 1\n"
                          "#endif\n"
                          "#if defined(TRL_UNIT)\n"
                          "#define TRL_IN_UNIT(p, u) (TRL_IN_PART(p) && TRL_UNIT == (u))\n"
                          "#else\n"
                          "#define TRL_IN_UNIT(p, u) TRL_IN_PART(p)\n"
                          "#endif\n");
    return true;
}

std::vector<int> compile_units(const std::string &src) {
    std::vector<int> parts;
    const size_t at = src.find(kUnitsLine);
    if (at == std::string::npos) return parts;
    const size_t from = at + std::string(kUnitsLine).size(), eol = src.find('\n', from);
    for (size_t i = from; i < eol && i < src.size(); ++i)
        if (src[i] == '0' || src[i] == '1') parts.push_back(src[i] - '0');
    return parts;
}

std::string unit_view(const std::string &src, int u) {
    std::string out;
    const std::string own = std::to_string(u);  // the U of TRL_IN_UNIT(P, U)
    int depth = 0;                              // #if nesting inside a guard of another unit (0: outside one)
    bool in_else = false;                       // in that guard's #else branch (the declaration: kept)
    size_t pos = 0;
    while (pos < src.size()) {
        size_t eol = src.find('\n', pos);
        if (eol == std::string::npos) eol = src.size();
        const std::string line = src.substr(pos, eol - pos);
        pos = eol + 1;
        if (depth == 0) {
            const size_t comma = line.find(", "), close = line.find(')');
            if (line.rfind("#if TRL_IN_UNIT(", 0) == 0 && comma != std::string::npos && close > comma &&
                line.substr(comma + 2, close - comma - 2) != own) {
                depth = 1;
                in_else = false;
                continue;
            }
        } else {
            if (line.rfind("#if", 0) == 0)
                ++depth;
            else if (line.rfind("#endif", 0) == 0 && --depth == 0)
                continue;
            else if (depth == 1 && line.rfind("#else", 0) == 0) {
                in_else = true;
                continue;
            }
            if (!in_else) continue;
        }
        if (line.find(kProgramHashComment) != std::string::npos) continue;  // compiled alone
        const size_t text = line.find_first_not_of(' ');
        if (text != std::string::npos && line.compare(text, 2, "//") == 0) continue;  // a comment
        out += line;
        out += '\n';
    }
    return out;
}

std::string program_hash_literal(const std::string &src) {
    const size_t at = src.find(kProgramHashComment);
    if (at == std::string::npos) return "";
    const size_t open = src.rfind("TRLG_PROGRAM_HASH(", at), close = src.rfind(')', at);
    if (open == std::string::npos || close == std::string::npos || close < open) return "";
    const size_t from = open + std::string("TRLG_PROGRAM_HASH(").size();
    std::string lit = src.substr(from, close - from);
    for (char c : lit)
        if (!isxdigit(static_cast<unsigned char>(c)) && c != 'x' && c != 'U' && c != 'L') return "";
    return lit;
}

}  // namespace trlc::codegen
