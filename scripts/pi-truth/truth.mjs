// The truth for pi-compactions: sessions written by Pi 1.6.0's real AgentSession, driven by
// pi-ai's faux provider with scripted replies, and for each compaction entry the reason Pi's
// own `compaction_start` event gave. See README.md for how to run it and what it writes.
//
// Determinism: ids come from a counter (crypto.randomUUID is replaced before Pi loads) and the
// clock is a counter too (Date.now and `new Date()` advance one millisecond a call from a fixed
// instant), so a run writes the same bytes every time.

import { createRequire, syncBuiltinESMExports } from "node:module";
import * as fs from "node:fs";
import * as path from "node:path";

const require = createRequire(import.meta.url);

// ---------------------------------------------------------------------------------------------
// A deterministic clock and deterministic ids, installed before Pi is imported.
// ---------------------------------------------------------------------------------------------
const RealDate = Date;
let clock = RealDate.UTC(2026, 10, 20, 9, 0, 0);
const tick = () => ++clock;
class FixedDate extends RealDate {
	constructor(...args) {
		if (args.length === 0) super(tick());
		else super(...args);
	}
	static now() {
		return tick();
	}
}
globalThis.Date = FixedDate;
performance.now = () => clock - RealDate.UTC(2026, 10, 20, 9, 0, 0);
let idCounter = 0;
const crypto = require("node:crypto");
crypto.randomUUID = () => {
	idCounter++;
	const hex = idCounter.toString(16).padStart(8, "0");
	return `${hex}-0000-4000-8000-${hex.padStart(12, "0")}`;
};
// `--pi 0.73.1` (anywhere in the arguments) drives Pi 0.73.1 instead (`@mariozechner/*`
// 0.73.1, installed in ../pi-truth-073): the scenarios, the held-out set and its twins.
const PI_AT = process.argv.indexOf("--pi");
const PI073 = PI_AT !== -1;
if (PI073) {
	if (process.argv[PI_AT + 1] !== "0.73.1") throw new Error("usage: --pi 0.73.1 (the one other Pi this script drives)");
	process.argv.splice(PI_AT, 2);
}
// Modes: `truth.mjs OUT` writes the hand-written scenarios; `truth.mjs --heldout SEED COUNT OUT`
// writes COUNT randomized sessions made from SEED (heldout.mjs), a held-out truth.
// `truth.mjs --twins SEED COUNT OUT` makes the same sessions as --heldout and, for each of
// their compactions, tries twins (twins.mjs): sessions Pi writes the same (up to ids and
// times) whose compaction has another reason.
const TWINS = process.argv[2] === "--twins";
const HELDOUT = process.argv[2] === "--heldout" || TWINS;
const HELDOUT_SEED = HELDOUT ? Number(process.argv[3]) : 0;
const HELDOUT_COUNT = HELDOUT ? Number(process.argv[4]) : 0;
if (HELDOUT && !(Number.isInteger(HELDOUT_SEED) && HELDOUT_SEED > 0 && Number.isInteger(HELDOUT_COUNT) && HELDOUT_COUNT > 0))
	throw new Error("usage: truth.mjs --heldout|--twins SEED COUNT OUT (SEED and COUNT positive integers)");
let randomState = HELDOUT ? HELDOUT_SEED : 42;
Math.random = () => {
	// xorshift32: only scheduling details (chunk sizes) use it
	randomState ^= randomState << 13;
	randomState ^= randomState >>> 17;
	randomState ^= randomState << 5;
	return (randomState >>> 0) / 4294967296;
};
syncBuiltinESMExports();

// Pi 0.73.1's packages are loaded from their own folder by path (their names differ too).
const PI073_PACKAGES = new URL("../pi-truth-073/node_modules/@mariozechner/", import.meta.url);
const ai = PI073 ? await import(new URL("pi-ai/dist/index.js", PI073_PACKAGES)) : await import("@earendil-works/pi-ai");
const agent = PI073
	? await import(new URL("pi-coding-agent/dist/index.js", PI073_PACKAGES))
	: await import("@earendil-works/pi-coding-agent");
const { fauxAssistantMessage, fauxText, fauxToolCall, isContextOverflow, getOverflowPatterns } = ai;
const { createAgentSession, createExtensionRuntime, SessionManager, SettingsManager } = agent;

const PI_VERSION = JSON.parse(
	fs.readFileSync(
		PI073
			? new URL("pi-coding-agent/package.json", PI073_PACKAGES)
			: new URL("./node_modules/@earendil-works/pi-coding-agent/package.json", import.meta.url),
		"utf8",
	),
).version;
if (PI073 && PI_VERSION !== "0.73.1") throw new Error(`../pi-truth-073 holds Pi ${PI_VERSION}, not 0.73.1`);
const OUT = path.resolve((HELDOUT ? process.argv[5] : process.argv[2]) ?? "out");
const WORK = "/tmp/pi-truth-work";
fs.rmSync(WORK, { recursive: true, force: true });
fs.mkdirSync(path.join(WORK, "agent"), { recursive: true });
fs.mkdirSync(path.join(WORK, "sessions"), { recursive: true });
fs.mkdirSync(path.join(WORK, "project"), { recursive: true });
fs.mkdirSync(OUT, { recursive: true });

// The models: one large and one small window. models.json gives our tool the same windows.
// The held-out sessions use other models (windows and output limits) than the hand-written ones.
const MODELS = HELDOUT
	? [
			{ id: "gen-wide", contextWindow: 40000, maxTokens: 4096 },
			{ id: "gen-mid", contextWindow: 30000, maxTokens: 3000 },
			{ id: "gen-narrow", contextWindow: 22000, maxTokens: 2048 },
		]
	: [
			{ id: "faux-large", contextWindow: 24000, maxTokens: 4096 },
			{ id: "faux-small", contextWindow: 20000, maxTokens: 4096 },
		];
fs.writeFileSync(
	path.join(OUT, "models.json"),
	`${JSON.stringify({ providers: { faux: { models: MODELS.map(({ id, contextWindow }) => ({ id, contextWindow })) } } }, null, 2)}\n`,
);

// Files the read tool reads: each about 3,000 tokens by Pi's chars/4 estimate.
const bigText = (seed) => {
	const lines = [];
	for (let i = 0; i < 250; i++) lines.push(`${seed} line ${i}: lorem ipsum dolor sit amet`.padEnd(47, "."));
	return lines.join("\n");
};
for (const name of ["a", "b", "c", "d", "e", "f"]) fs.writeFileSync(path.join(WORK, "project", `${name}.txt`), bigText(name));
// The held-out sessions' files: 400 to 4,000 tokens.
const sizedText = (seed, tokens) => {
	const lines = [];
	for (let i = 0; i < Math.ceil((tokens * 4) / 48); i++) lines.push(`${seed} row ${i}: sed do eiusmod tempor`.padEnd(47, "-"));
	return lines.join("\n");
};
const HELDOUT_FILES = [400, 900, 1500, 2200, 3000, 4000].map((tokens, i) => ({ name: `g${i}.txt`, tokens }));
if (HELDOUT) for (const f of HELDOUT_FILES) fs.writeFileSync(path.join(WORK, "project", f.name), sizedText(f.name, f.tokens));

/** A user prompt of about `tokens` tokens by Pi's chars/4 estimate. */
const words = (tag, tokens) => `${tag}: ${"please remember this. ".repeat(Math.ceil((tokens * 4) / 22))}`;

const resourceLoader = {
	getExtensions: () => ({ extensions: [], errors: [], runtime: createExtensionRuntime() }),
	getSkills: () => ({ skills: [], diagnostics: [] }),
	getPrompts: () => ({ prompts: [], diagnostics: [] }),
	getThemes: () => ({ themes: [], diagnostics: [] }),
	getAgentsFiles: () => ({ agentsFiles: [] }),
	getSystemPrompt: () => "You are a scripted assistant for pi-jsonl's truth sessions.",
	getSystemPromptSource: () => undefined,
	getAppendSystemPrompt: () => [],
	getAppendSystemPromptSources: () => [],
	extendResources: () => {},
	reload: async () => {},
};

const truth = [];

/**
 * Runs one scenario in its own session: `script(ctx)` prompts and compacts; every compaction
 * entry is recorded with the reason of the compaction_start before it.
 */
async function scenario(
	name,
	script,
	{
		autoCompaction = true,
		retry = false,
		reserveTokens = 16384,
		keepRecentTokens = 500,
		model = MODELS[0].id,
		customTools = [],
		file = name,
		dir = OUT,
	} = {},
) {
	// Scripted usage: a reply may carry `_usage`, which replaces faux's estimate (faux always
	// estimates usage from the prompt; silent and length overflow need exact numbers).
	const scriptedUsage = (streamSimple) => (model, context, options) => {
		const inner = streamSimple(model, context, options);
		const outer = ai.createAssistantMessageEventStream();
		(async () => {
			for await (const event of inner) {
				const message = event.type === "done" ? event.message : event.type === "error" ? event.error : undefined;
				if (message?._usage) {
					message.usage = message._usage;
					delete message._usage;
				}
				outer.push(event);
			}
			outer.end(await inner.result());
		})();
		return outer;
	};
	let faux;
	let runtime;
	if (PI073) {
		// Pi 0.73.1: faux registers its api in pi-ai's registry (which the session's stream
		// function asks); the key is the auth storage's, the models the registry's.
		faux = ai.registerFauxProvider({ provider: "faux", models: MODELS });
		const registered = ai.getApiProvider(faux.api);
		ai.registerApiProvider(
			{ api: faux.api, stream: scriptedUsage(registered.stream), streamSimple: scriptedUsage(registered.streamSimple) },
			`scripted-usage-${file}`,
		);
		const authStorage = agent.AuthStorage.inMemory();
		authStorage.setRuntimeApiKey("faux", "faux-key");
		runtime = { authStorage, modelRegistry: agent.ModelRegistry.inMemory(authStorage) };
	} else {
		faux = ai.fauxProvider({ provider: "faux", models: MODELS });
		const modelRuntime = await agent.ModelRuntime.create({
			authPath: path.join(WORK, "agent", "auth.json"),
			modelsPath: path.join(WORK, "agent", "models.json"),
		});
		modelRuntime.registerNativeProvider(faux.provider);
		await modelRuntime.setRuntimeApiKey("faux", "faux-key");
		modelRuntime.streamSimple = scriptedUsage(modelRuntime.streamSimple.bind(modelRuntime));
		runtime = { modelRuntime };
	}
	const settingsManager = SettingsManager.inMemory({
		compaction: { enabled: autoCompaction, reserveTokens, keepRecentTokens },
		retry: retry ? { enabled: true, maxRetries: 2, baseDelayMs: 1 } : { enabled: false },
	});
	// Pi 0.73.1's SessionManager.create takes no id; its newSession does.
	const sessionManager = PI073
		? SessionManager.create(path.join(WORK, "project"), path.join(WORK, "sessions"))
		: SessionManager.create(path.join(WORK, "project"), path.join(WORK, "sessions"), { id: `truth-${name}` });
	if (PI073) sessionManager.newSession({ id: `truth-${name}` });
	const { session } = await createAgentSession({
		cwd: path.join(WORK, "project"),
		agentDir: path.join(WORK, "agent"),
		model: faux.getModel(model),
		thinkingLevel: "off",
		...runtime,
		resourceLoader,
		tools: ["read", ...customTools.map((t) => t.name)],
		...(customTools.length > 0 ? { customTools } : {}),
		sessionManager,
		settingsManager,
	});
	// One queue of scripted replies; summarization requests (compaction, manual or automatic)
	// are answered apart, whenever Pi makes them.
	const queue = [];
	// A held-out step's replies: reply factories used in order, the last one repeated as often
	// as Pi asks (a recovery retries, auto-compaction off does not; the generator cannot know).
	let plan;
	let failSummaries = 0;
	let starved = false;
	const dispatch = (context) => {
		const last = context.messages.at(-1);
		const text = typeof last?.content === "string" ? last.content : (last?.content ?? []).map((b) => b.text ?? "").join("");
		if (text.startsWith("<conversation>") || text.startsWith("# Conversation\n")) {
			if (failSummaries > 0) {
				failSummaries--;
				return errorReply("500 internal server error");
			}
			return summary();
		}
		if (plan) return plan.replies[Math.min(plan.used++, plan.replies.length - 1)]();
		const next = queue.shift();
		if (!next) {
			// faux turns a throw into an error reply: fail the scenario at its end too.
			starved = true;
			throw new Error(`${name}: no scripted reply left`);
		}
		return next;
	};
	faux.setResponses(Array.from({ length: 10000 }, () => dispatch));
	const starts = [];
	const mapped = new Set();
	let events = 0;
	// Pi 0.73.1's overflow recovery retries from a timer (100 ms after its compaction), after
	// prompt() has returned: wait until the session has been quiet for longer than that, its
	// agent idle and its queue of events handled (a no-op for Pi 1.6.0, which awaits it).
	const settle = async () => {
		if (!PI073) return;
		for (;;) {
			const seen = events;
			await new Promise((resolve) => setTimeout(resolve, 250));
			await session.agent.waitForIdle();
			await session._agentEventQueue;
			if (events === seen) return;
		}
	};
	session.subscribe((event) => {
		events++;
		if (event.type === "compaction_start") starts.push(event.reason);
		if (event.type === "compaction_end") {
			if (!event.result && starts.length === 0) {
				// Pi gave up an overflow recovery without starting a compaction.
				console.error(`${name}: ${event.reason} recovery given up: ${event.errorMessage}`);
				return;
			}
			const reason = starts.shift();
			if (reason !== event.reason) throw new Error(`${name}: compaction_end ${event.reason} after start ${reason}`);
			if (!event.result) {
				console.error(`${name}: a ${event.reason} compaction did not finish: ${event.errorMessage ?? "aborted"}`);
				return;
			}
			const entry = sessionManager
				.getEntries()
				.filter((e) => e.type === "compaction" && !mapped.has(e.id))
				.at(-1);
			if (!entry) throw new Error(`${name}: no compaction entry for a ${reason} compaction`);
			mapped.add(entry.id);
			truth.push({
				file: `${file}.jsonl`,
				entry: entry.id,
				reason,
				pi: PI_VERSION,
				...(HELDOUT ? { reserve: reserveTokens } : {}),
				...(TWINS ? { step: ctx.step } : {}),
			});
		}
	});
	const ctx = {
		faux,
		session,
		sessionManager,
		settingsManager,
		/** Queues scripted replies, then prompts. */
		async prompt(text, ...replies) {
			queue.push(...replies);
			await session.prompt(text);
			await settle();
			if (queue.length !== 0) throw new Error(`${name}: ${queue.length} replies unused`);
		},
		async compact() {
			await session.compact();
		},
		/** A held-out step: prompts with reply factories (see `plan`); compactions may fail. */
		async run(text, replies) {
			plan = { replies, used: 0 };
			try {
				await session.prompt(text);
				await settle();
			} finally {
				plan = undefined;
			}
		},
		/** /compact that may fail ("Nothing to compact", "Already compacted"). */
		async tryCompact() {
			await session.compact().catch((e) => console.error(`${name}: /compact failed: ${e.message}`));
		},
		/** The next `n` summarization requests fail (a compaction that leaves nothing in the file). */
		failSummaries(n) {
			const before = failSummaries;
			failSummaries = n;
			return before;
		},
	};
	await script(ctx);
	await settle();
	if (starved) throw new Error(`${name}: Pi asked for a reply the scenario did not script`);
	session.dispose();
	if (PI073) {
		faux.unregister();
		ai.unregisterApiProviders(`scripted-usage-${file}`);
	}
	const target = path.join(dir, `${file}.jsonl`);
	fs.copyFileSync(sessionManager.getSessionFile(), target);
	const entries = fs
		.readFileSync(target, "utf8")
		.split("\n")
		.filter((l) => l.trim())
		.map((l) => JSON.parse(l));
	const compactions = entries.filter((e) => e.type === "compaction").length;
	const recorded = truth.filter((t) => t.file === `${file}.jsonl`).length;
	if (compactions !== recorded) throw new Error(`${name}: ${compactions} compactions, ${recorded} reasons`);
	if (dir === OUT) console.error(`${name}: ${compactions} compactions`);
}

// Pi's threshold for the 24,000-token scenario model: the window less the default reserve.
const THRESHOLD = 24000 - 16384;
// The context of the session's last reply since the last compaction (0 when there is none).
const lastContext = (c) => {
	const branch = c.sessionManager.getBranch();
	const since = branch.slice(branch.findLastIndex((e) => e.type === "compaction") + 1);
	const a = since.filter((e) => e.type === "message" && e.message.role === "assistant").at(-1);
	return a ? a.message.usage.totalTokens : 0;
};
const reply = (text) => fauxAssistantMessage(text);
const summary = () => fauxAssistantMessage("## Goal\nScripted summary.\n## Progress\n- done");
const readCall = (id, file) => fauxAssistantMessage(fauxToolCall("read", { path: file }, { id }), { stopReason: "toolUse" });
const errorReply = (text) =>
	Object.assign(fauxAssistantMessage([], { stopReason: "error", errorMessage: text }), {
		_usage: zeroUsage(),
	});
const zeroUsage = () => ({
	input: 0,
	output: 0,
	cacheRead: 0,
	cacheWrite: 0,
	totalTokens: 0,
	cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
});
const usage = (input, output, cacheRead = 0) => ({
	input,
	output,
	cacheRead,
	cacheWrite: 0,
	totalTokens: input + output + cacheRead,
	cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
});


// ---------------------------------------------------------------------------------------------
// The error texts of pi-ai's overflow list. Each example is taken from the comments of
// pi-ai's utils/overflow.js (or, for its generic fallbacks, is the pattern's own words); the
// script checks that every one is an overflow to pi-ai and that every pattern is covered.
// (Cerebras' body-less 400/413 counts only for provider "cerebras", which faux is not.)
// ---------------------------------------------------------------------------------------------
const OVERFLOW_TEXTS_PI16 = [
	"prompt is too long: 213462 tokens > 200000 maximum",
	'{"code":"1261","message":"Prompt exceeds max length"}',
	'413 {"error":{"type":"request_too_large","message":"Request exceeds the maximum size"}}',
	"Input is too long for requested model.",
	"Your input exceeds the context window of this model",
	"Requested token count exceeds the model's maximum context length of 131072 tokens",
	"litellm.ContextWindowExceededError: litellm.BadRequestError: Context Window exceeded for given call.",
	"The input token count (1196265) exceeds the maximum number of tokens allowed (1048575)",
	"This model's maximum prompt length is 131072 but the request contains 537812 tokens",
	"Please reduce the length of the messages or completion",
	"This endpoint's maximum context length is 131072 tokens. However, you requested about 140000 tokens",
	"Input length 140000 exceeds the maximum allowed input length of 131072 tokens.",
	"The input (140000 tokens) is longer than the model's context length (131072 tokens).",
	"prompt token count of 140000 exceeds the limit of 128000",
	"the request exceeds the available context size, try increasing it",
	"tokens to keep from the initial prompt is greater than the context length",
	"invalid params, context window exceeds limit",
	"Your request exceeded model token limit: 262144 (requested: 300000)",
	"Prompt contains 140000 tokens and 0 draft tokens, too large for model with 131072 maximum context length",
	"Prompt has 140000 tokens, but the configured context size is 131072 tokens",
	"model_context_window_exceeded",
	"prompt too long; exceeded max context length by 1200 tokens",
	"Range of input length should be [1, 129024]",
	"context_length_exceeded",
	"too many tokens",
	"token limit exceeded",
	'github-copilot API error (413): {"message":"failed to parse request","code":""}',
	"Input length (265330) exceeds model's maximum context length (262144).",
];
const asError = (errorMessage) => ({ stopReason: "error", errorMessage, provider: "faux", usage: zeroUsage() });
// Pi 0.73.1's pi-ai knows fewer texts, and one more: Cerebras' body-less 400/413 counts for any
// provider there. Its scenarios use the texts it knows (OVERFLOW_TEXTS); the others, errors
// 0.73.1 does not recover from (NOT_OVERFLOW_073), are exercised apart, and the held-out
// sessions draw from all of them (`HELDOUT_TEXTS`): Pi decides.
const CEREBRAS_073 = "400 status code (no body)";
const OVERFLOW_TEXTS = PI073
	? [...OVERFLOW_TEXTS_PI16, CEREBRAS_073].filter((t) => isContextOverflow(asError(t)))
	: OVERFLOW_TEXTS_PI16;
const NOT_OVERFLOW_073 = PI073 ? OVERFLOW_TEXTS_PI16.filter((t) => !isContextOverflow(asError(t))) : [];
const HELDOUT_TEXTS = [...OVERFLOW_TEXTS, ...NOT_OVERFLOW_073];
/** The `i`th text of the list (Pi 0.73.1's list is shorter: counted round it). */
const overflowText = (i) => OVERFLOW_TEXTS[i % OVERFLOW_TEXTS.length];
{
	for (const t of OVERFLOW_TEXTS) if (!isContextOverflow(asError(t))) throw new Error(`not an overflow to pi-ai: ${t}`);
	for (const p of getOverflowPatterns())
		if (!OVERFLOW_TEXTS.some((t) => p.test(t))) throw new Error(`no example for overflow pattern ${p}`);
}

// ---------------------------------------------------------------------------------------------
// The scenarios. Windows: faux-large 24000, faux-small 20000; reserve 16384 (Pi's default), so
// threshold compaction fires above 7616 tokens on faux-large and 3616 on faux-small.
// ---------------------------------------------------------------------------------------------

if (TWINS) {
	const { twins } = await import("./twins.mjs");
	const found = await twins({
		seed: HELDOUT_SEED,
		count: HELDOUT_COUNT,
		out: OUT,
		work: path.join(WORK, "twins"),
		truth,
		random: { get: () => randomState, set: (s) => (randomState = s) },
		generator: { scenario, models: MODELS, files: HELDOUT_FILES, words, replies: { reply, readCall, errorReply, usage, fauxAssistantMessage }, overflowTexts: HELDOUT_TEXTS },
	});
	for (const t of found) console.log(JSON.stringify(t));
} else if (HELDOUT) {
	const { heldout } = await import("./heldout.mjs");
	await heldout({ seed: HELDOUT_SEED, count: HELDOUT_COUNT, scenario, models: MODELS, files: HELDOUT_FILES, words, replies: { reply, readCall, errorReply, usage, fauxAssistantMessage }, overflowTexts: HELDOUT_TEXTS });
} else {
	// Threshold after a reply (agent_end), several times in one session.
	await scenario("threshold-idle", async (c) => {
		for (let i = 0; i < 9; i++) await c.prompt(words(`turn ${i}`, 2000), reply(`noted ${i}`));
	});

	// Threshold in the middle of a run: after tool results, before the next reply.
	await scenario("threshold-midrun", async (c) => {
		await c.prompt(words("read them", 1500), readCall("call-a", "a.txt"), readCall("call-b", "b.txt"), readCall("call-c", "c.txt"), reply("read three"));
		await c.prompt(words("more", 500), readCall("call-d", "d.txt"), readCall("call-e", "e.txt"), readCall("call-f", "f.txt"), reply("read three more"));
	});

	// Overflow recovery: an error reply with each overflow text, compacted and retried.
	for (let k = 0; k < OVERFLOW_TEXTS.length; k += 7) {
		const texts = OVERFLOW_TEXTS.slice(k, k + 7);
		await scenario(`overflow-errors-${k / 7 + 1}`, async (c) => {
			await c.prompt(words("start", 1200), reply("started"));
			for (const [i, t] of texts.entries()) {
				await c.prompt(words(`step ${i}`, 600), errorReply(t), reply(`recovered ${i}`));
			}
		});
	}

	// Silent overflow: a stop reply whose input + cacheRead is over the window (compacted, kept).
	await scenario("overflow-silent", async (c) => {
		await c.prompt(words("start", 1500), reply("started"));
		await c.prompt(words("big", 1500), Object.assign(reply("accepted silently"), { _usage: usage(24500, 4) }));
		await c.prompt(words("again", 1500), reply("again"));
		await c.prompt(words("cached", 1500), Object.assign(reply("cached silently"), { _usage: usage(3000, 4, 21500) }));
		await c.prompt(words("after", 500), reply("after"));
	});

	// (Pi 0.73.1 does not recover from a truncated reply: no retry is scripted for it there.)
	// Length overflow: a length reply with output 0 and the window's input; and a recoverable
	// truncated reply (output below maxTokens). Both are compacted and retried. A length reply at
	// maxTokens is not recoverable: its context decides the threshold.
	await scenario("overflow-length", async (c) => {
		await c.prompt(words("start", 1500), reply("started"));
		// Pi 0.73.1 compacts after the filled window (overflow) but its retry (agent.continue()
		// from the length reply left in the context) does not run: no retry is scripted there.
		await c.prompt(words("fill", 1500), Object.assign(fauxAssistantMessage([], { stopReason: "length" }), { _usage: usage(24000, 0) }), ...(PI073 ? [] : [reply("retried after length")]));
		await c.prompt(words("truncate", 1500), fauxAssistantMessage("cut short", { stopReason: "length" }), ...(PI073 ? [] : [reply("retried after truncation")]));
		await c.prompt(words("long", 1500), Object.assign(fauxAssistantMessage("long answer", { stopReason: "length" }), { _usage: usage(9000, 4096) }));
		await c.prompt(words("after", 500), reply("after"));
	});

	// Manual compaction with auto-compaction on (below the threshold).
	await scenario("manual-auto-on", async (c) => {
		await c.prompt(words("one", 2000), reply("one"));
		await c.prompt(words("two", 2000), reply("two"));
		await c.compact();
		await c.prompt(words("three", 1500), reply("three"));
		await c.compact();
		await c.prompt(words("four", 500), reply("four"));
	});

	// Manual compaction with auto-compaction off: above and below the threshold.
	await scenario(
		"manual-auto-off",
		async (c) => {
			for (let i = 0; i < 6; i++) await c.prompt(words(`turn ${i}`, 2000), reply(`noted ${i}`));
			await c.compact();
			await c.prompt(words("small", 1500), reply("small"));
			await c.compact();
			await c.prompt(words("end", 500), reply("end"));
		},
		{ autoCompaction: false },
	);

	// A switch to a model with a smaller window: threshold before the next prompt.
	await scenario("model-switch", async (c) => {
		await c.prompt(words("one", 2500), reply("one"));
		await c.prompt(words("two", 2500), reply("two"));
		await c.session.setModel(c.faux.getModel("faux-small"));
		await c.prompt(words("three", 500), reply("three on small"));
		await c.prompt(words("four", 2500), reply("four on small"));
		await c.session.setModel(c.faux.getModel("faux-large"));
		await c.prompt(words("five", 2500), reply("five on large"));
	});

	// Manual compaction right after an overflow error, auto-compaction off: no recovery signature.
	await scenario(
		"manual-after-overflow",
		async (c) => {
			await c.prompt(words("one", 2000), reply("one"));
			await c.prompt(words("two", 2000), errorReply(overflowText(0)));
			await c.compact();
			await c.prompt(words("three", 1000), reply("three"));
			await c.prompt(words("four", 2000), errorReply(overflowText(19)));
			await c.compact();
			await c.prompt(words("five", 1500), reply("five"));
			await c.prompt(words("six", 1500), Object.assign(fauxAssistantMessage([], { stopReason: "length" }), { _usage: usage(24000, 0) }));
			await c.compact();
			await c.prompt(words("seven", 500), reply("seven"));
		},
		{ autoCompaction: false },
	);

	// Auto-compaction off while the context grows past the window (faux accepts it: stop replies
	// whose input is over the window), then /compact.
	await scenario(
		"manual-auto-off-over-window",
		async (c) => {
			for (let i = 0; i < 14; i++) await c.prompt(words(`turn ${i}`, 2000), reply(`noted ${i}`));
			await c.compact();
			await c.prompt(words("end", 500), reply("end"));
		},
		{ autoCompaction: false },
	);

	// An overflow whose recovery fails (the summary request fails): the failed reply stays hidden
	// by its context_edit with no compaction; then /compact. And an overflow right after a
	// recovery: Pi gives up (one attempt), nothing is compacted.
	await scenario("recovery-failed-then-manual", async (c) => {
		await c.prompt(words("one", 1500), reply("one"));
		c.failSummaries(1);
		await c.prompt(words("two", 1500), errorReply(overflowText(4)));
		await c.compact();
		await c.prompt(words("three", 1500), reply("three"));
		await c.prompt(words("four", 1500), errorReply(overflowText(9)), errorReply(overflowText(9)));
		await c.prompt(words("five", 500), reply("five"));
	});

	// An overflow error after tool calls in the middle of a run: recovered like any other.
	await scenario("overflow-after-tools", async (c) => {
		await c.prompt(words("start", 1500), reply("started"));
		await c.prompt(words("read", 500), readCall("call-g", "a.txt"), errorReply(overflowText(22)), reply("recovered after the read"));
		await c.prompt(words("after", 500), reply("after"));
	});

	// A retryable error (retries on): Pi hides the failed reply with a context_edit and retries
	// without compacting; with the context over the threshold, the threshold check runs before
	// the retried request.
	await scenario(
		"retry-then-threshold",
		async (c) => {
			await c.prompt(words("one", 5000), reply("one"));
			await c.prompt(words("two", 3000), errorReply("503 Service Unavailable: overloaded"), reply("two after retry"));
			await c.prompt(words("three", 500), errorReply("503 Service Unavailable: overloaded"), reply("three after retry"));
		},
		{ retry: true },
	);


	// Auto-compaction shown on by a mid-run compaction, then turned off: a reply over the
	// threshold goes on uncompacted, /compact; then /compact again at the first reply over the
	// threshold, which looks like Pi's threshold check but follows the earlier sign of
	// auto-compaction off.
	await scenario("auto-off-after-automatic", async (c) => {
		await c.prompt(words("read them", 1500), readCall("call-h", "a.txt"), readCall("call-i", "b.txt"), readCall("call-j", "c.txt"), reply("read three"));
		c.settingsManager.setCompactionEnabled(false);
		let turn = 0;
		while (lastContext(c) <= THRESHOLD) await c.prompt(words(`off ${turn++}`, 2000), reply(`off ${turn}`));
		await c.prompt(words(`off ${turn++}`, 500), reply(`off ${turn}`));
		await c.compact();
		while (lastContext(c) <= THRESHOLD) await c.prompt(words(`again ${turn++}`, 2000), reply(`again ${turn}`));
		await c.compact();
		await c.prompt(words("end", 300), reply("end"));
	});

	// The case Pi's file cannot tell from its threshold check: auto-compaction off, /compact
	// right after the first reply over the threshold; and after a silent overflow that jumped
	// past the window from below the threshold.
	await scenario(
		"manual-auto-off-first-crossing",
		async (c) => {
			let turn = 0;
			while (lastContext(c) <= THRESHOLD) await c.prompt(words(`turn ${turn++}`, 2000), reply(`noted ${turn}`));
			await c.compact();
			await c.prompt(words("small", 500), reply("small"));
			await c.prompt(words("jump", 500), Object.assign(reply("accepted silently"), { _usage: usage(25000, 4) }));
			await c.compact();
			await c.prompt(words("end", 300), reply("end"));
		},
		{ autoCompaction: false },
	);

	// A tool whose result ends the run (`terminate: true`, as in Pi's structured-output
	// example): no request follows its result. Its result pushes the context over the
	// threshold, but Pi's check after the run reads the reply's usage (under it): nothing is
	// compacted, then /compact lands right after the tool result. And a run that ends so with
	// the reply itself over the threshold: Pi's check after the run compacts there.
	const finish = {
		name: "finish",
		label: "Finish",
		description: "Report the final result and end the run.",
		parameters: { type: "object", properties: {}, additionalProperties: false },
		async execute() {
			return { content: [{ type: "text", text: words("final report", 5000) }], details: {}, terminate: true };
		},
	};
	const finishCall = (id) => fauxAssistantMessage(fauxToolCall("finish", {}, { id }), { stopReason: "toolUse" });
	await scenario(
		"terminated-run",
		async (c) => {
			await c.prompt(words("one", 1500), reply("one"));
			await c.prompt(words("two", 1000), finishCall("call-k"));
			await c.compact();
			await c.prompt(words("three", 6000), finishCall("call-l"));
			await c.prompt(words("four", 300), reply("four"));
		},
		{ customTools: [finish] },
	);

	// Pi 0.73.1 only: error texts Pi 1.6.0 takes for an overflow and 0.73.1 does not. Pi 0.73.1
	// neither recovers nor retries: /compact after one is manual; an error reply after a prompt
	// that pushes the context over the threshold is compacted by the threshold check (for an
	// error reply it estimates the context from the last usage and the messages after it).
	if (PI073)
		await scenario("not-overflow-073", async (c) => {
			await c.prompt(words("start", 1500), reply("started"));
			await c.prompt(words("one", 600), errorReply(NOT_OVERFLOW_073[0]));
			await c.compact();
			await c.prompt(words("two", 600), reply("two"));
			await c.prompt(words("three", 600), errorReply(NOT_OVERFLOW_073[1]));
			await c.prompt(words("four", 9000), errorReply(NOT_OVERFLOW_073[2]));
			await c.prompt(words("five", 500), reply("five"));
		});

	// Pi 0.73.1 only: an overflow error with auto-compaction off, then auto-compaction on: Pi's
	// check before the next prompt recovers (overflow) but its retry finds the prompt's run
	// going (or ended) and does not run, so the prompt follows the compaction as after
	// /compact.
	if (PI073)
		await scenario(
			"overflow-toggled-on-073",
			async (c) => {
				await c.prompt(words("one", 1500), reply("one"));
				await c.prompt(words("two", 1500), errorReply(overflowText(0)));
				c.settingsManager.setCompactionEnabled(true);
				await c.prompt(words("three", 500), reply("three"));
				await c.prompt(words("four", 300), reply("four"));
			},
			{ autoCompaction: false },
		);

	// Auto-compaction on, shown on by a mid-run compaction; Pi's own threshold compaction after
	// a reply fails (its summary request fails, which leaves nothing in the file), then
	// /compact; the same after a silent overflow. Both look like Pi's own compactions.
	await scenario("manual-after-failed-automatic", async (c) => {
		await c.prompt(words("read them", 1500), readCall("call-m", "d.txt"), readCall("call-n", "e.txt"), readCall("call-o", "f.txt"), reply("read three"));
		let turn = 0;
		c.failSummaries(1);
		while (lastContext(c) <= THRESHOLD) await c.prompt(words(`turn ${turn++}`, 2000), reply(`noted ${turn}`));
		await c.compact();
		await c.prompt(words("small", 500), reply("small"));
		c.failSummaries(1);
		await c.prompt(words("jump", 500), Object.assign(reply("accepted silently"), { _usage: usage(25000, 4) }));
		await c.compact();
		await c.prompt(words("end", 300), reply("end"));
	});
}

for (const t of truth) console.log(JSON.stringify(t));
