#!/usr/bin/env python3
"""check_grammar.py — tokenizes .trl files with tools/editor/trl.tmLanguage.json the way a
TextMate engine does (at each position the first pattern, in grammar order, that matches there;
begin/end rules span lines and apply their inner patterns), and reports every character no rule
covers as `file:line:col: unknown token 'x'` (exit 1).  --scopes prints each token with its scope.

    python3 tools/editor/check_grammar.py samples dsl FILE.trl ... [--scopes]   (directories: every .trl)

A simplification of TextMate's rule (which picks the earliest match anywhere on the line): the
grammar's rules are written so that the first rule matching at the current position is the one a
real engine picks (comments and strings first, keywords before identifiers, calls before plain
identifiers); Python's re stands in for Oniguruma, so the grammar uses only what both support.
"""
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def load(path=os.path.join(HERE, "trl.tmLanguage.json")):
    g = json.load(open(path))
    repo = g.get("repository", {})

    def expand(patterns):
        out = []
        for p in patterns:
            if "include" in p:
                out += expand(repo[p["include"].lstrip("#")]["patterns"])
            else:
                q = dict(p)
                for k in ("match", "begin", "end"):
                    if k in q:
                        q[k + "_re"] = re.compile(q[k])
                if "patterns" in q:
                    q["inner"] = expand(q["patterns"])
                out.append(q)
        return out

    return expand(g["patterns"])


def scope_of(rule, m):
    if rule.get("name"):
        return rule["name"]
    caps = rule.get("captures", {})
    return " ".join(caps[k]["name"] for k in sorted(caps) if m.group(int(k)))


def tokenize(text, rules):
    """Yields (line, col, token, scope) and (line, col, char, None) for unknown characters."""
    lines = text.split("\n")
    open_rule = None  # a begin/end rule spanning lines
    for ln, line in enumerate(lines, 1):
        i = 0
        start = 0  # where the open rule's token starts on this line
        while i < len(line) or (open_rule is not None and i == len(line) == 0):
            if open_rule is not None:
                # TextMate: the earliest of the end pattern and the inner patterns (an escape
                # before a quote consumes it); at the same position the end wins.
                j, m = i, None
                while True:
                    m = open_rule["end_re"].search(line, j)
                    inner = None
                    for r in open_rule.get("inner", []):
                        hm = r["match_re"].search(line, j)
                        if hm and hm.end() > hm.start() and (inner is None or hm.start() < inner.start()):
                            inner = hm
                    if inner is not None and (m is None or inner.start() < m.start()):
                        j = inner.end()
                        continue
                    break
                stop = m.end() if m else len(line)
                yield ln, start + 1, line[start:stop], open_rule["name"]
                i = start = stop
                if m:
                    open_rule = None
                if not line:
                    break
                continue
            if line[i].isspace():
                i += 1
                continue
            for r in rules:
                if "match_re" in r:
                    m = r["match_re"].match(line, i)
                    if m and m.end() > i:
                        yield ln, i + 1, m.group(0), scope_of(r, m)
                        i = m.end()
                        break
                elif "begin_re" in r:
                    m = r["begin_re"].match(line, i)
                    if m:
                        open_rule = r
                        start, i = i, m.end()
                        break
            else:
                yield ln, i + 1, line[i], None
                i += 1


def main():
    args = []
    for a in sys.argv[1:]:
        if a.startswith("--"):
            continue
        if os.path.isdir(a):  # every .trl under a directory
            args += sorted(os.path.join(d, f) for d, _, fs in os.walk(a) for f in fs if f.endswith(".trl"))
        else:
            args.append(a)
    show = "--scopes" in sys.argv
    rules = load()
    bad = 0
    tokens = 0
    for path in args:
        for ln, col, tok, scope in tokenize(open(path, encoding="utf-8").read(), rules):
            if scope is None:
                print(f"{path}:{ln}:{col}: unknown token '{tok}'")
                bad += 1
            else:
                tokens += 1
                if show:
                    print(f"{ln}:{col} {tok!r} {scope}")
    print(f"check_grammar: {len(args)} files, {tokens} tokens, {bad} unknown")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
