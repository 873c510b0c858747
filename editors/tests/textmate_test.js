// editors/vscode's TextMate grammar against `ss`'s own lexer, tokenised by
// vscode-textmate (the engine VS Code runs) with vscode-oniguruma: for
// every token of `ss fmt --tokens FILE` (LINE COLUMN LENGTH CLASS), the
// innermost scope at its first character must be its class's: a keyword
// keyword.* or constant.language.*, a declaration word storage.*, a number
// constant.numeric.*, a string string.*, a comment comment.*; a name none
// of those. Files: every example, the spec's and the torch programs'.
//
//   node editors/tests/textmate_test.js SS_BINARY   (NODE_PATH: the two
//   packages; editors/tests/textmate_test.sh installs them)
"use strict";
const fs = require("fs");
const path = require("path");
const cp = require("child_process");
const vsctm = require("vscode-textmate");
const onig = require("vscode-oniguruma");

const root = path.resolve(__dirname, "..", "..");
const grammarPath = path.join(root, "editors", "vscode", "syntaxes",
                              "shapescript.tmLanguage.json");
const want = {
  keyword: (s) => s.startsWith("keyword.") || s.startsWith("constant.language."),
  declaration: (s) => s.startsWith("storage."),
  number: (s) => s.startsWith("constant.numeric."),
  string: (s) => s.startsWith("string."),
  comment: (s) => s.startsWith("comment."),
};
const lexical = (s) => Object.values(want).some((f) => f(s));

function files() {
  const out = [];
  for (const dir of ["examples", "examples/spmd", "conformance/spec",
                     "tests/torch/programs"]) {
    for (const f of fs.readdirSync(path.join(root, dir)).sort())
      if (f.endsWith(".ss")) out.push(path.join(root, dir, f));
  }
  return out;
}

async function main() {
  const ss = process.argv[2];
  const wasm = fs.readFileSync(
      path.join(path.dirname(require.resolve("vscode-oniguruma")), "onig.wasm"));
  await onig.loadWASM(wasm.buffer);
  const registry = new vsctm.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (p) => new onig.OnigScanner(p),
      createOnigString: (s) => new onig.OnigString(s),
    }),
    loadGrammar: async (scope) =>
      scope === "source.shapescript"
          ? vsctm.parseRawGrammar(fs.readFileSync(grammarPath, "utf8"),
                                  grammarPath)
          : null,
  });
  const grammar = await registry.loadGrammar("source.shapescript");
  let bad = 0, total = 0;
  for (const file of files()) {
    const lines = fs.readFileSync(file, "utf8").split("\n");
    const scopes = [];  // per line: [{start, end, scope}]
    let stack = vsctm.INITIAL;
    for (const line of lines) {
      const r = grammar.tokenizeLine(line, stack);
      scopes.push(r.tokens.map((t) => ({
        start: t.startIndex, end: t.endIndex,
        scope: t.scopes[t.scopes.length - 1] })));
      stack = r.ruleStack;
    }
    const oracle = cp.execFileSync(ss, ["fmt", "--tokens", file],
                                   { encoding: "utf8" });
    for (const row of oracle.split("\n").filter(Boolean)) {
      const [l, c, len, cls] = row.split(" ");
      const line = lines[Number(l) - 1];
      // The oracle counts bytes; JavaScript strings count UTF-16 units.
      const at = Buffer.from(line, "utf8").subarray(0, Number(c) - 1)
                     .toString("utf8").length;
      const tok = scopes[Number(l) - 1].find((t) => t.start <= at && at < t.end);
      const scope = tok ? tok.scope : "(none)";
      const ok = cls === "name" ? !lexical(scope) : want[cls](scope);
      total++;
      if (!ok) {
        bad++;
        const text = line.substr(at, Number(len));
        console.log(`${path.relative(root, file)}:${l}:${c}: ${cls} ` +
                    `\`${text}\` has scope ${scope}`);
      }
    }
  }
  console.log(`${files().length} files, ${total} tokens, ${bad} wrong`);
  process.exit(bad ? 1 : 0);
}

main().catch((e) => { console.error(e); process.exit(2); });
