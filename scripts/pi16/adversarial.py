#!/usr/bin/env python3
"""Writes Pi sessions that each hold exactly one adversarial change, for a differential run
against Pi 1.6.0 (see README.md, "adversarial.py"). Each file is named for its change:
OUT_DIR/<change>.<n>.jsonl. Deterministic for a seed.

    python3 adversarial.py OUT_DIR [PER_CHANGE] [SEED]
"""
import json, os, random, re, sys
out = sys.argv[1]
per = int(sys.argv[2]) if len(sys.argv) > 2 else 6
seed = int(sys.argv[3]) if len(sys.argv) > 3 else 7
os.makedirs(out, exist_ok=True)
rng = random.Random(seed)
def rid(): return "%08x" % rng.getrandbits(32)
def usage():
    return {"input": rng.randint(0,5000), "output": rng.randint(0,900), "cacheRead": rng.randint(0,9000),
            "cacheWrite": rng.randint(0,400), "totalTokens": rng.randint(0,20000),
            "cost": {"input": 0.001, "output": 0.002, "cacheRead": 0, "cacheWrite": 0, "total": round(rng.random()/50, 6)}}
def message(role, pending):
    """A message of `role`; `pending`: the ids of calls without a result yet (an assistant
    message may add some, a tool result takes the oldest)."""
    if role == "user": return {"role":"user","content":[{"type":"text","text":"hi there"}],"timestamp":1}
    if role == "assistant":
        calls = [{"type":"toolCall","id":"call_" + rid(),"name":rng.choice(["bash","read"]),
                  "arguments":{"command":"ls"}} for _ in range(rng.choice([0, 0, 1, 2]))]
        pending.extend(c["id"] for c in calls)
        return {"role":"assistant","content":[{"type":"text","text":"ok"}] + calls,"api":"anthropic-messages",
                "provider":"anthropic","model":rng.choice(["claude-sonnet-4-5","m2"]),
                "usage":usage(),"stopReason":"toolUse" if calls else "stop","timestamp":1}
    if role == "bashExecution":
        return {"role":"bashExecution","command":"ls","output":"out","exitCode":rng.choice([0, 1]),
                "cancelled":False,"truncated":False,"timestamp":1}
    m = {"role":"toolResult","toolCallId":pending.pop(0) if pending else "c1","toolName":"bash",
         "content":[{"type":"text","text":"out"}],"isError":rng.random() < 0.2,"timestamp":1}
    if rng.random() < 0.2: m["usage"] = usage()
    return m
def base():
    h = {"type":"session","version":3,"id":"019e0000-0000-7000-8000-%012x" % rng.getrandbits(48),"timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}
    es, ids, pending = [], [], []
    for j in range(rng.randint(2, 14)):
        t = rng.choice(["message"]*6 + ["model_change","label","usage","custom","compaction","branch_summary"])
        e = {"type": t, "id": rid(), "parentId": (ids[-1] if rng.random() < 0.8 else rng.choice(ids)) if ids else None,
             "timestamp": "2026-01-01T00:00:%02d.000Z" % j}
        if t == "message":
            e["message"] = message(rng.choice(["user","assistant","assistant","toolResult","toolResult","bashExecution"]), pending)
        elif t == "usage": e.update(kind="cache_warm", provider="anthropic", model="claude-sonnet-4-5", usage=usage())
        elif t == "label": e.update(targetId=rng.choice(ids) if ids else "q", label="L")
        elif t == "model_change": e.update(provider="anthropic", modelId="claude")
        elif t == "compaction":
            e.update(summary="S", firstKeptEntryId=rng.choice(ids) if ids else "q", tokensBefore=rng.randint(0, 99999))
        elif t == "branch_summary": e.update(fromId=rng.choice(ids) if ids else "root", summary="B")
        if t in ("compaction", "branch_summary") and rng.random() < 0.6: e["usage"] = usage()
        es.append(e); ids.append(e["id"])
    return h, es
def assistants(es): return [e for e in es if e["type"] == "message" and e["message"]["role"] == "assistant"] or None
def usages(es): return [e["message"]["usage"] if e["type"] == "message" else e["usage"] for e in es if (e["type"] == "message" and e["message"]["role"] == "assistant") or e["type"] == "usage"] or None
def dumps(v): return json.dumps(v, separators=(",",":"), ensure_ascii=False).encode("utf-8", "surrogatepass")

# Structural mutations on (h, es): return None when not applicable.
def m_set(containers, field, val):
    """Sets `field` of one of the objects `containers(es)` gives to `val` (called when it is
    a function; "missing" deletes the field)."""
    def f(h, es):
        cs = containers(es)
        if not cs: return None
        v = val() if callable(val) else val
        c = rng.choice(cs)
        if v == "missing": c.pop(field, None)
        else: c[field] = v
        return True
    return f
def calls(es): return [b for m in messages(es) if isinstance(m.get("content"), list)
                       for b in m["content"] if isinstance(b, dict) and b.get("type") == "toolCall"] or None
def results(es): return [e["message"] for e in es if e["type"] == "message" and e["message"]["role"] == "toolResult"] or None
def summaries(es): return [e for e in es if e["type"] in ("compaction", "branch_summary")] or None
def m_calls(fn):
    """Applies `fn(calls, es)` to the session's tool calls, when it has any."""
    def f(h, es):
        cs = calls(es)
        return fn(cs, es) if cs else None
    return f
def m_results(fn):
    """Applies `fn` to one of the session's tool results, when it has any."""
    def f(h, es):
        rs = results(es)
        if not rs: return None
        fn(rng.choice(rs)); return True
    return f
def again(kind):
    """Writes a copy of one entry of `kind` (a tool result: a second result for its call),
    under a new id, at the end."""
    def f(h, es):
        cand = results(es) if kind == "toolResult" else None
        if not cand: return None
        m = rng.choice(cand)
        e = next(e for e in es if e.get("message") is m)
        es.append(dict(e, id=rid(), parentId=es[-1]["id"])); return True
    return f
def costs(es): return [u["cost"] for u in usages(es) or []]
def messages(es): return [a["message"] for a in assistants(es) or []]
def m_usage_value(val, field): return m_set(usages, field, val)
def m_cost(val): return m_set(usages, "cost", val) if val == "missing" else m_set(costs, "total", val)
def m_usage_obj(val): return m_set(messages, "usage", val)
def m_entry(fn):
    def f(h, es):
        e = rng.choice(es); fn(e, es); return True
    return f
def set_parent(v): return lambda e, es: e.__setitem__("parentId", v() if callable(v) else v)
STRUCT = {
  "u-float": m_usage_value(lambda: rng.choice([1.5, 100.25, 3e3]), "input"),
  "u-neg": m_usage_value(-5, "output"),
  "u-str": m_usage_value("12", "input"),
  "u-null": m_usage_value(None, "cacheRead"),
  "u-big": m_usage_value(lambda: rng.choice([1e20, 2**53 + 1, 2**60]), "input"),
  "u-total-only": m_usage_value(lambda: rng.randint(0, 100), "totalTokens"),
  "cost-str": m_cost("0.1"), "cost-none": m_cost(None), "cost-neg": m_cost(-1),
  "cost-huge": m_cost(1e308), "cost-missing": m_cost("missing"), "cost-int": m_cost(2),
  "usage-null": m_usage_obj(None), "usage-str": m_usage_obj("x"), "usage-arr": m_usage_obj([]),
  "usage-missing": m_usage_obj("missing"), "usage-empty": m_usage_obj({}),
  "id-missing": m_entry(lambda e, es: e.pop("id")),
  "id-num": m_entry(lambda e, es: e.__setitem__("id", rng.randint(0, 9))),
  "id-null": m_entry(lambda e, es: e.__setitem__("id", None)),
  "id-empty": m_entry(lambda e, es: e.__setitem__("id", "")),
  "id-dup": m_entry(lambda e, es: e.__setitem__("id", rng.choice(es)["id"])),
  "type-missing": m_entry(lambda e, es: e.pop("type")),
  "type-num": m_entry(lambda e, es: e.__setitem__("type", 1)),
  "type-session": m_entry(lambda e, es: e.__setitem__("type", "session")),
  "p-null": m_entry(set_parent(None)), "p-unknown": m_entry(set_parent(rid)),
  "p-self": m_entry(lambda e, es: e.__setitem__("parentId", e.get("id"))),
  "p-num": m_entry(set_parent(0)), "p-empty": m_entry(set_parent("")),
  "p-arr": m_entry(set_parent(lambda: [])), "p-absent": m_entry(lambda e, es: e.pop("parentId")),
  "p-forward": m_entry(lambda e, es: e.__setitem__("parentId", es[-1]["id"])),
  "msg-null": m_entry(lambda e, es: e.__setitem__("message", None) if e["type"] == "message" else None),
  "role-missing": m_entry(lambda e, es: e["message"].pop("role") if e["type"] == "message" else None),
  "h-id-num": lambda h, es: h.__setitem__("id", 1) or True,
  "h-id-null": lambda h, es: h.__setitem__("id", None) or True,
  "h-id-missing": lambda h, es: h.pop("id") and True,
  "h-version-str": lambda h, es: h.__setitem__("version", "3") or True,
  "h-version-1": lambda h, es: h.__setitem__("version", 1) or True,
  "h-version-2": lambda h, es: h.__setitem__("version", 2) or True,
  "h-version-9": lambda h, es: h.__setitem__("version", 9) or True,
  "h-noversion": lambda h, es: h.pop("version") and True,
  "h-cwd-num": lambda h, es: h.__setitem__("cwd", 5) or True,
  "tc-id-missing": m_set(calls, "id", "missing"), "tc-id-num": m_set(calls, "id", 7),
  "tc-id-null": m_set(calls, "id", None), "tc-id-empty": m_set(calls, "id", ""),
  "tc-id-dup": m_calls(lambda cs, es: rng.choice(cs).__setitem__("id", rng.choice(cs)["id"]) or True),
  "tc-name-num": m_set(calls, "name", 3), "tc-name-missing": m_set(calls, "name", "missing"),
  "tc-args-str": m_set(calls, "arguments", "ls"), "tc-args-missing": m_set(calls, "arguments", "missing"),
  "tc-args-null": m_set(calls, "arguments", None),
  "tc-type-missing": m_set(calls, "type", "missing"), "tc-type-num": m_set(calls, "type", 1),
  "tr-callid-missing": m_set(results, "toolCallId", "missing"), "tr-callid-num": m_set(results, "toolCallId", 5),
  "tr-callid-null": m_set(results, "toolCallId", None),
  "tr-callid-unknown": m_set(results, "toolCallId", lambda: "call_" + rid()),
  "tr-content-str": m_set(results, "content", "out"), "tr-content-null": m_set(results, "content", None),
  "tr-content-missing": m_set(results, "content", "missing"), "tr-iserror-str": m_set(results, "isError", "true"),
  "tr-iserror-missing": m_set(results, "isError", "missing"),
  "tr-usage": m_set(results, "usage", usage), "tr-usage-null": m_set(results, "usage", None),
  "tr-usage-str": m_set(results, "usage", "x"), "tr-usage-arr": m_set(results, "usage", []),
  "tr-usage-empty": m_set(results, "usage", {}),
  "tr-again": again("toolResult"),
  # oh-my-pi's task tool: its sub-agents' usage in the result's details.
  "tr-task-usage": m_results(lambda m: m.pop("usage", None) and None
                            or m.update(toolName="task", details={"usage": usage()})),
  # ... and a usage of its own besides (Pi 1.x's place for a tool's calls).
  "tr-task-both": m_results(lambda m: m.update(toolName="task", details={"usage": usage()}, usage=usage())),
  "a-content-str": m_set(messages, "content", "text"),
  "a-content-obj": m_set(messages, "content", lambda: {"type":"toolCall","id":"call_" + rid(),"name":"bash"}),
  "a-content-missing": m_set(messages, "content", "missing"),
  "sum-usage-null": m_set(summaries, "usage", None), "sum-usage-str": m_set(summaries, "usage", "x"),
  "sum-usage-arr": m_set(summaries, "usage", []), "sum-usage-empty": m_set(summaries, "usage", {}),
  "sum-usage": m_set(summaries, "usage", usage), "sum-usage-missing": m_set(summaries, "usage", "missing"),
}
# Byte-level mutations on the list of encoded lines (index 0 is the header).
def pick(lines): return rng.randrange(1, len(lines)) if len(lines) > 1 else 0
def sub(old, new):
    def f(lines):
        cand = [i for i, l in enumerate(lines) if old in l]
        if not cand: return None
        i = rng.choice(cand); lines[i] = lines[i].replace(old, new, 1); return True
    return f
def sub_re(pattern, repl):
    """As `sub`, with a regular expression."""
    def f(lines):
        cand = [i for i, l in enumerate(lines) if re.search(pattern, l)]
        if not cand: return None
        i = rng.choice(cand); lines[i] = re.sub(pattern, repl, lines[i], count=1); return True
    return f
def at_line(fn, header=False):
    def f(lines):
        i = 0 if header else pick(lines); lines[i] = fn(lines[i]); return True
    return f
def esc_first(lines, key):
    cand = [i for i, l in enumerate(lines) if key in l and i > 0]
    if not cand: return None
    i = rng.choice(cand); l = lines[i]; at = l.index(key) + len(key)
    c = l[at:at+1]
    if c in (b'"', b'\\'): return None
    lines[i] = l[:at] + b"\\u%04x" % c[0] + l[at+1:]
    return True
BYTES = {
  "esc-role": sub(b'"role":"assistant"', b'"role":"\\u0061ssistant"'),
  "esc-role-tr": sub(b'"role":"toolResult"', b'"role":"tool\\u0052esult"'),
  "esc-usage-key": sub(b'"usage":{', b'"us\\u0061ge":{'),
  "esc-input-key": sub(b'"input":', b'"inp\\u0075t":'),
  "esc-total-key": sub(b'"total":', b'"tot\\u0061l":'),
  "esc-type-usage": sub(b'"type":"usage"', b'"type":"us\\u0061ge"'),
  "esc-type-label": sub(b'"type":"label"', b'"type":"l\\u0061bel"'),
  "esc-type-session": sub(b'"type":"session"', b'"type":"s\\u0065ssion"'),
  "esc-type-tc": sub(b'"type":"text"', b'"type":"t\\u0065xt"'),
  "esc-type-toolcall": sub(b'"type":"toolCall"', b'"type":"toolC\\u0061ll"'),
  "esc-role-bash": sub(b'"role":"bashExecution"', b'"role":"bash\\u0045xecution"'),
  "esc-type-compaction": sub(b'"type":"compaction"', b'"type":"c\\u006fmpaction"'),
  "esc-type-bsum": sub(b'"type":"branch_summary"', b'"type":"branch\\u005fsummary"'),
  "esc-callid": lambda lines: esc_first(lines, b'"toolCallId":"'),
  "esc-call-id": lambda lines: esc_first(lines, b'{"type":"toolCall","id":"'),
  "dup-type-block": sub(b'{"type":"toolCall"', b'{"type":"text","type":"toolCall"'),
  "dup-type-block-last": sub(b'{"type":"toolCall"', b'{"type":"toolCall","type":"text"'),
  "dup-callid": sub(b'"toolCallId":"', b'"toolCallId":"zz","toolCallId":"'),
  "dup-callid-last": sub_re(rb'("toolCallId":"[^"]*")', rb'\1,"toolCallId":"zz"'),
  "dup-type-first": sub(b'{"type":"message"', b'{"type":"custom","type":"message"'),
  "dup-role-first": sub(b'"message":{"role":"assistant"', b'"message":{"role":"user","role":"assistant"'),
  "esc-provider": sub(b'"provider":"anthropic"', b'"provider":"anthr\\u006fpic"'),
  "esc-model": sub(b'"model":"claude-sonnet-4-5"', b'"model":"claude-sonnet-4\\u002d5"'),
  "esc-parent-value": lambda lines: esc_first(lines, b'"parentId":"'),
  "esc-id-same": lambda lines: esc_first(lines, b'"id":"'),
  "esc-version": sub(b'"version":3', b'"version":3.0'),
  "h-version-str3": sub(b'"version":3', b'"version":"3"'),
  "h-version-str1": sub(b'"version":3', b'"version":"1"'),
  "h-version-true": sub(b'"version":3', b'"version":true'),
  "h-version-abc": sub(b'"version":3', b'"version":"abc"'),
  "h-version-25": sub(b'"version":3', b'"version":2.5'),
  "h-version-neg": sub(b'"version":3', b'"version":-1'),
  "h-version-arr": sub(b'"version":3', b'"version":[3]'),
  "h-version-obj": sub(b'"version":3', b'"version":{}'),
  "h-version-big": sub(b'"version":3', b'"version":1e400'),
  "h-version-null": sub(b'"version":3', b'"version":null'),
  "dupkey-id": sub(b'{"type"', b'{"id":"feedf00d","type"'),
  "dupkey-parent": sub(b',"timestamp"', b',"parentId":null,"timestamp"'),
  "dupkey-type": sub(b',"timestamp"', b',"type":"custom","timestamp"'),
  "esc-id-key": sub(b'"id"', b'"\\u0069d"'),
  "esc-parent-key": sub(b'"parentId"', b'"parent\\u0049d"'),
  "esc-type-value": sub(b'"type":"message"', b'"type":"m\\u0065ssage"'),
  "esc-id-value": sub(b'"id":"', b'"id":"\\u0030'),
  "trail-space": at_line(lambda l: l + b" "), "trail-tab": at_line(lambda l: l + b"\t"),
  "trail-cr": at_line(lambda l: l + b"\r"), "trail-nbsp": at_line(lambda l: l + "\u00a0".encode()),
  "trail-bom": at_line(lambda l: l + "\ufeff".encode()), "trail-ls": at_line(lambda l: l + "\u2028".encode()),
  "trail-vt": at_line(lambda l: l + b"\x0b"), "trail-ff": at_line(lambda l: l + b"\x0c"),
  "trail-comma": at_line(lambda l: l + b","), "trail-brace": at_line(lambda l: l + b"}"),
  "trail-x": at_line(lambda l: l + b"x"), "trail-nul": at_line(lambda l: l + b"\x00"),
  "lead-space": at_line(lambda l: b" " + l), "lead-nbsp": at_line(lambda l: "\u00a0".encode() + l),
  "lead-bom": at_line(lambda l: "\ufeff".encode() + l), "lead-vt": at_line(lambda l: b"\x0b" + l),
  "lead-cr": at_line(lambda l: b"\r" + l), "lead-ideo": at_line(lambda l: "\u3000".encode() + l),
  "h-trail-nbsp": at_line(lambda l: l + "\u00a0".encode(), True), "h-lead-space": at_line(lambda l: b" " + l, True),
  "h-trail-vt": at_line(lambda l: l + b"\x0b", True),
  "lone-high": sub(b'"hi ', b'"\\ud800hi '), "lone-low": sub(b'"ok"', b'"\\udc00ok"'),
  "pair": sub(b'"ok"', b'"\\ud83d\\ude00ok"'), "raw-sur": sub(b'"ok"', b'"\xed\xa0\x80ok"'),
  "nul-raw": sub(b'"hi ', b'"h\x00i '), "tab-raw": sub(b'"hi ', b'"h\ti '), "del-raw": sub(b'"hi ', b'"h\x7fi '),
  "nl-esc": sub(b'"ok"', b'"o\\nk"'), "esc-slash": sub(b'"ok"', b'"o\\/k"'), "esc-x": sub(b'"ok"', b'"o\\x41k"'),
  "esc-bad-u": sub(b'"ok"', b'"o\\u12k"'), "esc-U": sub(b'"ok"', b'"o\\U0041k"'), "esc-star": sub(b'"ok"', b'"o\\*k"'),
  "num-exp": sub(b'"timestamp":1', b'"timestamp":1e400'), "num-negzero": sub(b'"timestamp":1', b'"timestamp":-0'),
  "num-lead0": sub(b'"timestamp":1', b'"timestamp":01'), "num-plus": sub(b'"timestamp":1', b'"timestamp":+1'),
  "num-dot": sub(b'"timestamp":1', b'"timestamp":1.'), "num-hex": sub(b'"timestamp":1', b'"timestamp":0x1'),
  "num-inf": sub(b'"timestamp":1', b'"timestamp":Infinity'), "num-nan": sub(b'"timestamp":1', b'"timestamp":NaN'),
  "deep-100": at_line(lambda l: l[:-1] + b',"d":' + b"[" * 100 + b"]" * 100 + b"}"),
  "deep-3000": at_line(lambda l: l[:-1] + b',"d":' + b"[" * 3000 + b"]" * 3000 + b"}"),
  "deep-20000": at_line(lambda l: l[:-1] + b',"d":' + b"[" * 20000 + b"]" * 20000 + b"}"),
  "deep-obj-5000": at_line(lambda l: l[:-1] + b',"d":' + b'{"a":' * 5000 + b"1" + b"}" * 5000 + b"}"),
  "proto": at_line(lambda l: l[:-1] + b',"__proto__":{"id":"zz"}}'),
  "proto-id": sub(b'"id"', b'"__proto__":null,"id"'),
  "half": at_line(lambda l: l[:len(l) // 2]),
  "lit-null": at_line(lambda l: b"null"), "lit-false": at_line(lambda l: b"false"), "lit-zero": at_line(lambda l: b"0"),
  "lit-emptystr": at_line(lambda l: b'""'), "lit-str": at_line(lambda l: b'"s"'), "lit-arr": at_line(lambda l: b"[]"),
  "lit-obj": at_line(lambda l: b"{}"), "lit-true": at_line(lambda l: b"true"), "lit-arrobj": at_line(lambda l: b'[{"type":"custom","id":"x"}]'),
  "h-lit-null": at_line(lambda l: b"null", True), "h-lit-str": at_line(lambda l: b'"s"', True), "h-lit-0": at_line(lambda l: b"0", True),
  "h-lit-arr": at_line(lambda l: b"[]", True), "h-lit-obj": at_line(lambda l: b"{}", True), "h-half": at_line(lambda l: l[:len(l)//2], True),
  "badutf8": sub(b'"hi ', b'"h\xff\xfei '), "overlong": sub(b'"ok"', b'"o\xc0\xafk"'), "trunc-utf8": sub(b'"ok"', b'"o\xe2\x82k"'),
  "badutf8-key": sub(b'"timestamp"', b'"time\xffstamp"'), "badutf8-id": sub(b'"id":"', b'"id":"\xff'),
  "bom": at_line(lambda l: b"\xef\xbb\xbf" + l, True),
  "pre-blank": lambda lines: lines.insert(0, b"") or True, "pre-space": lambda lines: lines.insert(0, b"  ") or True,
  "pre-garbage": lambda lines: lines.insert(0, b"garbage") or True, "pre-null": lambda lines: lines.insert(0, b"null") or True,
  "pre-entry": lambda lines: lines.insert(0, lines[-1]) or True, "pre-crlf": lambda lines: lines.insert(0, b"\r") or True,
  "noheader": lambda lines: lines.pop(0) and True,
  "second-header": lambda lines: lines.insert(pick(lines), lines[0]) or True,
  "blank-mid": lambda lines: lines.insert(pick(lines), b"") or True,
  "space-mid": lambda lines: lines.insert(pick(lines), b"   ") or True,
  "cr-mid": lambda lines: lines.insert(pick(lines), b"\r") or True,
  "header-only": lambda lines: (lines.__setitem__(slice(1, None), []) or True),
}
SEP = {"crlf": b"\r\n", "cr-only": b"\r", "nofinalnl": None, "double-nl": b"\n\n", "glued": "glued", "empty-file": "empty", "only-nl": "onlynl"}
names = list(STRUCT) + list(BYTES) + list(SEP)
k = 0
for name in names:
    made = 0; tries = 0
    while made < per and tries < per * 20:
        tries += 1
        h, es = base()
        if name in STRUCT and STRUCT[name](h, es) is None: continue
        lines = [dumps(h)] + [dumps(e) for e in es]
        if name in BYTES and BYTES[name](lines) is None: continue
        sep = SEP.get(name, b"\n")
        if sep == "glued":
            i = pick(lines); lines[i - 1:i + 1] = [lines[i - 1] + lines[i]]; sep = b"\n"
        if sep == "empty": data = b""
        elif sep == "onlynl": data = b"\n"
        elif sep is None: data = b"\n".join(lines)
        else: data = sep.join(lines) + sep
        open(os.path.join(out, "%s.%03d.jsonl" % (name, made)), "wb").write(data)
        made += 1
