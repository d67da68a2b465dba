// Twins: proof that a compaction's reason cannot always be read from the file. For each
// compaction of the held-out sessions of SEED, the same session is made again with one change
// in what the user did, nothing Pi writes about:
// - an automatic compaction (threshold or overflow) during step k: auto-compaction off for that
//   step and /compact after it (`after`), or /compact before it (`before`);
// - a /compact at step k: no /compact, and auto-compaction on (and summaries succeeding) for
//   the run before it (`auto`, after Pi's check before its prompt; `atEnd`, from the run's end:
//   Pi's checks during the run, which may have failed, leave nothing) or for Pi's check before the
//   next prompt (`pre`); a /compact while tools ran: Esc instead, and auto-compaction on for
//   Pi's check before the next prompt (`abort`).
// A twin is kept when Pi wrote the same session up to ids and times (`canonical`) and gave the
// compaction another reason: no rule reading the file can be right on both.

import * as fs from "node:fs";
import * as path from "node:path";
import { heldout, RUN_STEPS } from "./heldout.mjs";

/** Keys whose values differ between two runs of the same session: times and the faux api tag. */
const VARYING = new Set(["timestamp", "durationMs", "api"]);

/** The session as its lines, with ids renumbered in order of appearance and times left out. */
export function canonical(text) {
	const ids = new Map();
	const strip = (v) =>
		Array.isArray(v)
			? v.map(strip)
			: v && typeof v === "object"
				? Object.fromEntries(Object.entries(v).filter(([k]) => !VARYING.has(k)).map(([k, x]) => [k, strip(x)]))
				: v;
	return text
		.split("\n")
		.filter((l) => l.trim())
		.map((l) => {
			const e = JSON.parse(l);
			if (e.type === "session") delete e.id;
			else {
				ids.set(e.id, `#${ids.size}`);
				for (const k of ["id", "parentId", "firstKeptEntryId", "targetId"])
					if (typeof e[k] === "string" && ids.has(e[k])) e[k] = ids.get(e[k]);
			}
			return JSON.stringify(strip(e));
		})
		.join("\n");
}

/** The changes to try for the compaction `t` of a session whose steps are `steps`. */
function changes(t, steps) {
	const k = t.step;
	if (t.reason !== "manual")
		return [
			{ k, kind: "after" },
			{ k, kind: "before" },
		];
	let prev = k - 1;
	while (prev >= 0 && !RUN_STEPS.has(steps[prev])) prev--;
	let next = k + 1;
	while (next < steps.length && !RUN_STEPS.has(steps[next])) next++;
	// Other /compacts before the next prompt failed ("Already compacted"): left out with it.
	const skip = [k, ...steps.slice(k + 1, next).flatMap((s, i) => (s === "manual" ? [k + 1 + i] : []))];
	const tries = [];
	if (steps[k] === "manual") {
		if (prev >= 0) tries.push({ k: prev, kind: "auto", skip }, { k: prev, kind: "atEnd", skip });
		if (next < steps.length) tries.push({ skip, pre: next });
	}
	if (steps[k] === "manualMidRun" && next < steps.length) tries.push({ k, kind: "abort", pre: next });
	return tries;
}

/**
 * Makes the twins of sessions 0 to COUNT-1 of SEED into `out` (`<session>-twin-<i>.jsonl`, the
 * twin of its i-th compaction) and returns their truth lines, each naming the session and the
 * compaction it is the twin of.
 */
export async function twins({ seed, count, out, work, truth, random, generator }) {
	fs.rmSync(work, { recursive: true, force: true });
	fs.mkdirSync(work, { recursive: true });
	const found = [];
	for (let n = 0; n < count; n++) {
		const start = random.get();
		let steps;
		let mark = truth.length;
		await heldout({ ...generator, seed, count: 1, from: n, dir: work, onSteps: (s) => (steps = s) });
		const end = random.get();
		const mine = truth.splice(mark);
		const name = `heldout-${seed}-${String(n).padStart(3, "0")}`;
		const original = canonical(fs.readFileSync(path.join(work, `${name}.jsonl`), "utf8"));
		for (const [i, t] of mine.entries()) {
			for (const twin of changes(t, steps)) {
				random.set(start);
				mark = truth.length;
				const file = `${name}-twin-${i}`;
				await heldout({ ...generator, seed, count: 1, from: n, twin, file, dir: work });
				const theirs = truth.splice(mark);
				const text = fs.readFileSync(path.join(work, `${file}.jsonl`), "utf8");
				const other = theirs[i];
				if (canonical(text) !== original || !other || other.reason === t.reason) continue;
				fs.copyFileSync(path.join(work, `${file}.jsonl`), path.join(out, `${file}.jsonl`));
				const { step: _s, ...line } = other;
				found.push({ ...line, change: twin, twin_of: t.file, twin_compaction: i, twin_reason: t.reason });
				console.error(`${file}: ${JSON.stringify(twin)}: ${t.reason} → ${other.reason}`);
				break;
			}
		}
		random.set(end);
	}
	return found;
}
