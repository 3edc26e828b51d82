#pragma once
// subprocess — run an external tool (the host C++ compiler, nvcc, nvidia-smi) and capture what it
// prints.  Used by externs/extern_host.cpp (extern headers for the interpreter) and by
// driver/build_program.cpp (trlc -o); it lives in externs/ because the driver may include the
// stages below it, not the other way round.
#include <string>
#include <vector>

namespace trlc {

/** What running a tool gave. */
struct ToolRun {
    bool started = false;  // false: posix_spawnp failed (spawn_errno says why)
    int spawn_errno = 0;
    int exit_status = -1;  // exit code, or 128 + signal number
    std::string output;    // stdout and stderr, interleaved as written
};

/** Run argv (argv[0] looked up on PATH) with stdin from /dev/null and stdout + stderr written to
 *  the file "log" (created, read back into ToolRun::output, then removed); waits for it. */
ToolRun run_tool(const std::vector<std::string> &argv, const std::string &log);

/** run_tool for several commands at once: all started, then all waited for (logs[k] is
 *  argvs[k]'s log file; the same length).  The k-th result is argvs[k]'s. */
std::vector<ToolRun> run_tools(const std::vector<std::vector<std::string>> &argvs,
                               const std::vector<std::string> &logs);

/** A new private directory $TMPDIR/PREFIX-XXXXXX (/tmp when TMPDIR is unset or empty), made by
 *  mkdtemp; "" when it cannot be made (errno says why).  The caller removes it. */
std::string make_temp_dir(const std::string &prefix);

/** One argument quoted for a shell user when it holds anything but [A-Za-z0-9-_./=,:+@%]. */
std::string shell_quote(const std::string &a);
/** argv as a command line to show (each argument shell_quote'd, joined by spaces). */
std::string command_text(const std::vector<std::string> &argv);

}  // namespace trlc
