// subprocess — posix_spawnp with the output captured in a file; see subprocess.h.
#include "externs/subprocess.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

extern char **environ;

namespace trlc {

std::string make_temp_dir(const std::string &prefix) {
    const char *tmp = getenv("TMPDIR");
    std::string tmpl_s = std::string(tmp && *tmp ? tmp : "/tmp") + "/" + prefix + "-XXXXXX";
    std::vector<char> tmpl(tmpl_s.begin(), tmpl_s.end());
    tmpl.push_back('\0');
    return mkdtemp(tmpl.data()) ? std::string(tmpl.data()) : std::string();
}

namespace {

/** Starts argv with its output in "log"; r.started false (and spawn_errno) when it cannot. */
pid_t spawn_tool(const std::vector<std::string> &argv, const std::string &log, ToolRun &r) {
    if (argv.empty()) {
        r.spawn_errno = EINVAL;
        return 0;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, STDOUT_FILENO, STDERR_FILENO);
    posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    std::vector<char *> args;
    for (const std::string &a : argv) args.push_back(const_cast<char *>(a.c_str()));
    args.push_back(nullptr);
    pid_t pid = 0;
    int rc = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {  // the child opened "log" before its exec failed: nothing reads it now
        std::remove(log.c_str());
        r.spawn_errno = rc;
        return 0;
    }
    r.started = true;
    return pid;
}

/** Waits for "pid" and reads (then removes) its log into r. */
void finish_tool(pid_t pid, const std::string &log, ToolRun &r) {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (WIFEXITED(status))
        r.exit_status = WEXITSTATUS(status);
    else if (WIFSIGNALED(status))
        r.exit_status = 128 + WTERMSIG(status);
    std::ifstream in(log, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    r.output = ss.str();
    std::remove(log.c_str());
}

}  // namespace

ToolRun run_tool(const std::vector<std::string> &argv, const std::string &log) {
    return run_tools({argv}, {log}).front();
}

std::vector<ToolRun> run_tools(const std::vector<std::vector<std::string>> &argvs,
                               const std::vector<std::string> &logs) {
    std::vector<ToolRun> r(argvs.size());
    std::vector<pid_t> pids(argvs.size(), 0);
    for (size_t k = 0; k < argvs.size(); ++k) pids[k] = spawn_tool(argvs[k], logs.at(k), r[k]);
    for (size_t k = 0; k < argvs.size(); ++k)
        if (r[k].started) finish_tool(pids[k], logs[k], r[k]);
    return r;
}

std::string shell_quote(const std::string &a) {
    bool plain = !a.empty();
    for (char c : a) plain = plain && (isalnum(static_cast<unsigned char>(c)) || strchr("-_./=,:+@%", c));
    if (plain) return a;
    std::string q = "'";
    for (char c : a) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

std::string command_text(const std::vector<std::string> &argv) {
    std::string s;
    for (const std::string &a : argv) s += (s.empty() ? "" : " ") + shell_quote(a);
    return s;
}

}  // namespace trlc
