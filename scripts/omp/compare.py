#!/usr/bin/env python3
"""Compares pi-branch and pi-usage with oh-my-pi's own reading of the same files
(reference.ts's answers): the branch's entries (type and id; type alone where omp invents the
ids of an old session) and the usage omp shows (getUsageStatistics: assistant messages,
model_usage entries, its task tool's sub-agent usage) against pi-usage's calls of those
sources and its `subagents` sums. Disagreements are grouped by file name up to its first dot (the change, for
../pi16/adversarial.py's files); a group listed in DEPARTURES is one docs/FORMAT.md describes,
any other is printed as unexpected, and the exit status is 1.

    python3 compare.py REFERENCE.jsonl [BIN_DIR]   (BIN_DIR: target/release)
"""
import json, os, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from differential import runner, tally

sys.setrecursionlimit(100_000)  # ../pi16/adversarial.py nests arrays 20,000 deep

ref = sys.argv[1]
here = os.path.dirname(os.path.abspath(__file__))
bins = sys.argv[2] if len(sys.argv) > 2 else os.path.join(here, "..", "..", "target", "release")

# Where oh-my-pi 18.2.3 reads a file otherwise than the tools, as docs/FORMAT.md says
# ("How oh-my-pi reads a file"). Keyed by the change of ../pi16/adversarial.py's files and the
# fixtures' names.
DEPARTURES = {
    # omp's parser keeps the value a line starts with and skips the rest of the line.
    "extra": "a line holding a record and more: omp keeps the record (Pi skips the line)",
    "fragment": "no header first: the tools read a fragment, omp refuses the file",
    "trail-x": "text after a record", "trail-brace": "as trail-x", "trail-comma": "as trail-x",
    "trail-nul": "as trail-x",
    "glued": "two records glued: omp keeps the first",
    # omp's parser takes more characters for blanks between records than JSON allows.
    "trail-nbsp": "a no-break space after a record is a blank to omp",
    "trail-bom": "as trail-nbsp", "trail-vt": "as trail-nbsp", "trail-ff": "as trail-nbsp",
    "trail-ls": "as trail-nbsp",
    # omp stops loading the session with an error.
    "usage-arr": "omp fails to load a session whose assistant usage has no cost object",
    "usage-str": "as usage-arr", "usage-empty": "as usage-arr", "cost-missing": "as usage-arr",
    "usage-bad-fields": "as usage-arr", "compaction-bad-fields": "as usage-arr",
    "compaction-huge-numbers": "as usage-arr", "compaction-v1-index": "as usage-arr",
    "lit-null": "omp fails to load a session with a line that is null",
    "null-line": "as lit-null", "msg-null": "omp fails to load a session with a message of null",
    "h-cwd-num": "omp fails to load a session whose header cwd is not a string",
    "tr-task-both": "a task result with a usage of its own too: omp counts details.usage, "
                    "pi-usage that usage, as Pi counts a tool result's",
    # As Pi 1.6.0 (the pi16 run's departures).
    "noheader": "no header: the tools read a fragment, omp refuses the file",
    "pre-entry": "as noheader", "pre-null": "as noheader",
    "h-half": "as noheader", "h-lit-0": "as noheader", "h-lit-arr": "as noheader",
    "h-lit-null": "as noheader", "h-lit-obj": "as noheader", "h-lit-str": "as noheader",
    "second-header": "a second header starts a new session", "type-session": "as second-header",
    "tools-two-sessions": "as second-header",
    "id-missing": "id-less entries stay where they stand", "id-null": "as id-missing",
    "id-empty": "as id-missing", "id-num": "as id-missing", "lit-obj": "as id-missing",
    "idless-entries": "as id-missing", "idless-leaf-empty-id": "as id-missing",
    "compaction-v1-array-line": "a line holding a JSON array: skipped by the tools, an entry "
                                "of the version-1 log to omp, which gives it an id",
    "lit-true": "a last line that is no object: the leaf is the last entry with an id",
    "lit-arr": "as lit-true", "lit-str": "as lit-true", "lit-arrobj": "as lit-true",
    "lit-false": "as lit-true", "lit-zero": "as lit-true", "lit-emptystr": "as lit-true",
    "u-big": "token sums are exact integers", "usage-huge-sums": "as u-big",
    "usage-whole-numbers": "as u-float", "u-float": "a token count that is no count is not counted",
    "u-neg": "as u-float", "u-str": "as u-float",
    "cost-huge": "a cost out of range is counted as missing", "cost-neg": "as cost-huge",
    "cost-str": "as cost-huge",
}


run = runner(bins)


def values(data):
    """Each line's JSON value (None where a line is none), by line number from 1."""
    out = {}
    for n, line in enumerate(data.split(b"\n"), 1):
        try:
            out[n] = json.loads(line.decode("utf-8", "replace"))
        except (ValueError, RecursionError):
            out[n] = None
    return out


def feature(data):
    """A departure the file's content shows, whatever its name: a line holding a JSON value
    and more (omp keeps the value: "extra"), or a first record (after a title slot) that is no
    header (the tools read a fragment, omp refuses the file: "fragment"); None otherwise."""
    decoder = json.JSONDecoder()
    first = None
    for line in data.split(b"\n"):
        text = line.decode("utf-8", "replace").strip(" \t\r")
        if not text:
            continue
        try:
            value, end = decoder.raw_decode(text)
        except (ValueError, RecursionError):
            continue
        # oh-my-pi's title slot comes before the header.
        if first is None and not (isinstance(value, dict) and value.get("type") == "title"):
            first = value
        if text[end:].strip(" \t\r"):
            return "extra"
    header = isinstance(first, dict) and first.get("type") == "session" and isinstance(first.get("id"), str)
    return None if header or first is None else "fragment"


def pair(v):
    return (v.get("type"), v.get("id")) if isinstance(v, dict) else (None, None)


def disagreement(r):
    path = r["file"]
    o = run("pi-branch", path)
    if o.returncode not in (0, 2):
        return f"pi-branch status {o.returncode}"
    if not r["accepted"]:
        return None if not o.stdout else f"omp refuses the file ({r['error'][:60]}); pi-branch wrote it"
    ours = []
    for line in o.stdout.split(b"\n")[:-1]:
        try:
            v = json.loads(line.decode("utf-8", "replace"))
        except (ValueError, RecursionError):
            v = None
        if not (isinstance(v, dict) and v.get("type") in ("session", "title")):
            ours.append(pair(v))
    theirs = [tuple(b) for b in r["branch"]]
    lines = values(open(path, "rb").read())
    header = next((v for v in lines.values() if isinstance(v, dict)), {})
    old = not isinstance(header.get("version"), int) or header.get("version") < 3
    if old:
        ours, theirs = [t for t, _ in ours], [t for t, _ in theirs]
    if ours != theirs:
        at = next((i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b), min(len(ours), len(theirs)))
        return (f"branch: {len(ours)} entries, omp's {len(theirs)}; from entry {at}: "
                f"ours {ours[at:at + 3]}, omp's {theirs[at:at + 3]}")
    calls = [json.loads(x) for x in run("pi-usage", "--calls", path).stdout.split(b"\n")[:-1]]
    # Every call, a repeat of an earlier one too: omp adds each (pi-usage counts it once).
    counted = [c for c in calls if (
        c["source"] == "message"
        or (c["source"] == "usage_entry" and pair(lines.get(c["line"]))[0] == "model_usage"))]
    # And the sub-agents' usage of its task results, which pi-usage reports apart.
    counted += [x["subagents"] for x in map(json.loads, run("pi-usage", "--json", "--no-dedup", path)
                                              .stdout.split(b"\n")[:-1])]
    u = r["usage"]
    for ours_key, omp_key in [("input", "input"), ("output", "output"),
                              ("cache_read", "cacheRead"), ("cache_write", "cacheWrite")]:
        s = sum(c[ours_key] for c in counted)
        if s != u[omp_key]:
            return f"usage: {ours_key} {s}, omp's {u[omp_key]!r}"
    cost = sum(c["cost"] or 0 for c in counted)
    if not isinstance(u["cost"], (int, float)) or abs(cost - u["cost"]) > 1e-9 * max(abs(u["cost"]), 1e-9):
        return f"usage: cost {cost}, omp's {u['cost']!r}"
    return None


def change_of(r):
    """The change of ../pi16/adversarial.py's file or the fixture's name, unless no departure
    is listed for it; then what the file's content shows."""
    change = os.path.basename(r["file"]).split(".")[0]
    if change in DEPARTURES:
        return change
    return feature(open(r["file"], "rb").read()) or change


tally(ref, disagreement, change_of, DEPARTURES, "oh-my-pi")
