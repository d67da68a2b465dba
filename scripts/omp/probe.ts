// How oh-my-pi splits a session file into records: its loader's parser (pi-utils'
// parseJsonlLenient, Bun.JSONL.parseChunk underneath) on small inputs that Pi reads line by
// line with JSON.parse. Prints what each input gives and how many records it calls malformed.
//
//   bun probe.ts

import { parseJsonlLenient } from "@oh-my-pi/pi-utils";

const cases: [string, string][] = [
	["text after a record", '{"a":1}x\n{"b":2}\n'],
	["two records glued", '{"a":1}{"b":2}\n{"c":3}\n'],
	["two records, a space between", '{"a":1} {"b":2}\n{"c":3}\n'],
	["a comma after a record", '{"a":1},\n{"b":2}\n'],
	["a record over two lines", '{"a":\n1}\n{"b":2}\n'],
	["a cut record", '{"a":1,"x\n{"b":2}\n'],
	["a cut last record", '{"a":1}\n{"b":'],
	["literals", 'null\n1\n"s"\n[]\n{"b":2}\n'],
	["no-break space after", '{"a":1}\u00a0\n{"b":2}\n'],
	["byte-order mark first", '\ufeff{"a":1}\n{"b":2}\n'],
	["CRLF", '{"a":1}\r\n{"b":2}\r\n'],
	["blank lines, indentation", '\n\n  {"a":1}  \n\n{"b":2}'],
	["a duplicate key", '{"a":1,"a":2}\n'],
	["NUL after", '{"a":1}\u0000\n{"b":2}\n'],
	["vertical tab after", '{"a":1}\u000b\n{"b":2}\n'],
	["vertical tab before", '\u000b{"a":1}\n{"b":2}\n'],
	["no-break space before", '\u00a0{"a":1}\n{"b":2}\n'],
];
for (const [name, text] of cases) {
	let malformed = 0;
	const values = parseJsonlLenient(text, { onMalformedRecord: () => malformed++ });
	console.log(`${name.padEnd(30)} ${JSON.stringify(values)}  malformed: ${malformed}`);
}
