#pragma once
// cli_common — command-line pieces that trlc (driver/main.cpp) and trl-opt (tools/trl-opt.cpp)
// share, so that the two spell the same option the same way: the incrementalize options and
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
inline void add_incrementalize_options(CLI::App &app, DriverOptions &opts,
                                       bool *no_incrementalize) {
    app.add_option("--incrementalize-min-bytes", opts.incrementalize_min_bytes,
                   "make running sums only of tensors of at least BYTES (default 1 MB)");
    app.add_flag("--fno-incrementalize", *no_incrementalize,
                 "(spelled -fno-incrementalize) keep sums over slices as written: no running sums");
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
