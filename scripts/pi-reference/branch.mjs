#!/usr/bin/env node
// Reference oracle: ask Pi's own SessionManager which lines of a session file
// form the active branch (root to leaf).
//
// usage: node branch.mjs FILE...
//
// Prints one JSON line per FILE (in the order given):
//   {"file": FILE, "lines": [1-based physical line numbers], "leaf": id|null, "accepted": bool}
// or {"file": FILE, "hang": true}         when getBranch() does not return (parentId cycle)
// or {"file": FILE, "error": "message"}   when Pi throws while loading the file
//
// Each file is handled in a child process (this same script with --one) so that a
// parentId cycle, which makes getBranch() loop forever, can be killed by a timeout.
// Files are never modified: SessionManager.inMemory() never writes, and the sha256
// of every file is checked before and after.

import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { cpus } from "node:os";
import { fileURLToPath } from "node:url";

const TIMEOUT_MS = Number(process.env.PI_BRANCH_TIMEOUT_MS ?? 20000);
const JOBS = Number(process.env.PI_BRANCH_JOBS ?? Math.max(1, Math.min(8, cpus().length)));
const SELF = fileURLToPath(import.meta.url);

function sha256(path) {
	return createHash("sha256").update(readFileSync(path)).digest("hex");
}

// Re-do Pi's parse (loadEntriesFromFile in session-manager.js) with the same rules, but
// remember the physical line number of every line that parses:
//   content.trim().split("\n"); skip lines whose trim() is empty; skip lines where JSON.parse throws.
// trim() drops leading whitespace (including blank lines and a BOM), so line numbers in the
// trimmed text are offset by the number of "\n" in the dropped prefix. A trailing "\r" (CRLF) stays
// on the line and JSON.parse accepts it as whitespace. Only "\n" ends a line.
function parseWithLineNumbers(content) {
	const leading = content.length - content.trimStart().length;
	let firstLine = 1;
	for (let i = 0; i < leading; i++) if (content.charCodeAt(i) === 10) firstLine++;
	const parsed = []; // {line, value}
	const lines = content.trim().split("\n");
	for (let i = 0; i < lines.length; i++) {
		const line = lines[i];
		if (!line.trim()) continue;
		let value;
		try {
			value = JSON.parse(line);
		} catch {
			continue;
		}
		parsed.push({ line: firstLine + i, value });
	}
	return parsed;
}

async function one(file) {
	const { SessionManager } = await import("@mariozechner/pi-coding-agent");
	const content = readFileSync(file, "utf8");
	const mine = parseWithLineNumbers(content);

	const sm = SessionManager.inMemory();
	sm.setSessionFile(file);
	const fileEntries = sm.fileEntries;

	// Pi rejects a file whose first parsed entry is not a session header with a string id;
	// setSessionFile then replaces fileEntries with a fresh synthetic header (new random id).
	const first = mine.length > 0 ? mine[0].value : undefined;
	const accepted = mine.length > 0 && first.type === "session" && typeof first.id === "string";

	// Cross-check our view against what Pi actually loaded.
	if (accepted) {
		if (fileEntries.length !== mine.length)
			throw new Error(`entry count mismatch: pi ${fileEntries.length}, ours ${mine.length}`);
		if (sm.getSessionId() !== first.id) throw new Error("session id mismatch");
		for (let k = 0; k < mine.length; k++) {
			const a = mine[k].value;
			const b = fileEntries[k];
			if (a !== null && typeof a === "object" && (b === null || typeof b !== "object" || a.type !== b.type))
				throw new Error(`entry ${k} mismatch`);
		}
	} else {
		if (sm.getBranch().length !== 0) throw new Error("rejected file has a non-empty branch");
		return { file, lines: [], leaf: null, accepted: false };
	}

	const index = new Map();
	fileEntries.forEach((e, k) => index.set(e, k));
	const branch = sm.getBranch();
	const lines = [mine[0].line];
	for (const e of branch) {
		const k = index.get(e);
		if (k === undefined) throw new Error("branch entry not found in fileEntries");
		lines.push(mine[k].line);
	}
	// Report the leaf id as written in the file (v1/v2 files get fresh random ids from Pi's
	// in-memory migration, which would make the output non-deterministic).
	let leaf = null;
	if (branch.length > 0) {
		const orig = mine[index.get(branch[branch.length - 1])].value;
		leaf = orig.id ?? null;
	}
	return { file, lines, leaf, accepted: true };
}

function runChild(file) {
	return new Promise((resolvePromise) => {
		let before;
		try {
			before = sha256(file);
		} catch (e) {
			return resolvePromise({ file, error: String(e.message ?? e) });
		}
		const child = spawn(process.execPath, [SELF, "--one", file], { stdio: ["ignore", "pipe", "pipe"] });
		let out = "";
		let err = "";
		let timedOut = false;
		child.stdout.on("data", (d) => (out += d));
		child.stderr.on("data", (d) => (err += d));
		const timer = setTimeout(() => {
			timedOut = true;
			child.kill("SIGKILL");
		}, TIMEOUT_MS);
		child.on("close", (code) => {
			clearTimeout(timer);
			if (sha256(file) !== before) {
				process.stderr.write(`FATAL: ${file} was modified\n`);
				process.exit(2);
			}
			if (timedOut) return resolvePromise({ file, hang: true });
			if (code !== 0 || !out.trim()) {
				const msg = err.trim().split("\n").find((l) => /Error/.test(l)) ?? `exit ${code}`;
				return resolvePromise({ file, error: msg.trim() });
			}
			resolvePromise(JSON.parse(out));
		});
	});
}

async function main(argv) {
	if (argv[0] === "--one") {
		process.stdout.write(`${JSON.stringify(await one(argv[1]))}\n`);
		return;
	}
	if (argv.length === 0 || argv[0] === "-h" || argv[0] === "--help") {
		process.stderr.write("usage: node branch.mjs FILE...\n");
		process.exit(argv.length === 0 ? 2 : 0);
	}
	const results = new Array(argv.length);
	let next = 0;
	async function worker() {
		while (next < argv.length) {
			const i = next++;
			results[i] = await runChild(argv[i]);
		}
	}
	await Promise.all(Array.from({ length: Math.min(JOBS, argv.length) }, worker));
	for (const r of results) process.stdout.write(`${JSON.stringify(r)}\n`);
}

await main(process.argv.slice(2));
