#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""tracer.conf(5) from docs/tracer.conf.example, the file install puts in /etc/tracer.

The example is written from common/config.c's key table (tests keep them equal), so the page, the
installed file and the parser cannot drift: the page's KEYS are the example's, section by section.

    mk/conf_man.py docs/tracer.conf.example VERSION OUT
"""
import re
import sys

KEY_HEAD = re.compile(r"^# ([a-z_][a-z0-9_]*): (.*)$")
KEY_LINE = re.compile(r"^#([a-z_][a-z0-9_]*) = (.*)$")
SECTION = re.compile(r"^# ---- (.*) ----$")


def roff(text):
    """Text for a roff line: backslashes, hyphens of options and a leading dot or quote escaped."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return "\\&" + text if text[:1] in (".", "'") else text


def parse(lines):
    """The header's paragraphs, then (section, [(key, type, description lines, default)])."""
    header, sections, i = [], [], 0
    while i < len(lines) and lines[i].startswith("#") and not SECTION.match(lines[i]):
        header.append(lines[i][2:].rstrip())  # "# " and the text, its indent kept
        i += 1
    key = None
    for line in lines[i:]:
        if m := SECTION.match(line):
            sections.append((m.group(1), []))
        elif m := KEY_HEAD.match(line):
            key = [m.group(1), m.group(2), [], None]
        elif key and line.startswith("#   "):
            key[2].append(line[4:].strip())
        elif (m := KEY_LINE.match(line)) and key and m.group(1) == key[0]:
            key[3] = m.group(2)
            sections[-1][1].append(tuple(key))
            key = None
        elif line.strip() and not line.startswith("#"):
            sys.exit(f"conf_man.py: a line the generator does not know: {line!r}")
    return header, sections


def page(header, sections, version):
    out = [f'.TH TRACER.CONF 5 "" "tracer {version}" "File Formats"',
           ".SH NAME", "tracer.conf \\- the configuration file of tracer's programs",
           ".SH SYNOPSIS", "/etc/tracer/tracer.conf", ".SH DESCRIPTION"]
    literal = False  # the header's indented lines are examples: kept as they are
    for h in header[2:]:  # the first two lines name the file, which NAME and SYNOPSIS say
        if h.startswith("  ") != literal:
            literal = not literal
            out.append(".RS\n.nf" if literal else ".fi\n.RE")
        out.append(".PP" if not h else roff(h.strip() if literal else h))
    out.append(".SH KEYS")
    for title, keys in sections:
        out.extend([".SS " + roff(title)])
        for name, kind, desc, default in keys:
            out.extend([".TP", f"\\fB{roff(name)}\\fR = {roff(default)}", roff(kind) + ".", ".br"])
            out.extend(roff(d) for d in desc)
    out.extend([".SH FILES", ".TP", "/etc/tracer/tracer.conf",
                "installed from docs/tracer.conf.example; every key commented out, at its default",
                ".SH SEE ALSO", "tracer(1), tracer\\-collector(8), tracer\\-processor(8), tracer\\-ingest(8), "
                "tracer\\-web(8); docs/config.md in /usr/share/doc/tracer"])
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: mk/conf_man.py docs/tracer.conf.example VERSION OUT")
    with open(sys.argv[1], encoding="utf-8") as f:
        header, sections = parse(f.read().splitlines())
    if not sum(len(k) for _, k in sections):
        sys.exit(f"conf_man.py: no key in {sys.argv[1]}")
    with open(sys.argv[3], "w", encoding="utf-8") as f:
        f.write(page(header, sections, sys.argv[2]))


if __name__ == "__main__":
    main()
