#!/usr/bin/env python3
"""Check a tracer lake (SQLite, or PostgreSQL) after a delivery test.

  check_lake.py LAKE --pids FILE [--allow-gaps] [--tail-pids N] [--seq-range LO HI [--lost SEQ,...]]

LAKE: an SQLite file, or a libpq URI (postgresql://...), read with psql
(no Python driver needed) as the role and password the URI gives.

- every record once: seqs are unique (the table's key) and, unless
  --allow-gaps, run 1..max without a hole; every record's crc, recomputed
  from its stored header fields and payload, is the one the processor
  computed when it spooled it;
- every pid of the load (one per line in FILE) has exactly one exec record
  and exactly one exit record (with --tail-pids N, only the last N pids must
  be there - the quota test evicts the oldest - and none twice);
- nothing came twice: no exec or exit event (type, tgid, start_ns and the
  event's own time: a process may exec more than once) repeats;
- with --seq-range LO HI: every seq from LO to HI is in the lake except those
  given with --lost, and none of those is (a damaged spool: exactly the
  damaged records are missing).
"""
import argparse
import csv
import io
import sqlite3
import struct
import subprocess
import sys
import zlib

TR_EXEC, TR_EXIT = 16, 18


def frame_crc(seq, src_pos, src_gen, rtype, flags, length, payload):
    # include/frame.h: crc32 of bytes 0..27 of the frame header, then the payload
    head = struct.pack('<QQIHHI', seq, src_pos, src_gen, rtype, flags, length)
    return zlib.crc32(payload, zlib.crc32(head)) & 0xffffffff


class PsqlLake:
    """The part of sqlite3's connection this script uses, on PostgreSQL through psql: every column an integer
    but one named payload, which the query asks as hex (encode(payload, 'hex')) and this gives back as bytes."""

    def __init__(self, uri):
        self.uri = uri

    def execute(self, sql):
        out = subprocess.run(['psql', '-X', '-q', '--csv', '-v', 'ON_ERROR_STOP=1', self.uri, '-c', sql],
                             capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f'FAIL: psql {sql!r}: {out.stderr.strip()}')
        lines = list(csv.reader(io.StringIO(out.stdout)))
        names = lines[0]
        self.rows = [tuple(bytes.fromhex(v) if n == 'payload' else int(v) for n, v in zip(names, row))
                     for row in lines[1:]]
        return self

    def fetchall(self):
        return self.rows

    def fetchone(self):
        return self.rows[0] if self.rows else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('db')
    ap.add_argument('--pids', required=True)
    ap.add_argument('--allow-gaps', action='store_true')
    ap.add_argument('--tail-pids', type=int, default=0)
    ap.add_argument('--seq-range', type=int, nargs=2, metavar=('LO', 'HI'))
    ap.add_argument('--lost', default='', help='comma-separated seqs that must be missing within --seq-range')
    args = ap.parse_args()
    pg = args.db.startswith(('postgresql://', 'postgres://'))
    db = PsqlLake(args.db) if pg else sqlite3.connect(args.db)
    payload = "encode(payload, 'hex') AS payload" if pg else 'payload'
    errors = []

    rows = db.execute(f'SELECT seq, src_pos, src_gen, type, flags, len, crc, {payload} FROM records '
                      'ORDER BY seq').fetchall()
    if not rows:
        print('FAIL: the lake has no records', file=sys.stderr)
        return 1
    seqs = [r[0] for r in rows]
    streams = db.execute('SELECT count(DISTINCT stream) FROM records').fetchone()[0]
    if streams != 1:
        errors.append(f'the records are of {streams} streams: one spool, one stream expected')
    if len(set(seqs)) != len(seqs):
        errors.append('duplicate seqs')
    if not args.allow_gaps and (seqs[0] != 1 or seqs[-1] != len(seqs)):
        holes = sorted(set(range(1, seqs[-1] + 1)) - set(seqs))
        errors.append(f'seqs 1..{seqs[-1]} expected, {len(seqs)} found; missing {holes[:10]}...')
    bad_crc = [r[0] for r in rows if len(r[7]) != r[5] or frame_crc(*r[:6], r[7]) != r[6]]
    if bad_crc:
        errors.append(f'{len(bad_crc)} records with a wrong checksum, first seqs {bad_crc[:5]}')

    if args.seq_range:
        lo, hi = args.seq_range
        lost = {int(x) for x in args.lost.split(',') if x.strip()}
        have = {s for s in seqs if lo <= s <= hi}
        absent = sorted(set(range(lo, hi + 1)) - lost - have)
        present = sorted(lost & have)
        if absent:
            errors.append(f'{len(absent)} seqs of {lo}..{hi} missing that should be there, e.g. {absent[:10]}')
        if present:
            errors.append(f'seqs {present[:10]} are in the lake although they were damaged in the spool')

    seen = {}
    for seq, _, _, rtype, _, _, _, payload in rows:
        if rtype in (TR_EXEC, TR_EXIT) and len(payload) >= 40:
            tgid = struct.unpack_from('<I', payload, 20)[0]
            start = struct.unpack_from('<Q', payload, 32)[0] if rtype == TR_EXIT else struct.unpack_from('<Q', payload, 40)[0]
            ts = struct.unpack_from('<Q', payload, 8)[0]  # the event's time (struct tr_hdr)
            seen.setdefault((rtype, tgid, start, ts), []).append(seq)
    twice = {k: v for k, v in seen.items() if len(v) > 1}
    if twice:
        errors.append(f'{len(twice)} events stored twice, e.g. {list(twice.items())[:3]}')

    by_pid = {}
    for (rtype, tgid, _, _), s in seen.items():
        by_pid.setdefault(tgid, {TR_EXEC: 0, TR_EXIT: 0})[rtype] += len(s)
    pids = [int(x) for x in open(args.pids) if x.strip()]
    want = pids[-args.tail_pids:] if args.tail_pids else pids
    missing = [p for p in want if by_pid.get(p, {}).get(TR_EXEC, 0) != 1 or by_pid.get(p, {}).get(TR_EXIT, 0) != 1]
    if missing:
        errors.append(f'{len(missing)} of {len(want)} load processes without exactly one exec and one exit, '
                      f'e.g. {[(p, by_pid.get(p)) for p in missing[:5]]}')

    print(f'lake: {len(rows)} records, seqs {seqs[0]}..{seqs[-1]}, {len(want)} load processes checked, '
          f'{len(errors)} problems')
    for e in errors:
        print('FAIL:', e, file=sys.stderr)
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main())
