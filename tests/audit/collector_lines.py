#!/usr/bin/env python3
"""The repository's code in tracer-collector, counted from the binary (docs/security.md, "Auditing the collector").

    collector_lines.py [--print | --update] BUILD/tracer-collector

Which code is in the binary comes from its DWARF line table (llvm-dwarfdump --debug-line):
a repository source file holds code in the binary when the table maps at least one
instruction to it. What is counted, in non-blank lines outside comments:

  - a .c file that holds code: the whole file (its functions, its tables, its includes);
  - a header that holds code: its inline functions that are compiled in, each whole; a header
    with code anywhere else (or with a static definition that is not an inline function)
    counts whole;
  - the BPF programs (loaded as bytes) and the generated skeleton (under the build directory)
    are not counted.

Headers without code (types, prototypes, constants: the files the line table names but maps
no instruction to) are listed in a second table, to read with the code that uses them; their
lines are not in the total.

Without an option: compare the two tables of docs/security.md (between the audit-files and
audit-headers markers) with the binary, and check the total against the limit; exit 1 with
what differs. --print writes the tables as they should be; --update writes them into the doc.
Each row keeps the text of its "What to check" column from the doc; a file new to the doc
gets a placeholder that fails the check until someone writes what to check in it.
"""
import difflib
import os
import re
import shutil
import subprocess
import sys

LIMIT = 2100  # the rule's total (docs/security.md, "Two counts": why not 2000)
STRICT_TARGET = 2000
DOC = "docs/security.md"
TODO = "**to write:** what to check in it"


def dwarfdump():
    for name in ["llvm-dwarfdump"] + ["llvm-dwarfdump-%d" % v for v in range(20, 10, -1)]:
        if shutil.which(name):
            return name
    sys.exit("collector_lines: no llvm-dwarfdump (the llvm package: make deps)")


def line_table(binary, root, build):
    """{repository path: set of line numbers with code} and the set of repository files the tables name."""
    out = subprocess.run([dwarfdump(), "--debug-line", binary], capture_output=True, text=True, check=True).stdout
    code, named = {}, set()
    dirs, files, name, dead = {}, {}, None, None
    for line in out.splitlines():
        if line.startswith("debug_line["):
            dirs, files = {}, {}
        elif m := re.match(r'\s*include_directories\[\s*(\d+)\] = "(.*)"', line):
            dirs[int(m.group(1))] = m.group(2)
        elif m := re.match(r"\s*file_names\[\s*(\d+)\]:", line):
            index = int(m.group(1))
        elif m := re.match(r'\s*name: "(.*)"', line):
            name = m.group(1)
        elif (m := re.match(r"\s*dir_index: (\d+)", line)) and name is not None:
            path = os.path.normpath(os.path.join(dirs.get(0, root), dirs.get(int(m.group(1)), ""), name))
            if path.startswith(dirs.get(0, root).rstrip("/") + "/"):  # built in another copy of the tree: this one
                path = os.path.join(root, path[len(dirs.get(0, root).rstrip("/")) + 1:])
            files[index], name = repository_path(path, root, build), None
            if files[index]:
                named.add(files[index])
        elif m := re.match(r"0x([0-9a-f]+)\s+(\d+)\s+\d+\s+(\d+)\s", line):
            # A sequence (one function's rows, with -ffunction-sections) that starts at address 0 is one the
            # linker dropped (--gc-sections): its rows name lines with no code in the binary.
            dead = int(m.group(1), 16) == 0 if dead is None else dead
            path = files.get(int(m.group(3)))
            if path and int(m.group(2)) and not dead:
                code.setdefault(path, set()).add(int(m.group(2)))
            if "end_sequence" in line:
                dead = None
    return code, named


def repository_path(path, root, build):
    """The path in the repository of a source file the binary names, or None: not ours, or generated."""
    rel = os.path.relpath(path, root)
    if rel.startswith("..") or os.path.commonpath([os.path.abspath(path), build]) == build:
        return None
    if not rel.endswith((".c", ".h")):
        return None
    if not os.path.isfile(os.path.join(root, rel)):
        sys.exit("FAIL security doc: the binary was built from %s, which is not in the tree: rebuild it" % rel)
    return rel


def code_lines(path):
    """The file's lines with comments blanked (strings and character constants kept)."""
    text, out, i, state = open(path, encoding="utf-8", errors="replace").read(), [], 0, None
    while i < len(text):
        c = text[i]
        if state == "/*":
            if text.startswith("*/", i):
                state, i = None, i + 2
                continue
            out.append("\n" if c == "\n" else " ")
        elif state == "//":
            if c == "\n":
                state = None
                out.append(c)
        elif state in ('"', "'"):
            out.append(text[i:i + 2] if c == "\\" else c)
            i += 2 if c == "\\" else 1
            state = None if c == state else state
            continue
        elif text.startswith("/*", i) or text.startswith("//", i):
            state, i = text[i:i + 2], i + 2
            continue
        else:
            state = c if c in "\"'" else None
            out.append(c)
        i += 1
    return "".join(out).split("\n")


def count(lines, first=1, last=None):
    return sum(1 for line in lines[first - 1:last] if line.strip())


def inline_functions(lines):
    """[(name, first line, last line)] of the header's static inline functions, or None if it defines anything else static."""
    found, depth, n = [], 0, 0
    while n < len(lines):
        line = lines[n]
        if depth == 0 and re.match(r"\s*static\b", line) and not re.match(r"\s*static\s+inline\b", line):
            return None
        if depth == 0 and re.match(r"\s*static\s+inline\b", line):
            start, seen = n, False
            while n < len(lines):
                depth += lines[n].count("{") - lines[n].count("}")
                seen = seen or "{" in lines[n]
                if (seen and depth == 0) or (not seen and lines[n].rstrip().endswith(";")):
                    break  # the end of its body, or a declaration without one
                n += 1
            if not seen:
                n += 1
                continue
            name = re.search(r"(\w+)\s*\(", " ".join(lines[start:n + 1]))
            found.append((name.group(1) if name else "?", start + 1, n + 1))
        else:
            depth += line.count("{") - line.count("}")
        n += 1
    return found


def functions(lines):
    """[(name, first line, last line)] of the file's function definitions (comments already blanked)."""
    bare = [re.sub(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'', '""', line) for line in lines]
    found, depth, n = [], 0, 0
    while n < len(bare):
        line = bare[n]
        if depth == 0 and re.match(r"[A-Za-z_]", line) and "(" in line and "=" not in line.split("(")[0]:
            j = n
            while j < len(bare) and "{" not in bare[j] and not bare[j].rstrip().endswith(";"):
                j += 1
            head = " ".join(bare[n:j + 1])
            if j < len(bare) and "{" in bare[j] and "=" not in head.split("{")[0]:
                d, k = 0, j
                while k < len(bare):
                    d += bare[k].count("{") - bare[k].count("}")
                    if d == 0 and (k > j or "}" in bare[k]):
                        break
                    k += 1
                name = re.search(r"(\w+)\s*\(", head)
                found.append((name.group(1) if name else "?", n + 1, k + 1))
                n = k + 1
                continue
        depth += line.count("{") - line.count("}")
        n += 1
    return found


def measure(binary):
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
    build = os.path.abspath(os.path.dirname(binary))
    code, named = line_table(binary, root, build)
    rows = {}  # path -> (lines, inline functions counted or None for the whole file)
    for path, at in code.items():
        lines = code_lines(os.path.join(root, path))
        fns = inline_functions(lines) if path.endswith(".h") else None
        used = [f for f in fns or [] if any(f[1] <= n <= f[2] for n in at)]
        if path.endswith(".c"):
            # The whole file but the functions the linker dropped (--gc-sections): no line of theirs has code.
            dropped = [f for f in functions(lines) if not any(f[1] <= n <= f[2] for n in at)]
            rows[path] = (count(lines) - sum(count(lines, f[1], f[2]) for f in dropped), None,
                          [f[0] for f in dropped])
        elif fns is None or any(not any(f[1] <= n <= f[2] for f in fns) for n in at):
            rows[path] = (count(lines), None, [])  # code outside inline functions: the whole file
        else:
            rows[path] = (sum(count(lines, f[1], f[2]) for f in used), [f[0] for f in used], [])
    # Every header the tables name, but those counted whole above: their declarations, to read with the code.
    headers = {p: count(code_lines(os.path.join(root, p))) for p in named
               if p.endswith(".h") and (p not in rows or rows[p][1] is not None)}
    # The strict count: every file the tables name, each whole, as an auditor who reads every file reads it.
    strict = {p: count(code_lines(os.path.join(root, p))) for p in named}
    return root, rows, headers, strict


def doc_block(text, marker):
    m = re.search(r"<!-- %s: start -->\n(.*?)<!-- %s: end -->\n" % (marker, marker), text, re.S)
    if not m:
        sys.exit("collector_lines: %s has no <!-- %s: start --> ... <!-- %s: end -->" % (DOC, marker, marker))
    return m


def doc_rows(block, file_col, text_col):
    """[(path, text of its last column)] in the doc's order."""
    out = []
    for line in block.splitlines():
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
        m = re.match(r"`([^`]+)`", cells[file_col]) if len(cells) > text_col else None
        if m:
            out.append((m.group(1), cells[text_col]))
    return out


def ordered(paths, known):
    """The doc's order for the paths it has, then the new ones: collector/, shm/, common/, include/, the rest."""
    rank = {d: i for i, d in enumerate(["collector", "shm", "common", "include"])}
    new = sorted((p for p in paths if p not in known),
                 key=lambda p: (rank.get(p.split("/")[0], 9), p.endswith(".h"), p))
    return [p for p in known if p in paths] + new


def tables(text, rows, headers, strict):
    code_doc = dict(doc_rows(doc_block(text, "audit-files").group(1), 1, 3))
    decl_doc = dict(doc_rows(doc_block(text, "audit-headers").group(1), 0, 2))
    total = sum(r[0] for r in rows.values())
    out = ["| # | File | Lines | What to check |", "|---|---|---|---|"]
    for i, path in enumerate(ordered(rows, list(code_doc)), 1):
        n, fns, dropped = rows[path]
        what = "`%s`" % path + (" (inline: %s)" % ", ".join("`%s()`" % f for f in fns) if fns is not None else "")
        what += " (not linked: %s)" % ", ".join("`%s()`" % f for f in dropped) if dropped else ""
        out.append("| %d | %s | %d | %s |" % (i, what, n, code_doc.get(path, TODO)))
    out.append("| | **Total** (limit %d) | **%d** | |" % (LIMIT, total))
    decl = ["| File | Lines | What it declares |", "|---|---|---|"]
    for path in ordered(headers, list(decl_doc)):
        decl.append("| `%s` | %d | %s |" % (path, headers[path], decl_doc.get(path, TODO)))
    decl.append("| **Total** (not in the limit) | **%d** | |" % sum(headers.values()))
    decl.append("| **Strict count**: the %d files above and in the first table, each whole (target %d) | **%d** | |"
                % (len(strict), STRICT_TARGET, sum(strict.values())))
    return "\n".join(out) + "\n", "\n".join(decl) + "\n", total


def main(argv):
    mode = argv[1] if len(argv) > 1 and argv[1] in ("--print", "--update") else None
    args = argv[2:] if mode else argv[1:]
    if len(args) != 1:
        sys.exit("usage: collector_lines.py [--print | --update] BUILD/tracer-collector")
    root, rows, headers, strict = measure(args[0])
    doc = os.path.join(root, DOC)
    text = open(doc, encoding="utf-8").read()
    code, decl, total = tables(text, rows, headers, strict)
    if mode == "--print":
        sys.stdout.write("<!-- audit-files: start -->\n%s<!-- audit-files: end -->\n\n"
                         "<!-- audit-headers: start -->\n%s<!-- audit-headers: end -->\n" % (code, decl))
        return 0
    if mode == "--update":
        for marker, block in (("audit-files", code), ("audit-headers", decl)):
            m = doc_block(text, marker)
            text = text[:m.start(1)] + block + text[m.end(1):]
        open(doc, "w", encoding="utf-8").write(text)
        print("%s: audit tables written from %s (%d lines)" % (DOC, args[0], total))
        return 0
    for path, (n, _, _) in sorted(rows.items()):
        print("audit.lines %s %d" % (path, n))
    print("audit.collector_lines %d (the rule: code files whole, the inline functions compiled in)" % total)
    print("audit.collector_lines_strict %d (every repository file the line tables name, whole: %d files)"
          % (sum(strict.values()), len(strict)))
    fail = False
    for marker, block in (("audit-files", code), ("audit-headers", decl)):
        have = doc_block(text, marker).group(1)
        if have != block:
            fail = True
            print("FAIL security doc: the %s table is not what %s links:" % (marker, args[0]), file=sys.stderr)
            sys.stderr.writelines(difflib.unified_diff(have.splitlines(True), block.splitlines(True), DOC, "binary"))
    if fail:
        print("  regenerate it: tests/audit/check-security-doc.sh --update %s (or --print to see it), then say "
              "what to check in any new file and keep the reading order" % os.path.dirname(args[0]), file=sys.stderr)
    if TODO in code or TODO in decl:
        fail = True
        print("FAIL security doc: a file in the audit tables has no text yet: write what to check in it",
              file=sys.stderr)
    if total > LIMIT:
        fail = True
        print("FAIL security doc: %s holds %d lines of the repository's code, more than %d: link only what it runs"
              % (args[0], total, LIMIT), file=sys.stderr)
    return 1 if fail else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
