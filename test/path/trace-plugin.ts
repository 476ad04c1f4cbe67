import { relative } from "node:path";
import { type Plugin, parseAst } from "vite";

/**
 * A Vite plugin for the path test only: every function in src/ reports its entry and exit
 * to `globalThis.__livelinePath` (when a test set one), so the test sees which files a
 * frame's handling runs through, in order. Async functions and generators are left alone:
 * the path under test is synchronous.
 */
export function tracePlugin(srcDir: string): Plugin {
  return {
    name: "liveline-path-trace",
    enforce: "post",
    transform(code, id) {
      const file = id.split("?")[0] ?? id;
      if (!file.startsWith(srcDir) || !/\.ts$/.test(file)) return null;
      return { code: instrument(code, relative(srcDir, file)), map: null };
    },
  };
}

interface Node {
  type: string;
  start: number;
  end: number;
  [key: string]: unknown;
}

function isNode(value: unknown): value is Node {
  return typeof value === "object" && value !== null && typeof (value as Node).type === "string";
}

const FUNCTIONS = new Set(["FunctionDeclaration", "FunctionExpression", "ArrowFunctionExpression"]);

/** Inserts enter/exit calls around every synchronous function's body. */
export function instrument(code: string, file: string): string {
  const edits: Array<{ at: number; text: string }> = [];
  const hook = "globalThis.__livelinePath";
  const walk = (node: Node, inherited: string): void => {
    const name = nameFor(node, inherited);
    if (FUNCTIONS.has(node.type) && node.async !== true && node.generator !== true) {
      const body = node.body as Node;
      const enter = `${hook}?.enter(${JSON.stringify(file)},${JSON.stringify(name)});`;
      if (body.type === "BlockStatement") {
        edits.push({ at: body.start + 1, text: `${enter}try{` });
        edits.push({ at: body.end - 1, text: `}finally{${hook}?.exit();}` });
      } else {
        // An expression body may sit in parentheses, which its range leaves out: wrap them too.
        const arrow = code.lastIndexOf("=>", body.start) + 2;
        const opened = code.slice(arrow, body.start).split("(").length - 1;
        let end = body.end;
        for (let n = 0; n < opened; n++) end = code.indexOf(")", end) + 1;
        edits.push({ at: arrow, text: `{${enter}try{return (` });
        edits.push({ at: end, text: `);}finally{${hook}?.exit();}}` });
      }
    }
    const listener = listenerOf(node);
    for (const [key, value] of Object.entries(node)) {
      if (key === "type" || key === "start" || key === "end") continue;
      if (Array.isArray(value)) {
        for (const v of value)
          if (isNode(v)) walk(v, v === listener?.fn ? listener.name(name) : name);
      } else if (isNode(value)) walk(value, name);
    }
  };
  walk(parseAst(code) as unknown as Node, "(module)");
  // Inserted last-first, so earlier offsets stay valid; at one offset (an empty body), the
  // later edit goes in first, so the earlier one ends up before it.
  const order = new Map(edits.map((e, i) => [e, i]));
  edits.sort((a, b) => b.at - a.at || order.get(b)! - order.get(a)!);
  let out = code;
  for (const { at, text } of edits) out = out.slice(0, at) + text + out.slice(at);
  return out;
}

/** A readable name for a function: its declaration, method, property or variable name. */
function nameFor(node: Node, inherited: string): string {
  const id = (node.id ?? node.key) as Node | undefined;
  if (
    (node.type === "FunctionDeclaration" ||
      node.type === "MethodDefinition" ||
      node.type === "Property" ||
      node.type === "PropertyDefinition" ||
      node.type === "VariableDeclarator" ||
      node.type === "ClassDeclaration") &&
    id !== undefined &&
    id !== null &&
    typeof id.name === "string"
  )
    return id.name;
  return inherited;
}

/**
 * `x.addEventListener("message", fn)`: `fn`, named for its event (`open (on message)`), so a
 * listener is not taken for the function that added it.
 */
function listenerOf(node: Node): { fn: Node; name: (outer: string) => string } | null {
  if (node.type !== "CallExpression") return null;
  const callee = node.callee as Node;
  const [event, fn] = node.arguments as Node[];
  if (
    callee.type !== "MemberExpression" ||
    (callee.property as Node).name !== "addEventListener" ||
    event?.type !== "Literal" ||
    typeof event.value !== "string" ||
    fn === undefined ||
    !FUNCTIONS.has(fn.type)
  )
    return null;
  return { fn, name: (outer) => `${outer} (on ${event.value})` };
}
