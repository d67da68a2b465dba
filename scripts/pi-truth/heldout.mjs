// The held-out truth: randomized sessions, made from a seed by a generator that knows nothing
// of pi-compactions' rules. Each session draws its settings (auto-compaction on or off,
// retries, reserveTokens, keepRecentTokens, the starting model) and a run of steps (prompts,
// tool runs, overflow by error text, silently or by length, truncated and maxTokens replies,
// /compact, /compact in the middle of a tool run, model switches, a failing summary request,
// auto-compaction turned off or on). Pi decides what happens; truth.mjs records its reasons.

/** mulberry32: the generator's own stream (Math.random is faux's). */
function random(seed) {
	let a = seed >>> 0;
	return () => {
		a = (a + 0x6d2b79f5) >>> 0;
		let t = a;
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
}

/** The steps and their weights. */
const STEPS = [
	["plain", 28],
	["tools", 18],
	["overflowError", 9],
	["silent", 4],
	["lengthFull", 4],
	["truncated", 3],
	["lengthMax", 3],
	["manual", 9],
	["manualMidRun", 3],
	["switch", 5],
	["retryable", 4],
	["failSummary", 3],
	["toggle", 2],
];

/** The steps that prompt (a run), after which or before which Pi may compact on its own. */
export const RUN_STEPS = new Set(["plain", "tools", "overflowError", "silent", "lengthFull", "truncated", "lengthMax", "manualMidRun", "retryable"]);

/**
 * Makes the sessions `from` to `from + count - 1` of SEED. `twin` (truth.mjs --twins) changes
 * what the user did at one point, nothing Pi writes: `after` turns auto-compaction off for
 * the run of step `k` and runs /compact after it; `before` runs /compact before step `k`;
 * `auto` turns auto-compaction on (and lets summaries succeed) for the run of step `k`, after
 * Pi's check before its prompt (`atEnd`: from the run's end, for Pi's check after it);
 * `abort` presses Esc instead of /compact in step `k` (a /compact while tools run). The
 * /compacts of the steps in `skip` are left out; with `pre`, auto-compaction is on for Pi's
 * check before the prompt of that step. Each session's steps
 * are reported to `onSteps` (truth.mjs records each compaction's step through `ctx.step`).
 */
export async function heldout({ seed, count, from = 0, twin, onSteps, file, dir, scenario, models, files, words, replies, overflowTexts }) {
	const { reply, readCall, errorReply, usage, fauxAssistantMessage } = replies;
	for (let n = from; n < from + count; n++) {
		const rnd = random(seed * 100003 + n);
		const pick = (xs) => xs[Math.floor(rnd() * xs.length)];
		const between = (lo, hi) => lo + Math.floor(rnd() * (hi - lo + 1));
		const weighted = () => {
			const total = STEPS.reduce((s, [, w]) => s + w, 0);
			let r = rnd() * total;
			for (const [kind, w] of STEPS) if ((r -= w) < 0) return kind;
			return STEPS[0][0];
		};
		const settings = {
			autoCompaction: rnd() < 0.7,
			retry: rnd() < 0.3,
			reserveTokens: pick([16384, 16384, 12000, 8000, 4000]),
			keepRecentTokens: pick([400, 800, 1500]),
			model: pick(models).id,
		};
		const steps = Array.from({ length: between(8, 18) }, weighted);
		const name = `heldout-${seed}-${String(n).padStart(3, "0")}`;
		if (!twin) console.error(`${name}: ${JSON.stringify(settings)} ${steps.join(" ")}`);
		onSteps?.(steps);
		await scenario(
			name,
			async (c) => {
				let model = models.find((m) => m.id === settings.model);
				let call = 0;
				const id = () => `call-${n}-${++call}`;
				const prompt = (k) => words(`${name} step ${k}`, between(200, 2500));
				const reads = (k) => Array.from({ length: k }, () => () => readCall(id(), pick(files).name));
				const ok = (k) => () => reply(`done ${k}`);
				// Twin `abort`: Esc instead of /compact while the tools run.
				let abortInstead = false;
				const step = async (k, kind) => {
					switch (kind) {
						case "plain":
							await c.run(prompt(k), [ok(k)]);
							break;
						case "tools": {
							// Sometimes the reply after the tools is an overflow error.
							const end = rnd() < 0.2 ? [() => errorReply(pick(overflowTexts)), ok(k)] : [ok(k)];
							await c.run(prompt(k), [...reads(between(1, 3)), ...end]);
							break;
						}
						case "overflowError":
							await c.run(prompt(k), [() => errorReply(pick(overflowTexts)), ok(k)]);
							break;
						case "silent": {
							const over = model.contextWindow + between(1, 3000);
							const cached = rnd() < 0.5 ? between(0, over) : 0;
							await c.run(prompt(k), [() => Object.assign(reply(`silent ${k}`), { _usage: usage(over - cached, between(1, 50), cached) })]);
							break;
						}
						case "lengthFull": {
							const input = Math.ceil(model.contextWindow * 0.99) + between(0, model.contextWindow / 100);
							await c.run(prompt(k), [
								() => Object.assign(fauxAssistantMessage([], { stopReason: "length" }), { _usage: usage(input, 0) }),
								ok(k),
							]);
							break;
						}
						case "truncated":
							await c.run(prompt(k), [() => fauxAssistantMessage(`cut ${k}`, { stopReason: "length" }), ok(k)]);
							break;
						case "lengthMax": {
							const input = between(Math.floor(model.contextWindow / 4), model.contextWindow - model.maxTokens);
							await c.run(prompt(k), [
								() => Object.assign(fauxAssistantMessage(`long ${k}`, { stopReason: "length" }), { _usage: usage(input, model.maxTokens) }),
							]);
							break;
						}
						case "manual":
							await c.tryCompact();
							break;
						case "manualMidRun": {
							// /compact while the tools run: Pi aborts the run, then compacts.
							let pending;
							const off = c.session.subscribe((e) => {
								if (e.type === "tool_execution_end" && !pending) pending = abortInstead ? c.session.abort() : c.tryCompact();
							});
							await c.run(prompt(k), [...reads(3), ok(k)]);
							off();
							await pending;
							break;
						}
						case "switch": {
							model = pick(models.filter((m) => m.id !== model.id));
							await c.session.setModel(c.faux.getModel(model.id));
							break;
						}
						case "retryable":
							await c.run(prompt(k), [() => errorReply("503 Service Unavailable: overloaded"), ok(k)]);
							break;
						case "failSummary":
							c.failSummaries(1);
							break;
						case "toggle":
							c.settingsManager.setCompactionEnabled(!c.settingsManager.getCompactionEnabled());
							break;
					}
				};
				// Auto-compaction as `on` from the start of the next run (after Pi's check before
				// the prompt), or from its `agent_end` (Pi's check after the run only), to its end;
				// then as before.
				const autoDuringRun = (on, body, from = "agent_start") => async () => {
					const enabled = c.settingsManager.getCompactionEnabled();
					const off = c.session.subscribe((e) => {
						if (e.type === from) c.settingsManager.setCompactionEnabled(on);
					});
					const failing = on ? c.failSummaries(0) : 0;
					try {
						await body();
					} finally {
						off();
						// Pi's own attempt at the end of the run (auto-compaction on) spent a failing summary.
						if (on) c.failSummaries(enabled ? 0 : failing);
						c.settingsManager.setCompactionEnabled(enabled);
					}
				};
				// Auto-compaction on for Pi's check before the next prompt only.
				const autoBeforePrompt = (body) => async () => {
					const enabled = c.settingsManager.getCompactionEnabled();
					c.settingsManager.setCompactionEnabled(true);
					// The /compact this replaces succeeded; a failing summary left for later stays.
					const failing = c.failSummaries(0);
					const off = c.session.subscribe((e) => {
						if (e.type !== "agent_start") return;
						c.settingsManager.setCompactionEnabled(enabled);
						c.failSummaries(failing);
					});
					try {
						await body();
					} finally {
						off();
						c.settingsManager.setCompactionEnabled(enabled);
					}
				};
				for (const [k, kind] of steps.entries()) {
					c.step = k;
					const run = () => step(k, kind);
					if (twin?.skip?.includes(k)) continue;
					if (twin?.pre === k) await autoBeforePrompt(run)();
					else if (twin?.k !== k) await run();
					else if (twin.kind === "before") {
						await c.tryCompact();
						await run();
					} else if (twin.kind === "after") {
						await autoDuringRun(false, run)();
						// Pi's compaction at the end of the run succeeded: no failing summary was left.
						c.failSummaries(0);
						await c.tryCompact();
					} else if (twin.kind === "auto") await autoDuringRun(true, run)();
					else if (twin.kind === "atEnd") await autoDuringRun(true, run, "agent_end")();
					else if (twin.kind === "abort") {
						abortInstead = true;
						await run();
						abortInstead = false;
					}
				}
			},
			{ ...settings, ...(file ? { file } : {}), ...(dir ? { dir } : {}) },
		);
	}
}
