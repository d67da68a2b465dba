#!/usr/bin/env node
// Reference oracle for Pi 1.6.0: ask Pi's own SessionManager which lines of a session file form
// the active branch, and ask Pi's own AgentSession.getSessionStats() what the file cost.
//
// usage: node reference.mjs FILE...
//
// Prints one JSON line per FILE, in the order given:
//   {"file", "accepted", "lines", "leaf", "stats"}       when Pi loads the file
//   {"file", "accepted": false, "error": message}          when Pi refuses it (setSessionFile throws)
//   {"file", "accepted": true, "hang": true, "stats"}      when getBranch() would never return
// `lines`: 1-based physical line numbers (lines end at "\n"), the header's first, then the
// getBranch() entries from the root to the leaf. `leaf`: the leaf entry's id as written in the file.
// `stats`: {"tokens": {input, output, cacheRead, cacheWrite, total}, "cost", "userMessages",
// "assistantMessages", "toolCalls", "toolResults", "totalMessages"} from getSessionStats(), and
// "breakdown": [{key, cost, tokens}] from getUsageCostBreakdown() (what /session shows per
// model); or {"error": message} when either throws (e.g. an assistant message without usage).
//
// Files are never modified. Pi 1.6.0's loadEntriesFromFile() appends "\n" to a file whose last
// line has none, so each FILE is copied to a temporary file and Pi loads the copy; the sha256 of
// every FILE is checked before and after.

import { createHash } from "node:crypto";
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AgentSession, SessionManager } from "@earendil-works/pi-coding-agent";

// The /session command's per-model breakdown: not exported from the package's index, so taken
// from its file beside the index.
const { getUsageCostBreakdown } = await import(
	new URL("./core/usage-totals.js", import.meta.resolve("@earendil-works/pi-coding-agent"))
);

const sha256 = (bytes) => createHash("sha256").update(bytes).digest("hex");

// Pi 1.6.0's parse (loadEntriesFromFile + parseSessionEntryLine in session-manager.js), keeping
// the physical line number of every value it keeps: the text is cut at every "\n" (no trim of
// the whole file, unlike 0.73.1); a line whose trim() is empty is skipped; a line JSON.parse
// refuses is skipped; a line that parses to a falsy value (null, false, 0, "") is skipped.
function parseWithLineNumbers(content) {
	const kept = [];
	const lines = content.split("\n");
	for (let i = 0; i < lines.length; i++) {
		if (!lines[i].trim()) continue;
		let value;
		try {
			value = JSON.parse(lines[i]);
		} catch {
			continue;
		}
		if (value) kept.push({ line: i + 1, value });
	}
	return kept;
}

/** Whether getBranch() from the leaf would loop: the same walk, stopped after more steps than entries. */
function branchLoops(sm) {
	const byId = sm.byId;
	let current = sm.getLeafId() ? byId.get(sm.getLeafId()) : undefined;
	for (let steps = 0; current; steps++) {
		if (steps > byId.size) return true;
		current = current.parentId ? byId.get(current.parentId) : undefined;
	}
	return false;
}

/** AgentSession.getSessionStats(), run on Pi's own code with only what it reads from `this`. */
function sessionStats(sm) {
	const self = { sessionManager: sm, sessionFile: undefined, sessionId: sm.getSessionId(), getContextUsage: () => undefined };
	try {
		const s = AgentSession.prototype.getSessionStats.call(self);
		return {
			tokens: s.tokens,
			cost: s.cost,
			userMessages: s.userMessages,
			assistantMessages: s.assistantMessages,
			toolCalls: s.toolCalls,
			toolResults: s.toolResults,
			totalMessages: s.totalMessages,
			breakdown: getUsageCostBreakdown(sm.getEntries()),
		};
	} catch (e) {
		return { error: String(e.message ?? e) };
	}
}

function one(file, scratch) {
	const original = readFileSync(file);
	const copy = join(scratch, "session.jsonl");
	copyFileSync(file, copy);
	const mine = parseWithLineNumbers(original.toString("utf8"));
	const sm = SessionManager.inMemory();
	try {
		sm.setSessionFile(copy);
	} catch (e) {
		return { file, accepted: false, error: String(e.message ?? e).replace(copy, "FILE") };
	}
	if (mine.length === 0) {
		// An empty file: Pi starts a new session in memory, with no line of the file in it.
		return { file, accepted: true, lines: [], leaf: null, stats: sessionStats(sm) };
	}
	const fileEntries = sm.fileEntries;
	if (fileEntries.length !== mine.length) throw new Error(`${file}: pi kept ${fileEntries.length} values, we ${mine.length}`);
	for (let k = 0; k < mine.length; k++) {
		const a = mine[k].value;
		const b = fileEntries[k];
		if (typeof a !== typeof b || (typeof a === "object" && a.type !== b.type)) throw new Error(`${file}: value ${k} differs`);
	}
	const stats = sessionStats(sm);
	if (branchLoops(sm)) return { file, accepted: true, hang: true, stats };
	const index = new Map();
	fileEntries.forEach((e, k) => {
		if (e !== null && typeof e === "object") index.set(e, k);
	});
	const branch = sm.getBranch();
	const lines = [mine[0].line];
	for (const e of branch) {
		const k = index.get(e);
		if (k === undefined) throw new Error(`${file}: a branch entry is not in fileEntries`);
		lines.push(mine[k].line);
	}
	// The leaf's id as written (v1 files get random ids from Pi's in-memory migration).
	const leaf = branch.length > 0 ? (mine[index.get(branch[branch.length - 1])].value.id ?? null) : null;
	return { file, accepted: true, lines, leaf, stats };
}

function main(files) {
	if (files.length === 0 || files[0] === "-h" || files[0] === "--help") {
		process.stderr.write("usage: node reference.mjs FILE...\n");
		process.exit(files.length === 0 ? 2 : 0);
	}
	const scratch = mkdtempSync(join(tmpdir(), "pi16-reference-"));
	try {
		for (const file of files) {
			const before = sha256(readFileSync(file));
			const result = one(file, scratch);
			if (sha256(readFileSync(file)) !== before) throw new Error(`${file} was modified`);
			process.stdout.write(`${JSON.stringify(result)}\n`);
		}
	} finally {
		rmSync(scratch, { recursive: true, force: true });
	}
}

main(process.argv.slice(2));
