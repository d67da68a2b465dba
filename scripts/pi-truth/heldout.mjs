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

export async function heldout({ seed, count, scenario, models, files, words, replies, overflowTexts }) {
	const { reply, readCall, errorReply, usage, fauxAssistantMessage } = replies;
	for (let n = 0; n < count; n++) {
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
		console.error(`${name}: ${JSON.stringify(settings)} ${steps.join(" ")}`);
		await scenario(
			name,
			async (c) => {
				let model = models.find((m) => m.id === settings.model);
				let call = 0;
				const id = () => `call-${n}-${++call}`;
				const prompt = (k) => words(`${name} step ${k}`, between(200, 2500));
				const reads = (k) => Array.from({ length: k }, () => () => readCall(id(), pick(files).name));
				const ok = (k) => () => reply(`done ${k}`);
				for (const [k, kind] of steps.entries()) {
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
								if (e.type === "tool_execution_end" && !pending) pending = c.tryCompact();
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
				}
			},
			settings,
		);
	}
}
