#!/usr/bin/env node
// Writes the fixtures fixtures/pi16-*.jsonl with Pi 1.6.0's own SessionManager
// (@earendil-works/pi-coding-agent, pinned in package.json): every line of those files is
// what Pi's appendXXX()/branch()/resetLeaf()/createBranchedSession() wrote.
//
// usage: node write-fixtures.mjs OUT_DIR
//
// Deterministic: the clock and the random source are replaced before Pi runs (see
// `fixedClock` and `seededRandom`), so a second run writes the same bytes. The sessions are
// written under WORK_DIR (a fixed path, emptied first, because Pi records the path of the
// session a branched session came from) and copied to OUT_DIR/pi16-<name>.jsonl.

import { copyFileSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { createRequire, syncBuiltinESMExports } from "node:module";
import { join } from "node:path";

const WORK_DIR = "/tmp/pi-jsonl-pi16-fixtures";
const CWD = "/home/dev/project";

// ---- determinism: a fixed clock and a seeded random source, installed before Pi loads ----

/** Every argument-less `new Date()` / `Date.now()` moves the clock on by one second. */
function fixedClock(startIso) {
	const RealDate = Date;
	let now = RealDate.parse(startIso);
	class FixedDate extends RealDate {
		constructor(...args) {
			if (args.length === 0) {
				now += 1000;
				super(now);
			} else {
				super(...args);
			}
		}
		static now() {
			now += 1000;
			return now;
		}
	}
	globalThis.Date = FixedDate;
	return {
		/** The clock's time without moving it (message timestamps, which Pi takes from the caller). */
		peek: () => now,
	};
}

/** xorshift32: Pi's entry ids (randomUUID) and session ids (uuidv7's getRandomValues). */
function seededRandom(seed) {
	let state = seed >>> 0 || 1;
	const nextByte = () => {
		state ^= state << 13;
		state >>>= 0;
		state ^= state >>> 17;
		state ^= state << 5;
		state >>>= 0;
		return state & 0xff;
	};
	const uuid4 = () => {
		const b = Array.from({ length: 16 }, nextByte);
		b[6] = (b[6] & 0x0f) | 0x40;
		b[8] = (b[8] & 0x3f) | 0x80;
		const h = b.map((x) => x.toString(16).padStart(2, "0")).join("");
		return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
	};
	// `repeat`: randomUUID returns the same value until cleared, which makes Pi's generateId()
	// collide 100 times and fall back to a full UUID (its documented fallback).
	const control = { repeat: undefined };
	const require = createRequire(import.meta.url);
	const crypto = require("node:crypto");
	crypto.randomUUID = () => control.repeat ?? uuid4();
	syncBuiltinESMExports();
	globalThis.crypto.getRandomValues = (array) => {
		for (let i = 0; i < array.length; i++) array[i] = nextByte();
		return array;
	};
	return control;
}

const clock = fixedClock("2026-11-20T09:00:00.000Z");
const random = seededRandom(0x5eed1600);
const { SessionManager } = await import("@earendil-works/pi-coding-agent");

// ---- realistic message shapes (pi-ai's types.d.ts) ----

/** A Usage as pi-ai writes it, priced per million tokens; `extra` adds the 1.x fields. */
function usage(input, output, cacheRead, cacheWrite, prices, extra = {}) {
	const [pIn, pOut, pRead, pWrite] = prices;
	const cost = {
		input: (input * pIn) / 1e6,
		output: (output * pOut) / 1e6,
		cacheRead: (cacheRead * pRead) / 1e6,
		cacheWrite: (cacheWrite * pWrite) / 1e6,
	};
	cost.total = extra.billedTotal ?? cost.input + cost.output + cost.cacheRead + cost.cacheWrite;
	if (extra.billedTotal !== undefined) cost.totalFromProvider = true;
	else if (extra.estimated) cost.totalFromProvider = false;
	return {
		input,
		output,
		cacheRead,
		cacheWrite,
		...(extra.cacheWrite1h !== undefined ? { cacheWrite1h: extra.cacheWrite1h } : {}),
		...(extra.reasoning !== undefined ? { reasoning: extra.reasoning } : {}),
		totalTokens: input + output + cacheRead + cacheWrite,
		cost,
	};
}

const SONNET = [3, 15, 0.3, 3.75];
const HAIKU = [1, 5, 0.1, 1.25];
const GPT = [1.25, 10, 0.125, 0];

const TOOLS = [
	{
		name: "read",
		description: "Read a file.",
		parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
	},
	{
		name: "bash",
		description: "Run a shell command.",
		parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
	},
	{
		name: "codemode",
		description: "Run a script that calls other tools.",
		parameters: { type: "object", properties: { script: { type: "string" } }, required: ["script"] },
	},
];

function system(sections, toolsAdded, toolsRemoved) {
	return {
		role: "system",
		content: "",
		...(sections ? { sections } : {}),
		...(toolsAdded ? { toolsAdded } : {}),
		...(toolsRemoved ? { toolsRemoved } : {}),
		timestamp: clock.peek(),
	};
}

function user(text) {
	return { role: "user", content: text, timestamp: clock.peek() };
}

function assistant(content, u, opts = {}) {
	return {
		role: "assistant",
		content,
		api: opts.api ?? "anthropic-messages",
		provider: opts.provider ?? "anthropic",
		model: opts.model ?? "claude-sonnet-4-5",
		...(opts.responseModel ? { responseModel: opts.responseModel } : {}),
		...(opts.responseId ? { responseId: opts.responseId } : {}),
		...(opts.thinkingLevel ? { thinkingLevel: opts.thinkingLevel } : {}),
		usage: u,
		stopReason: opts.stopReason ?? "stop",
		...(opts.deferred ? { deferred: opts.deferred } : {}),
		timestamp: clock.peek(),
		...(opts.durationMs !== undefined ? { durationMs: opts.durationMs } : {}),
	};
}

function toolResult(call, text, opts = {}) {
	return {
		role: "toolResult",
		toolCallId: call.id,
		toolName: call.name,
		content: [{ type: "text", text }],
		...(opts.details ? { details: opts.details } : {}),
		...(opts.usage ? { usage: opts.usage } : {}),
		...(opts.nestedCalls ? { nestedCalls: opts.nestedCalls } : {}),
		isError: opts.isError ?? false,
		timestamp: clock.peek(),
		...(opts.durationMs !== undefined ? { durationMs: opts.durationMs } : {}),
	};
}

const text = (t) => ({ type: "text", text: t });
const thinking = (t, signature) => ({ type: "thinking", thinking: t, thinkingSignature: signature });
const redacted = (payload) => ({ type: "thinking", thinking: "", thinkingSignature: payload, redacted: true });
const toolCall = (id, name, args, namespace) => ({
	type: "toolCall",
	id,
	name,
	arguments: args,
	...(namespace ? { namespace } : {}),
});

function newSession(id) {
	return SessionManager.create(CWD, WORK_DIR, id === undefined ? undefined : { id });
}

// ---- the sessions ----

/** Every usage source Pi 1.6.0 counts, and every new field on the main line. */
function usageSources() {
	const sm = newSession("pi16-usage-sources");
	sm.appendMessage(system({ preamble: "You are a careful coding assistant.", cwd: CWD }, TOOLS));
	sm.appendModelChange("anthropic", "claude-sonnet-4-5");
	sm.appendThinkingLevelChange("high");
	const ask = sm.appendMessage(user("Why does the build fail on CI but not locally?"));
	const read = toolCall("toolu_01", "read", { path: "Cargo.toml" });
	sm.appendMessage(
		assistant(
			[thinking("Check the manifest first.", "sig-a1"), redacted("ZW5jcnlwdGVkLXRoaW5raW5n"), read],
			usage(4200, 380, 0, 12000, SONNET, { cacheWrite1h: 8000, reasoning: 120 }),
			{ stopReason: "toolUse", responseId: "msg_01", thinkingLevel: "high", durationMs: 4210 },
		),
	);
	sm.appendMessage(toolResult(read, '[package]\nname = "app"\n', { durationMs: 3 }));
	const script = toolCall(
		"call_02",
		"codemode",
		{ script: "const a = await read('a.rs'); await bash('cargo check');" },
		"functions",
	);
	sm.appendMessage(
		assistant([text("Running the check in a script."), script], usage(310, 95, 16200, 0, SONNET), {
			stopReason: "toolUse",
			responseModel: "claude-sonnet-4-5-20250929",
			responseId: "msg_02",
			durationMs: 2875,
		}),
	);
	const scriptResult = sm.appendMessage(
		toolResult(script, "error[E0425]: cannot find value `x`", {
			isError: true,
			durationMs: 9120,
			usage: usage(2100, 240, 0, 0, HAIKU, { estimated: true }),
			nestedCalls: {
				calls: [
					{ id: "n1", name: "read", arguments: { path: "a.rs" }, status: "ok", durationMs: 2 },
					{ id: "n2", name: "bash", argumentsBytes: 40000, status: "error", durationMs: 9001, error: "exit 101" },
					{ id: "n3", name: "bash", arguments: { command: "sleep 100" }, status: "unfinished" },
				],
				complete: false,
			},
		}),
	);
	sm.appendUsage("cache_warm", "anthropic", "claude-sonnet-4-5-20250929", usage(0, 1, 16505, 0, SONNET));
	sm.appendUsage(
		"prompt_probe",
		"openai",
		"gpt-5-mini",
		usage(900, 40, 0, 0, GPT, { billedTotal: 0.00153 }),
		"extension override",
	);
	sm.appendMessage(
		assistant(
			[text("The build uses a feature only enabled locally.")],
			usage(620, 1480, 16505, 0, GPT, { reasoning: 1024, billedTotal: 0.0172 }),
			{
				api: "openai-responses",
				provider: "openai",
				model: "gpt-5",
				responseModel: "gpt-5-2025-08-07",
				responseId: "resp_03",
				durationMs: 15300,
			},
		),
	);
	sm.appendContextEdit(scriptResult, { content: "[script output elided]" });
	sm.appendContextEdit(ask, null);
	sm.appendMessage(system({ cwd: null, skills: "<skills>none</skills>" }, undefined, [{ name: "codemode" }]));
	sm.appendMessage(user("Summarise this later; start a batch review."));
	sm.appendMessage(
		assistant([], usage(800, 0, 0, 0, SONNET), {
			stopReason: "deferred",
			responseId: "batch_04",
			deferred: {
				provider: "anthropic",
				modelId: "claude-sonnet-4-5",
				api: "anthropic-messages",
				id: "msgbatch_04",
				pollAfterMs: 60000,
			},
		}),
	);
	const kept = sm.appendMessage(user("Compact now."));
	sm.appendMessage(assistant([text("OK.")], usage(1200, 12, 0, 0, SONNET), { durationMs: 800 }));
	sm.appendCompaction(
		"The user asked why CI fails; the cause is a local-only feature.",
		kept,
		48213,
		{ readFiles: ["Cargo.toml"], modifiedFiles: [] },
		false,
		usage(30000, 900, 0, 0, HAIKU, { reasoning: 0 }),
	);
	sm.appendMessage(user("And now forget everything."));
	sm.appendMessage(assistant([text("Done.")], usage(150, 6, 0, 0, SONNET)));
	// Retain-none: no firstKeptEntryId, so Pi stores the compaction's own id there.
	sm.appendCompaction("Nothing worth keeping.", undefined, 31750, undefined, true, usage(5000, 60, 0, 0, HAIKU));
	sm.appendLabelChange(kept, "before-compaction");
	sm.appendSessionInfo("CI failure\nhunt");
	sm.appendCustomEntry("todo-state", { open: 2 });
	sm.appendCustomMessageEntry("note", "Context injected by an extension.", true, { source: "ext" });
	return sm;
}

/** Several roots: resetLeaf(), branchWithSummary(null, ...) and a summary whose fromId is "root". */
function roots() {
	const sm = newSession("pi16-roots");
	sm.appendMessage(system({ preamble: "You are a coding assistant." }, TOOLS.slice(0, 2)));
	const first = sm.appendMessage(user("Write a parser."));
	const firstAnswer = sm.appendMessage(
		assistant([text("Here is a parser.")], usage(1000, 200, 0, 2000, SONNET, { cacheWrite1h: 0 })),
	);
	sm.appendLabelChange(firstAnswer, "first-try");
	// Re-edit the first user message: a second root.
	sm.resetLeaf();
	sm.appendMessage(user("Write a streaming parser."));
	const second = sm.appendMessage(assistant([text("Streaming parser.")], usage(1100, 300, 0, 0, SONNET)));
	// Back to before anything with a summary: the summary is a third root, its fromId the abandoned leaf.
	sm.branchWithSummary(
		null,
		"Two parsers were written.",
		{ readFiles: [], modifiedFiles: ["src/parse.rs"] },
		false,
		usage(2400, 150, 0, 0, HAIKU),
	);
	sm.appendMessage(user("Start over with a lexer."));
	sm.appendMessage(assistant([text("Lexer first.")], usage(900, 100, 0, 0, SONNET)));
	// From no leaf at all: fromId "root".
	sm.resetLeaf();
	sm.branchWithSummary(null, "Nothing to summarise.", undefined, true);
	sm.appendMessage(user("Fourth attempt."));
	sm.appendUsage("cache_warm", "anthropic", "claude-sonnet-4-5", usage(0, 1, 3000, 0, SONNET));
	// Back onto the first root, below its answer, with a summary of where we were.
	sm.branchWithSummary(firstAnswer, "Tried a fourth time.", undefined, false, usage(700, 50, 0, 0, HAIKU));
	sm.appendMessage(user("Keep the first parser, add tests."));
	sm.appendMessage(assistant([text("Tests added.")], usage(1300, 400, 1000, 0, SONNET)));
	sm.appendLabelChange(second, "streaming");
	sm.appendLabelChange(first, undefined);
	return sm;
}

/** /tree navigation that was never followed by a message: on reload the leaf is the file's last entry. */
function navigatedAway() {
	const sm = newSession("pi16-navigated-away");
	const q = sm.appendMessage(user("List the files."));
	const call = toolCall("toolu_11", "bash", { command: "ls" });
	sm.appendMessage(assistant([call], usage(500, 30, 0, 0, SONNET), { stopReason: "toolUse" }));
	sm.appendMessage(toolResult(call, "Cargo.toml\nsrc\n", { durationMs: 12 }));
	sm.appendMessage(assistant([text("Two entries.")], usage(560, 8, 0, 0, SONNET)));
	sm.branch(q);
	sm.appendMessage(assistant([text("Let me look.")], usage(500, 5, 0, 0, SONNET), { stopReason: "aborted" }));
	sm.appendContextEdit(q, { content: "List the files, please." });
	// The user navigates back to the first answer and quits: branch() writes nothing.
	sm.branch(q);
	return sm;
}

/** A default (UUIDv7) session id, and entry ids that are full UUIDs (generateId's fallback). */
function fullUuids() {
	const sm = newSession(undefined);
	sm.appendMessage(user("Hello."));
	random.repeat = "0f1e2d3c-4b5a-4978-8877-665544332211";
	sm.appendMessage(assistant([text("Hi.")], usage(20, 3, 0, 0, SONNET)));
	// Every randomUUID() now collides with the id above: Pi falls back to the full UUID.
	const full = sm.appendMessage(user("How are you?"));
	random.repeat = undefined;
	sm.appendMessage(assistant([text("Fine.")], usage(30, 2, 0, 0, SONNET), { responseModel: "claude-sonnet-4-5" }));
	sm.appendLabelChange(full, "uuid");
	sm.appendUsage("cache_warm", "anthropic", "claude-sonnet-4-5", usage(0, 1, 50, 0, SONNET));
	return sm;
}

function main(outDir) {
	rmSync(WORK_DIR, { recursive: true, force: true });
	mkdirSync(WORK_DIR, { recursive: true });
	const written = [];
	const save = (name, file) => {
		const to = join(outDir, `pi16-${name}.jsonl`);
		copyFileSync(file, to);
		written.push(to);
	};
	save("usage-sources", usageSources().getSessionFile());
	const tree = roots();
	save("roots", tree.getSessionFile());
	// Pi's /fork of the roots session at its current leaf: a new file, with parentSession.
	save("branched-session", tree.createBranchedSession(tree.getLeafId()));
	save("navigated-away", navigatedAway().getSessionFile());
	save("full-uuid", fullUuids().getSessionFile());
	if (readdirSync(WORK_DIR).length !== written.length) throw new Error("unexpected files in the work dir");
	for (const f of written) process.stdout.write(`${f}\n`);
}

if (process.argv.length !== 3) {
	process.stderr.write("usage: node write-fixtures.mjs OUT_DIR\n");
	process.exit(2);
}
main(process.argv[2]);
