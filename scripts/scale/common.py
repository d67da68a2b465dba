"""What the DuckDB and Spark checks of scripts/scale-check share: the list of inputs, the
usage_call columns, pi-usage's own answer over the same inputs, and the comparison.

Everything numeric is compared exactly: token sums as integers, costs as Decimals (pi-usage
writes them as exact decimal text; the engines read them as DECIMAL(38,24): the corpus has
per-call costs with 20 decimals, JavaScript floats written out).
"""

import json
import subprocess
import sys
from decimal import Decimal

# The usage_call fields the engines read (docs/FORMAT.md), as DuckDB types; `other` is left out.
COLUMNS = {
    "session": "VARCHAR",
    "file": "VARCHAR",
    "project": "VARCHAR",
    "line": "BIGINT",
    "entry": "VARCHAR",
    "time": "VARCHAR",
    "day": "VARCHAR",
    "week": "VARCHAR",
    "month": "VARCHAR",
    "provider": "VARCHAR",
    "model": "VARCHAR",
    "source": "VARCHAR",
    "kind": "VARCHAR",
    "input": "BIGINT",
    "output": "BIGINT",
    "cache_read": "BIGINT",
    "cache_write": "BIGINT",
    "tokens": "HUGEINT",
    "total_tokens": "HUGEINT",
    "total_tokens_computed": "BOOLEAN",
    "reasoning": "BIGINT",
    "cache_write_1h": "BIGINT",
    "cost": "DECIMAL(38,24)",
    "cost_from_provider": "BOOLEAN",
    "nested_calls": "BIGINT",
    "nested_calls_incomplete": "BOOLEAN",
    "identity": "VARCHAR",
    "repeat": "BOOLEAN",
}

# The sums compared: the `total` object of a usage record, and its `duplicates`.
SUMS = [
    "count",
    "input",
    "output",
    "cache_read",
    "cache_write",
    "tokens",
    "total_tokens",
    "cost",
    "cost_missing",
]

# The SQL of those sums over a table of calls with a `kept` column (false for a repeat):
# `count` counts the kept calls, `cost_missing` those without a cost, `duplicates` the
# repeats. DuckDB and Spark SQL both run it.
SUMS_SQL = """count(*) FILTER (WHERE kept) AS count,
  sum(input) FILTER (WHERE kept) AS input, sum(output) FILTER (WHERE kept) AS output,
  sum(cache_read) FILTER (WHERE kept) AS cache_read,
  sum(cache_write) FILTER (WHERE kept) AS cache_write,
  sum(tokens) FILTER (WHERE kept) AS tokens,
  sum(total_tokens) FILTER (WHERE kept) AS total_tokens,
  sum(cost) FILTER (WHERE kept) AS cost,
  count(*) FILTER (WHERE kept AND cost IS NULL) AS cost_missing,
  count(*) FILTER (WHERE NOT kept) AS duplicates"""

# Dedup on the identity, as SQL over a table `calls` with the input position of each call's
# file (`rank`): the first copy in input order (file, then line) is the call, the others are
# repeats; a call without an identity is never a repeat.
RANKED_SQL = """SELECT *, identity IS NULL OR row_number() OVER (
    PARTITION BY identity ORDER BY rank, line) = 1 AS kept
  FROM calls"""


def engine_sums(row):
    """A row of SUMS_SQL as pi-usage writes a group's sums: a group of repeats only has zero
    tokens and cost 0, not nulls."""
    if row["count"] == 0:
        row.update({s: 0 for s in SUMS})
    return row

# The record fields that make a group's key for each `--by` dimension checked.
DIMENSIONS = {
    "model": ["provider", "model"],
    "provider": ["provider"],
    "day": ["day"],
    "month": ["month"],
    "session": ["session", "file"],
    "project": ["project"],
}


def session_paths(pi_sessions, corpus):
    """The session files under `corpus`, as `pi-sessions --paths0` lists them (its order is
    the input order: the first copy of a repeated call is the one counted)."""
    out = subprocess.run(
        [pi_sessions, "--paths0", "--dir", corpus], check=True, capture_output=True
    ).stdout
    return [p.decode() for p in out.split(b"\0") if p]


def pi_usage_records(pi_usage, args, files):
    """The records of one pi-usage run over all of `files`, numbers read exactly."""
    p = subprocess.run(
        [pi_usage, "--json", "--tz", "UTC", *args, "--", *files], capture_output=True
    )
    if p.returncode not in (0, 2):
        sys.exit(f"pi-usage {args} failed ({p.returncode}): {p.stderr.decode()[-2000:]}")
    return [json.loads(l, parse_float=Decimal) for l in p.stdout.decode().splitlines()]


def expected_groups(records, fields):
    """{key: {sum: value}} of pi-usage's records grouped by `fields` (groups without calls
    left out: a session without calls has no usage_call record)."""
    out = {}
    for r in records:
        if r["total"]["count"] == 0 and r["duplicates"] == 0:
            continue
        key = tuple(r[f] for f in fields)
        if key in out:
            sys.exit(f"two pi-usage records for {key}")
        out[key] = dict({s: r["total"][s] for s in SUMS}, duplicates=r["duplicates"])
    return out


def normal(v):
    """A value as compared: integers and Decimals by value, None kept."""
    if v is None or isinstance(v, str):
        return v
    if isinstance(v, bool):
        return int(v)
    d = Decimal(v)
    return d.normalize() if d != 0 else Decimal(0)


def compare(what, got, want):
    """Prints every difference between two {key: {sum: value}}; returns their number."""
    bad = 0
    for key in sorted(set(got) | set(want), key=repr):
        g, w = got.get(key), want.get(key)
        if g is None or w is None:
            print(f"DIFF {what} {key}: engine {g}, pi-usage {w}")
            bad += 1
            continue
        for s in w:
            if normal(g.get(s)) != normal(w[s]):
                print(f"DIFF {what} {key} {s}: engine {g.get(s)}, pi-usage {w[s]}")
                bad += 1
    print(f"{what}: {len(want)} groups, {'equal' if bad == 0 else f'{bad} differences'}")
    return bad
