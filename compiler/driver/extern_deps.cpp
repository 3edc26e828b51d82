// extern_deps — the files extern headers read (driver/extern_deps.h has the rules).
#include "driver/extern_deps.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "externs/extern_host.h"
#include "externs/externs.h"
#include "externs/subprocess.h"

namespace trlc {

namespace {

/** The prerequisites of the Makefile rule "rule" (`target: a b \<newline> c`), with `\ ` as a
 *  space inside a name and `$$` as `$` (GCC's -M escapes). */
std::vector<std::string> rule_prerequisites(const std::string &rule) {
    std::vector<std::string> out;
    size_t colon = rule.find(": ");
    if (colon == std::string::npos) return out;
    std::string cur;
    for (size_t i = colon + 2; i < rule.size(); ++i) {
        char c = rule[i];
        if (c == '\\' && i + 1 < rule.size() && (rule[i + 1] == '\n' || rule[i + 1] == ' ')) {
            if (rule[i + 1] == ' ') cur += ' ';
            ++i;
            if (rule[i] == '\n' && !cur.empty()) out.push_back(cur), cur.clear();
            continue;
        }
        if (c == '$' && i + 1 < rule.size() && rule[i + 1] == '$') {
            cur += '$';
            ++i;
            continue;
        }
        if (c == ' ' || c == '\n' || c == '\t') {
            if (!cur.empty()) out.push_back(cur), cur.clear();
            continue;
        }
        cur += c;
    }
    if (!cur.empty()) out.push_back(cur);
    return out;
}

}  // namespace

bool extern_dependencies(const ir::Program &prog, const SourceManager &sm, const std::vector<std::string> &include_dirs,
                         std::vector<std::string> *files) {
    std::set<std::string> headers, deps;
    for (const ir::ExternFn &f : prog.externs) {
        std::string h = extern_header_path(f, sm, include_dirs);
        if (h.empty()) return false;
        headers.insert(h);
    }
    if (headers.empty()) {
        files->clear();
        return true;
    }
    const std::string dir = make_temp_dir("trlc-deps");
    if (dir.empty()) return false;
    const std::string list = dir + "/deps.d", log = dir + "/log.txt";
    const char *cxx = getenv("CXX");
    bool ok = true;
    for (const std::string &h : headers) {
        std::vector<std::string> argv = {cxx && *cxx ? cxx : "c++", "-std=c++17", "-M", "-MG", "-MF", list, "-w"};
        for (const std::string &a : extern_include_args({h}, include_dirs)) argv.push_back(a);
        for (const std::string &a : {std::string("-x"), std::string("c++"), h}) argv.push_back(a);
        ToolRun r = run_tool(argv, log);
        std::ifstream in(list);
        std::stringstream text;
        text << in.rdbuf();
        std::vector<std::string> pre = rule_prerequisites(text.str());
        std::remove(list.c_str());
        if (!r.started || r.exit_status != 0 || pre.empty()) {
            ok = false;
            break;
        }
        deps.insert(pre.begin(), pre.end());
    }
    rmdir(dir.c_str());
    if (!ok) return false;
    files->assign(deps.begin(), deps.end());
    return true;
}

}  // namespace trlc
