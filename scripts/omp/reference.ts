// oh-my-pi's own reading of session files: each file copied to a scratch folder and opened
// with omp's SessionManager (as `omp --resume` opens one), one JSON line per file:
//   { file, accepted, error?, entries: [[type, id], ...], branch: [[type, id], ...], usage }
// `entries`: what omp keeps of the file after its header; `branch`: getBranch() from its leaf;
// `usage`: getUsageStatistics(), the totals omp shows for the session. The input files are
// never written (omp may rewrite the copy).
//
//   bun reference.ts FILE...     (see README.md for the Bun binary)

import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHash } from "node:crypto";
import { SessionManager } from "@oh-my-pi/pi-coding-agent/session/session-manager";
import { FileSessionStorage } from "@oh-my-pi/pi-coding-agent/session/session-storage";

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
const pair = (e: any) => [e?.type ?? null, e?.id ?? null];

const files = process.argv.slice(2);
if (files.length === 0) {
	process.stderr.write("usage: bun reference.ts FILE...\n");
	process.exit(2);
}
const scratch = mkdtempSync(join(tmpdir(), "omp-reference-"));
try {
	for (const file of files) {
		const before = sha256(readFileSync(file));
		const copy = join(scratch, "session.jsonl");
		copyFileSync(file, copy);
		const sm = SessionManager.inMemory(scratch, new FileSessionStorage());
		let out: object;
		try {
			await sm.setSessionFile(copy);
			out = {
				file,
				accepted: true,
				entries: sm.getEntries().map(pair),
				branch: sm.getBranch().map(pair),
				usage: sm.getUsageStatistics(),
			};
		} catch (e: any) {
			out = { file, accepted: false, error: String(e?.message ?? e).replace(copy, "FILE") };
		}
		if (sha256(readFileSync(file)) !== before) throw new Error(`${file} was modified`);
		process.stdout.write(`${JSON.stringify(out)}\n`);
	}
} finally {
	rmSync(scratch, { recursive: true, force: true });
}
