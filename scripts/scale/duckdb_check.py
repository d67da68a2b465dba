"""One machine: the usage_call records that `xargs -P` runs of `pi-usage --calls` wrote into
CALLS_DIR (one file per batch), reduced by DuckDB, against `pi-usage --by X` over the same
files. Run by scripts/scale-check; the SQL is the recipe of docs/SCALE.md.

usage: duckdb_check.py PI_USAGE PATHS0_FILE CALLS_DIR
"""

import sys
import time

import duckdb

from common import (
    COLUMNS,
    DIMENSIONS,
    RANKED_SQL,
    SUMS_SQL,
    compare,
    engine_sums,
    expected_groups,
    pi_usage_records,
)


def main():
    pi_usage, paths0, calls_dir = sys.argv[1:4]
    with open(paths0, "rb") as f:
        files = [p.decode() for p in f.read().split(b"\0") if p]
    started = time.monotonic()
    db = duckdb.connect()
    # The input order: a call repeated across files counts where it comes first.
    db.execute(
        "CREATE TABLE files AS SELECT (generate_subscripts($1, 1) - 1)::INTEGER AS rank, "
        "unnest($1) AS file",
        [files],
    )
    db.execute(
        f"""CREATE TABLE calls AS SELECT c.*, f.rank FROM read_json(
              '{calls_dir}/calls.*', format = 'newline_delimited', columns = {COLUMNS!r}) c
            JOIN files f USING (file)"""
    )
    db.execute(f"CREATE TABLE ranked AS {RANKED_SQL}")
    # Every record names one of the inputs (none is lost in the join).
    written = db.execute(
        f"SELECT count(*) FROM read_json('{calls_dir}/calls.*', format = 'newline_delimited', "
        "columns = {'file': 'VARCHAR'})"
    ).fetchone()[0]
    got_all = {}
    for dim, fields in DIMENSIONS.items():
        rows = db.execute(f"SELECT {', '.join(fields)}, {SUMS_SQL} FROM ranked GROUP BY ALL")
        names = [d[0] for d in rows.description]
        got = {}
        for row in rows.fetchall():
            r = dict(zip(names, row))
            got[tuple(r.pop(f) for f in fields)] = engine_sums(r)
        got_all[dim] = got
    engine_seconds = time.monotonic() - started
    bad = 0
    for dim, fields in DIMENSIONS.items():
        want = expected_groups(pi_usage_records(pi_usage, ["--by", dim], files), fields)
        bad += compare(f"duckdb --by {dim}", got_all[dim], want)
    calls = db.execute("SELECT count(*) FROM calls").fetchone()[0]
    if calls != written:
        print(f"DIFF duckdb: {written} records written, {calls} name an input")
        bad += 1
    print(f"duckdb: {calls} usage_call records from {len(files)} files, "
          f"reduced in {engine_seconds:.2f} s")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
