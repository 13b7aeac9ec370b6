#!/usr/bin/env python3
"""Resolve a unit's SystemCallFilter= lines into the system call names it allows.

    unit-syscalls.py UNIT_FILE > ALLOWED_FILE

Follows systemd.exec(5): the first allow-list line sets the list, later
allow-list lines add to it, lines starting with ~ take names away; @groups
are expanded recursively from `systemd-analyze syscall-filter` (this
machine's systemd). Names, one per line, sorted.
"""
import subprocess
import sys


def groups():
    out = subprocess.run(["systemd-analyze", "syscall-filter"], check=True, capture_output=True, text=True).stdout
    g, cur = {}, None
    for line in out.splitlines():
        if line.startswith("@"):
            cur = line.split()[0]
            g[cur] = []
        elif cur and line.strip() and not line.strip().startswith("#"):
            g[cur].append(line.split()[0])
    return g


def expand(name, g, seen):
    if not name.startswith("@"):
        return {name}
    if name not in g:
        sys.exit(f"unknown group {name}")
    out = set()
    for x in g[name]:
        if x not in seen:
            seen.add(x)
            out |= expand(x, g, seen)
    return out


def main():
    g = groups()
    allowed = None
    for line in open(sys.argv[1], encoding="utf-8"):
        if not line.startswith("SystemCallFilter="):
            continue
        value = line.split("=", 1)[1].strip()
        deny = value.startswith("~")
        names = set()
        for word in value.lstrip("~").split():
            names |= expand(word, g, set())
        if deny:
            allowed = (allowed or set()) - names
        else:
            allowed = names if allowed is None else allowed | names
    if not allowed:
        sys.exit(f"{sys.argv[1]}: no SystemCallFilter= allow list")
    # systemd adds @default ("system calls that are always permitted") to every allow list.
    allowed |= expand("@default", g, set())
    print("\n".join(sorted(allowed)))


main()
