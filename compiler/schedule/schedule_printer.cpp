// schedule_printer — --emit=schedule and the "schedule" section of --emit=json.
//
// --emit=schedule prints the isl schedule tree in isl's block YAML (readable back
// by --load-schedule), with the pieces of every union set/map in it sorted so the
// text is stable, then a blank line, then the loop nest in C form by isl's own
// printer (isl_ast_node_to_C_str), naming statements with their instance
// coordinates:
//   domain: "{ ret_0[]; ret_1[t] : 0 <= t <= 14; rew_0[t] : 0 <= t <= 15 }"
//   ...
//
//   for (int c0 = -15; c0 <= 0; c0 += 1) { ... ret_1(-c0); }
#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>

#include <isl/ast.h>
#include <isl/printer.h>
#include <isl/schedule.h>

#include "pdg/pdg_impl.h"
#include "schedule/schedule_impl.h"

namespace trlc {

namespace {

/* "a; b" pieces at bracket depth 0 of "body", trimmed and sorted, joined by "; ". */
std::string sort_pieces(const std::string &body) {
    std::vector<std::string> pieces;
    int depth = 0;
    std::string cur;
    for (char c : body) {
        if (c == '[' || c == '(' || c == '{') ++depth;
        if (c == ']' || c == ')' || c == '}') --depth;
        if (c == ';' && depth == 0) {
            pieces.push_back(cur);
            cur.clear();
            continue;
        }
        cur += c;
    }
    pieces.push_back(cur);
    for (std::string &p : pieces) {
        size_t a = p.find_first_not_of(' '), b = p.find_last_not_of(' ');
        p = a == std::string::npos ? "" : p.substr(a, b - a + 1);
    }
    std::sort(pieces.begin(), pieces.end());
    std::string out;
    for (size_t i = 0; i < pieces.size(); ++i) out += (i ? "; " : "") + pieces[i];
    return out;
}

}  // namespace

std::string sorted_union_text(const std::string &text) {
    // Every outermost "{ ... }" group (a union set/map; a multi_union_pw_aff has one
    // per member) gets its pieces sorted; the rest of the text is kept.
    std::string out;
    size_t i = 0;
    while (i < text.size()) {
        size_t open = text.find('{', i);
        if (open == std::string::npos) {
            out += text.substr(i);
            break;
        }
        int depth = 0;
        size_t close = open;
        for (; close < text.size(); ++close) {
            if (text[close] == '{') ++depth;
            if (text[close] == '}' && --depth == 0) break;
        }
        if (close >= text.size()) {
            out += text.substr(i);
            break;
        }
        out += text.substr(i, open - i);
        std::string body = text.substr(open + 1, close - open - 1);
        std::string sorted = sort_pieces(body);
        out += sorted.empty() ? "{ }" : "{ " + sorted + " }";
        i = close + 1;
    }
    return out;
}

namespace {

/* Sort union pieces inside every double-quoted YAML string. */
std::string stable_yaml(const std::string &yaml) {
    std::string out;
    size_t i = 0;
    while (i < yaml.size()) {
        size_t q = yaml.find('"', i);
        if (q == std::string::npos) {
            out += yaml.substr(i);
            break;
        }
        size_t e = yaml.find('"', q + 1);
        if (e == std::string::npos) {
            out += yaml.substr(i);
            break;
        }
        out += yaml.substr(i, q + 1 - i);
        out += sorted_union_text(yaml.substr(q + 1, e - q - 1));
        out += '"';
        i = e + 1;
    }
    return out;
}

std::string tree_yaml(const Schedule &s) {
    const ScheduleImpl &im = s.impl();
    if (im.schedule.is_null()) return "";
    isl_printer *p = isl_printer_to_str(im.schedule.ctx().get());
    p = isl_printer_set_yaml_style(p, ISL_YAML_STYLE_BLOCK);
    p = isl_printer_print_schedule(p, im.schedule.get());
    char *str = isl_printer_get_str(p);
    isl_printer_free(p);
    std::string out = str ? str : "";
    free(str);
    return stable_yaml(out);
}

std::string loop_nest_text(const Schedule &s) {
    const ScheduleImpl &im = s.impl();
    if (im.ast.is_null()) return "";
    char *str = isl_ast_node_to_C_str(im.ast.get());
    std::string out = str ? str : "";
    free(str);
    return out;
}

}  // namespace

void print_schedule(const Schedule &s, std::ostream &out) {
    std::string yaml = tree_yaml(s);
    out << yaml;
    if (!yaml.empty() && yaml.back() != '\n') out << "\n";
    out << "\n" << loop_nest_text(s);
}

std::string schedule_to_json(const Schedule &s) {
    const ScheduleImpl &im = s.impl();
    nlohmann::json j;
    j["tree"] = tree_yaml(s);
    j["loop_nest"] = loop_nest_text(s);
    j["schedule_map"] = im.schedule_map.is_null() ? "" : sorted_union_text(isl_text(im.schedule_map));
    nlohmann::json stmts = nlohmann::json::array();
    for (size_t i = 0; i < s.statements.size(); ++i) {
        const Statement &st = s.statements[i];
        nlohmann::json b = nlohmann::json::array();
        for (int p : st.batch_positions) b.push_back(p);
        std::string dom = i < im.stmt_domain.size() ? isl_text(im.stmt_domain[i]) : "";
        stmts.push_back({{"name", st.name}, {"domain", dom}, {"batch", b}});
    }
    j["statements"] = stmts;
    return j.dump();
}

}  // namespace trlc
