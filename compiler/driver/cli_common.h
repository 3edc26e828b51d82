#pragma once
// cli_common — command-line pieces that trlc (driver/main.cpp) and trl-opt (tools/trl-opt.cpp)
// share, so that the two spell the same option the same way: the incrementalize options, the
// pipeline runner's options (--print-after, --stop-after, --print-types, --no-verify) and
// CLI11 parsing with the drivers' exit codes.  Header-only: both programs link CLI11, trlc_lib
// does not.
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "driver/pipeline.h"

namespace trlc {

/** Adds --incrementalize-min-bytes BYTES (into opts.incrementalize_min_bytes) and
 *  -fno-incrementalize (sets *no_incrementalize; the caller turns it into opts.incrementalize
 *  after parsing). */
inline void add_incrementalize_options(CLI::App &app, DriverOptions &opts, bool *no_incrementalize) {
    app.add_option("--incrementalize-min-bytes", opts.incrementalize_min_bytes,
                   "make running sums only of tensors of at least BYTES over their domain (default 0: of every one)");
    app.add_flag("--fno-incrementalize", *no_incrementalize,
                 "(spelled -fno-incrementalize) keep sums over slices as written: no running sums");
}

/** Adds --print-after=PASS[,PASS], --stop-after=PASS, --print-types, --no-verify (the
 *  pipeline runner's options, driver/pipeline.h) with the stage names as their choices, and
 *  --outer-band (the schedule stage's, schedule/outer_band.h); *no_verify becomes
 *  !opts.verify_each after parsing. */
inline void add_pipeline_options(CLI::App &app, DriverOptions &opts, bool *no_verify) {
    std::vector<std::string> stages;
    for (const Stage &st : pipeline_stages()) stages.push_back(st.name);
    std::string list;
    for (const std::string &n : stages) list += (list.empty() ? "" : ", ") + n;
    app.add_option("--print-after", opts.print_after,
                   "print the program (or the pass's result) on stderr after PASS: one of all, " + list +
                       " (except build, interpret); comma-separated or repeated")
        ->delimiter(',')
        ->check(CLI::IsMember(printable_stage_names()));
    app.add_option("--stop-after", opts.stop_after, "stop after pass PASS (exit 0)")->check(CLI::IsMember(stages));
    app.add_flag("--print-types", opts.print_types,
                 "with --print-after: every operation of the IR on its own line with its type");
    app.add_flag("--no-verify", *no_verify,
                 "skip the IR verifier that checks the IR's invariants after every pass that "
                 "rewrites it (a violation is an internal error naming the pass)");
    app.add_option("--outer-band", opts.outer_band,
                   "how the schedule's outermost loop is chosen: auto (default) fixes it at the outer dim "
                   "of the program's recurrences (the iteration, the time step), each statement's own "
                   "plus a constant, and lets isl schedule what runs in one of its iterations; DIM: that "
                   "dim (a warning when it cannot be, then as none); none: isl schedules the whole "
                   "program at once (slower: seconds for PPO)")
        ->type_name("auto|none|DIM");
}

/** Parses argv (-fX spelled as --fX, see cli11_args).  Returns true to go on; false when the
 *  program should exit with *exit_code: 0 after --help / --version, 1 for a bad command line
 *  (CLI11 has printed the message). */
inline bool parse_command_line(CLI::App &app, int argc, char **argv, int *exit_code) {
    std::vector<std::string> args = cli11_args(argc, argv);
    try {
        app.parse(args);
    } catch (const CLI::ParseError &e) {
        *exit_code = app.exit(e) == 0 ? 0 : 1;
        return false;
    }
    return true;
}

}  // namespace trlc
