#!/usr/bin/env python3
"""Compares pi-branch, pi-usage, pi-tools and pi-sessions with Pi 1.6.0's answers (reference.mjs) for the sessions
adversarial.py wrote, by the rules tests/pi16.rs applies to the fixtures, and groups the
disagreements by change. A disagreement of a change listed in DEPARTURES is one docs/FORMAT.md
describes; any other is printed as unexpected, and the exit status is 1.

    python3 compare-adversarial.py REFERENCE.jsonl DIR [BIN_DIR]   (BIN_DIR: target/release)
"""
import json, os, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from differential import runner, tally

ref, folder = sys.argv[1], sys.argv[2]
here = os.path.dirname(os.path.abspath(__file__))
bins = sys.argv[3] if len(sys.argv) > 3 else os.path.join(here, "..", "..", "target", "release")

# Change → why pi-branch or pi-usage answer otherwise than Pi 1.6.0 (docs/FORMAT.md says so).
DEPARTURES = {
    "bom": "a byte-order mark before the header is ignored, as Pi 0.73.1 trims it (1.6.0 refuses the file)",
    "h-trail-nbsp": "whitespace JSON does not allow after the header: a fragment follows, Pi refuses the file",
    "h-trail-vt": "as h-trail-nbsp",
    "trail-ff": "whitespace after the last record is trimmed, as Pi 0.73.1 trims it (1.6.0 skips the line)",
    "trail-ls": "as trail-ff",
    "trail-nbsp": "as trail-ff",
    "trail-vt": "as trail-ff",
    "trail-bom": "as trail-ff: a byte-order mark is whitespace to JavaScript's trim",
    "h-half": "no valid header: the entries are read as a fragment, Pi refuses the file",
    "h-lit-0": "the first line is no header: the entries are read as a fragment, Pi refuses the file",
    "h-lit-arr": "as h-lit-0", "h-lit-null": "as h-lit-0", "h-lit-obj": "as h-lit-0",
    "h-lit-str": "as h-lit-0", "glued": "a header glued to the next record: as h-half",
    "second-header": "a second header starts a new session (Pi skips it)",
    "type-session": "as second-header: an entry of type session is a header",
    "id-missing": "id-less entries stay where they stand (Pi drops them from the branch)",
    "id-null": "as id-missing", "id-empty": "an empty id is no id (as id-missing)",
    "lit-obj": "as id-missing: {} is an id-less entry",
    "lit-true": "a last line that is no object: the leaf is the last entry with an id (Pi shows nothing)",
    "lit-arr": "as lit-true", "lit-str": "as lit-true", "lit-arrobj": "as lit-true",
    "id-num": "an id that is a number is no id: the leaf is the last entry with a string id",
    "empty-file": "an empty file holds no session: nothing is written, and it is reported",
    "u-big": "token sums are exact integers (Pi adds doubles)",
    "u-float": "a token count that is not a whole number is reported and not counted",
    "u-neg": "a negative token count is reported and not counted",
    "u-str": "a token count written as a string is reported and not counted (Pi concatenates it)",
    "cost-huge": "a cost out of range is reported and counted as missing",
    "cost-neg": "a negative cost is reported and counted as missing",
    "cost-str": "a cost written as a string is reported and counted as missing (Pi concatenates it)",
}


run = runner(bins)


def records(o):
    return [json.loads(x) for x in o.stdout.decode().splitlines() if x.strip()]


def is_pi_entry(v):
    return (isinstance(v, dict) and isinstance(v.get("type"), str) and v["type"] != "session"
            and isinstance(v.get("timestamp"), str))


def disagreement(path, r):
    """Why pi-branch or pi-usage answers otherwise than Pi for `path`, or None."""
    text = open(path, "rb").read()
    o = run("pi-branch", path)
    err = o.stderr.decode(errors="replace")
    if o.returncode not in (0, 2):
        return f"status {o.returncode}"
    if r.get("hang"):
        ok = o.returncode == 2 and "parentId cycle" in err
        return None if ok else "Pi hangs; pi-branch did not report a cycle"
    if r["accepted"] is False:
        first = None
        for line in text.split(b"\n"):
            try:
                first = json.loads(line)
                break
            except ValueError:
                pass
        if is_pi_entry(first):
            ok = o.stdout and "fragment" in err
            return None if ok else "Pi refuses a fragment; pi-branch did not read it as one"
        return None if (o.returncode == 2 and not o.stdout) else "Pi refuses the file; pi-branch wrote it"
    parts = text.split(b"\n")
    want = b"".join(parts[n - 1] + b"\n" for n in r["lines"])
    if o.stdout != want:
        return f"branch: Pi's lines {r['lines']}"
    info = records(run("pi-branch", "--info", path))
    v1 = len(info) == 1 and info[0]["version"] == 1 and info[0]["leaf"] is None
    if len(info) != 1 or (info[0]["leaf"] != r["leaf"] and not v1):
        return f"leaf {[i.get('leaf') for i in info]}, Pi's {r['leaf']!r}"
    stats = r.get("stats") or {}
    if "tokens" not in stats:
        return None
    usage = records(run("pi-usage", "--json", path))
    if len(usage) != 1:
        return f"{len(usage)} pi-usage records"
    t = usage[0]["total"]
    for ours, pis in [("input", "input"), ("output", "output"), ("cache_read", "cacheRead"),
                      ("cache_write", "cacheWrite"), ("tokens", "total")]:
        if t[ours] != stats["tokens"][pis]:
            return f"{ours} {t[ours]}, Pi's {stats['tokens'][pis]!r}"
    cost, pis = t.get("cost") or 0, stats["cost"]
    if not isinstance(pis, (int, float)) or abs(cost - pis) > 1e-9 * max(abs(pis), 1e-9):
        return f"cost {cost}, Pi's {pis!r}"
    # pi-tools: a record for each of the tool calls Pi counts, and each tool result joined to
    # its call or written as one of its own (an orphan, a duplicate).
    tools = records(run("pi-tools", "--no-content", path))
    calls = [x for x in tools if x["type"] == "tool_call" and not x["by_user"]]
    results = sum(x["result"] is not None for x in calls) + sum(x["type"] == "tool_result" for x in tools)
    if len(calls) != stats["toolCalls"]:
        return f"pi-tools: {len(calls)} calls, Pi's {stats['toolCalls']}"
    if results != stats["toolResults"]:
        return f"pi-tools: {results} results, Pi's {stats['toolResults']}"
    # pi-sessions: the messages Pi counts, by role.
    sessions = records(run("pi-sessions", "--json", path))
    if len(sessions) != 1:
        return f"{len(sessions)} pi-sessions records"
    for ours, pis in [("messages", "totalMessages"), ("user_messages", "userMessages"),
                      ("assistant_messages", "assistantMessages")]:
        if sessions[0][ours] != stats[pis]:
            return f"pi-sessions: {ours} {sessions[0][ours]}, Pi's {stats[pis]}"
    return None


tally(ref, lambda r: disagreement(os.path.join(folder, r["file"]), r),
      lambda r: r["file"].split(".")[0], DEPARTURES, "Pi 1.6.0")
