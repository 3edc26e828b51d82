#pragma once
// source — the files a compilation reads, and positions inside them.
//
// Every diagnostic, AST node and IR node carries a `Loc` (file id, 1-based line
// and column, length in bytes) so that errors point at the exact source range.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace trlc {

/** A position in a source file: file id from SourceManager, 1-based line and
 *  column (in bytes), and the length of the range it covers (>= 1 when known). */
struct Loc {
    int file = -1;
    int line = 0;
    int col = 0;
    int length = 1;
    bool valid() const { return file >= 0; }
};

/** One loaded source file: its path as given, its text, and a line table. */
struct SourceFile {
    std::string path;
    std::string text;
    std::vector<size_t> line_starts;           // byte offset of each line's first character
    std::string_view line(int line_no) const;  // 1-based; "" when out of range
    /** For an imported module: the `import` declaration that loaded it (invalid for the main
     *  file and in-memory files).  Diagnostics located in the module name it in a note. */
    Loc imported_at;
};

/** Owns every source file of one compilation.  File ids index `files()`. */
class SourceManager {
public:
    /** Add an in-memory file; returns its id. */
    int add(std::string path, std::string text);
    /** Read "path" from disk; returns its id, or -1 (and sets "error") if unreadable. */
    int load(const std::string &path, std::string *error);
    const SourceFile &file(int id) const { return *files_.at(id); }
    int size() const { return static_cast<int>(files_.size()); }
    /** Id of an already loaded file with this canonical path, or -1. */
    int find(const std::string &path) const;
    /** Record that file "id" was loaded by the import at "at" (see SourceFile::imported_at). */
    void set_imported_at(int id, Loc at) { files_.at(id)->imported_at = at; }

private:
    std::vector<std::unique_ptr<SourceFile>> files_;
};

}  // namespace trlc
