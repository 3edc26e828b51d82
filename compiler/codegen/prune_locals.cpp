// prune_locals — see prune_locals.h.
#include "codegen/prune_locals.h"

#include <cctype>
#include <vector>

namespace trlc {
namespace {

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

/** The identifiers of "line" (words starting with a letter or '_'). */
std::vector<std::string> identifiers(const std::string &line) {
    std::vector<std::string> out;
    for (size_t i = 0; i < line.size();) {
        if (!ident_char(line[i])) {
            ++i;
            continue;
        }
        size_t j = i;
        while (j < line.size() && ident_char(line[j])) ++j;
        if (!std::isdigit(static_cast<unsigned char>(line[i]))) out.push_back(line.substr(i, j - i));
        i = j;
    }
    return out;
}

/** What a removable line declares or silences: its name, or "" when the line is neither. */
struct Candidate {
    std::string name;
    bool is_void = false;  // "(void)NAME;"
};

Candidate candidate(const std::string &line) {
    size_t b = line.find_first_not_of(' ');
    if (b == std::string::npos || b == 0) return {};
    std::string s = line.substr(b);
    size_t comment = s.find("  // ");
    if (comment != std::string::npos) s.resize(comment);
    if (s.empty() || s.back() != ';') return {};
    if (s.compare(0, 6, "(void)") == 0) {
        std::string n = s.substr(6, s.size() - 7);
        for (char c : n)
            if (!ident_char(c)) return {};
        return {n, true};
    }
    for (const char *prefix : {"const long long ", "const trl::Philox2x32Key ", "const char *", "const float *const ",
                               "const double *const ", "const int32_t *const ", "const bool *const ", "const float *",
                               "const double *", "const int32_t *"}) {
        std::string p = prefix;
        if (s.compare(0, p.size(), p) != 0) continue;
        size_t eq = s.find(" = ", p.size());
        if (eq == std::string::npos) return {};
        std::string n = s.substr(p.size(), eq - p.size());
        for (char c : n)
            if (!ident_char(c)) return {};
        // One statement of index arithmetic, names and casts: no call with possible effects
        // (a parenthesis after a name would be a call).
        std::string rhs = s.substr(eq + 3);
        if (rhs.find(';') != rhs.size() - 1) return {};
        for (size_t k = 0; k < rhs.size(); ++k) {
            char c = rhs[k];
            if (!(ident_char(c) || std::string(" +-*/%()<>?:=!&|.;").find(c) != std::string::npos)) return {};
            if (c == '(' && k > 0 && ident_char(rhs[k - 1])) return {};
        }
        return {n, false};
    }
    return {};
}

/** The indentation of "line"; npos for a blank or preprocessor line (#if of the run-time
 *  bounds' CUDA copy, in column 0 inside run_program), which ends no scope. */
size_t indent_of(const std::string &line) {
    size_t b = line.find_first_not_of(' ');
    return b == std::string::npos || line[b] == '#' ? std::string::npos : b;
}

/** Removes the unread declarations among lines [lo, hi) (one top-level function): a
 *  declaration's scope runs to the first later line indented less than it. */
size_t prune_function(const std::vector<std::string> &lines, size_t lo, size_t hi, std::vector<bool> &gone) {
    std::vector<Candidate> cand(hi - lo);
    std::vector<std::vector<std::string>> ids(hi - lo);
    for (size_t i = lo; i < hi; ++i) {
        cand[i - lo] = candidate(lines[i]);
        ids[i - lo] = identifiers(lines[i]);
    }
    auto scope_end = [&](size_t i) {  // one past the last line of declaration i's scope
        size_t d = indent_of(lines[i]), end = i + 1;
        for (; end < hi; ++end) {
            size_t e = indent_of(lines[end]);
            if (e != std::string::npos && e < d) break;
        }
        return end;
    };
    auto silences = [&](size_t k, const std::string &name) {
        return cand[k - lo].is_void && cand[k - lo].name == name;
    };
    size_t removed = 0;
    auto drop = [&](size_t k) { gone[k] = true, ++removed; };
    for (bool changed = true; changed;) {
        changed = false;
        for (size_t i = lo; i < hi; ++i) {
            const Candidate &c = cand[i - lo];
            if (gone[i] || c.name.empty() || c.is_void) continue;
            size_t end = scope_end(i);
            bool used = false;
            for (size_t k = i + 1; k < end && !used; ++k)
                if (!gone[k] && !silences(k, c.name))
                    for (const auto &w : ids[k - lo]) used = used || w == c.name;
            if (used) continue;
            drop(i);
            changed = true;
            for (size_t k = i + 1; k < end; ++k)
                if (!gone[k] && silences(k, c.name)) drop(k);
        }
    }
    // A declaration that stayed is read: its "(void)NAME;" lines say nothing any more.
    for (size_t i = lo; i < hi; ++i) {
        const Candidate &c = cand[i - lo];
        if (gone[i] || c.name.empty() || c.is_void) continue;
        for (size_t k = i + 1, end = scope_end(i); k < end; ++k)
            if (!gone[k] && silences(k, c.name)) drop(k);
    }
    return removed;
}

}  // namespace

size_t prune_unused_locals(std::string &source) {
    std::vector<std::string> lines;
    for (size_t i = 0; i < source.size();) {
        size_t e = source.find('\n', i);
        if (e == std::string::npos) e = source.size();
        lines.push_back(source.substr(i, e - i));
        i = e + 1;
    }
    std::vector<bool> gone(lines.size(), false);
    size_t removed = 0, start = 0;
    for (size_t i = 0; i < lines.size(); ++i)
        if (lines[i] == "}" || i + 1 == lines.size()) {
            removed += prune_function(lines, start, i + 1, gone);
            start = i + 1;
        }
    if (!removed) return 0;
    std::string out;
    out.reserve(source.size());
    for (size_t i = 0; i < lines.size(); ++i)
        if (!gone[i]) out += lines[i] + "\n";
    if (!source.empty() && source.back() != '\n' && !out.empty()) out.pop_back();
    source.swap(out);
    return removed;
}

}  // namespace trlc
