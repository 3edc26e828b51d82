#include "support/source.h"

#include <fstream>
#include <sstream>

namespace trlc {

std::string_view SourceFile::line(int line_no) const {
    if (line_no < 1 || line_no > static_cast<int>(line_starts.size())) return {};
    size_t begin = line_starts[line_no - 1];
    size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    if (end > begin && text[end - 1] == '\r') --end;
    return std::string_view(text).substr(begin, end - begin);
}

int SourceManager::add(std::string path, std::string text) {
    auto f = std::make_unique<SourceFile>();
    f->path = std::move(path);
    f->text = std::move(text);
    f->line_starts.push_back(0);
    for (size_t i = 0; i < f->text.size(); ++i)
        if (f->text[i] == '\n') f->line_starts.push_back(i + 1);
    files_.push_back(std::move(f));
    return static_cast<int>(files_.size()) - 1;
}

int SourceManager::load(const std::string &path, std::string *error) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        if (error) *error = "cannot open '" + path + "'";
        return -1;
    }
    std::ostringstream ss;
    ss << in.rdbuf();
    if (in.bad()) {
        if (error) *error = "cannot read '" + path + "'";
        return -1;
    }
    return add(path, ss.str());
}

int SourceManager::find(const std::string &path) const {
    for (size_t i = 0; i < files_.size(); ++i)
        if (files_[i]->path == path) return static_cast<int>(i);
    return -1;
}

}  // namespace trlc
