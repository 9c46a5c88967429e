// The public API report: every name each package entry exports, with its signature, as text.
// `npm run api-report` rewrites docs/api-report.md; test/package/api-report.test.ts fails when
// the file and the code disagree, so a change to the public surface is always a visible diff.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const REPORT_PATH = `${ROOT}docs/api-report.md`;

/** Package entry points (package.json "exports") and the source each is built from. */
const ENTRIES: Record<string, string> = {
  'lender-streams': 'src/index.ts',
  'lender-streams/sandbox': 'src/sandbox/index.ts',
  'lender-streams/session': 'src/session.ts',
};

const FLAGS = ts.TypeFormatFlags.NoTruncation | ts.TypeFormatFlags.UseAliasDefinedOutsideCurrentScope;

function compilerOptions(): ts.CompilerOptions {
  const config = ts.readConfigFile(`${ROOT}tsconfig.json`, ts.sys.readFile);
  return ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT).options;
}

/** Our own public members: not private or protected, and not inherited from Node's classes. */
function isPublicMember(symbol: ts.Symbol): boolean {
  // _write, _read and friends are Node's stream hooks, not API.
  if (symbol.name.startsWith('#') || symbol.name.startsWith('_')) return false;
  const decls = symbol.declarations ?? [];
  if (decls.length > 0 && decls.every((d) => d.getSourceFile().fileName.includes('/node_modules/'))) return false;
  const mods = symbol.valueDeclaration ? ts.getCombinedModifierFlags(symbol.valueDeclaration) : 0;
  return (mods & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected)) === 0;
}

const printer = ts.createPrinter({ removeComments: true, newLine: ts.NewLineKind.LineFeed });

/** A node's source as one line, without its comments. */
function oneLine(node: ts.Node): string {
  return printer.printNode(ts.EmitHint.Unspecified, node, node.getSourceFile()).replace(/\s+/g, ' ');
}

function memberLines(checker: ts.TypeChecker, type: ts.Type, node: ts.Node): string[] {
  const lines: string[] = [];
  for (const member of checker.getPropertiesOfType(type).filter(isPublicMember)) {
    const optional = member.flags & ts.SymbolFlags.Optional ? '?' : '';
    const memberType = checker.getTypeOfSymbolAtLocation(member, node);
    const calls = memberType.getCallSignatures();
    if (member.flags & ts.SymbolFlags.Method && calls.length > 0) {
      for (const sig of calls) lines.push(`  ${member.name}${optional}${checker.signatureToString(sig, node, FLAGS)}`);
    } else {
      lines.push(`  ${member.name}${optional}: ${checker.typeToString(memberType, node, FLAGS)}`);
    }
  }
  return lines.sort();
}

function describe(checker: ts.TypeChecker, name: string, exported: ts.Symbol, at: ts.Node): string[] {
  const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
  const decl = symbol.declarations?.[0] ?? at;
  if (symbol.flags & ts.SymbolFlags.Class) {
    const statics = checker.getTypeOfSymbolAtLocation(symbol, decl);
    // A private constructor (LenderClient's: use login or resume) is not something users can call.
    const ctors = statics.getConstructSignatures()
      .filter((s) => !(s.declaration && ts.getCombinedModifierFlags(s.declaration as ts.Declaration) & ts.ModifierFlags.Private))
      .map((s) => `  constructor${checker.signatureToString(s, decl, FLAGS)}`);
    const staticMembers = memberLines(checker, statics, decl).filter((l) => !l.startsWith('  prototype:')).map((l) => `  static${l.slice(1)}`);
    const heritage = ts.isClassDeclaration(decl) && decl.heritageClauses ? ` ${decl.heritageClauses.map(oneLine).join(' ').trim()}` : '';
    return [`class ${name}${heritage}`, ...ctors, ...staticMembers, ...memberLines(checker, checker.getDeclaredTypeOfSymbol(symbol), decl)];
  }
  if (symbol.flags & ts.SymbolFlags.Function) {
    const type = checker.getTypeOfSymbolAtLocation(symbol, decl);
    return type.getCallSignatures().map((s) => `function ${name}${checker.signatureToString(s, decl, FLAGS)}`);
  }
  if (symbol.flags & ts.SymbolFlags.Interface) {
    return [`interface ${name}`, ...memberLines(checker, checker.getDeclaredTypeOfSymbol(symbol), decl)];
  }
  // Aliases and constants as written: a schema's inferred type spelled out would be pages long.
  if (symbol.flags & ts.SymbolFlags.TypeAlias && ts.isTypeAliasDeclaration(decl)) {
    return [`type ${name}${decl.typeParameters ? `<${decl.typeParameters.map(oneLine).join(', ')}>` : ''} = ${oneLine(decl.type)}`];
  }
  if (symbol.flags & ts.SymbolFlags.Variable) {
    const annotated = ts.isVariableDeclaration(decl) && decl.type !== undefined ? oneLine(decl.type) : undefined;
    return [`const ${name}: ${annotated ?? checker.typeToString(checker.getTypeOfSymbolAtLocation(symbol, decl), decl)}`];
  }
  return [`${name} (${ts.SymbolFlags[symbol.flags] ?? symbol.flags})`];
}

/** The report's text, generated from the sources. */
export function apiReport(): string {
  const program = ts.createProgram(Object.values(ENTRIES).map((p) => `${ROOT}${p}`), compilerOptions());
  const checker = program.getTypeChecker();
  const out = [
    '# Public API report',
    '',
    'Generated by `npm run api-report` from the sources; a test compares it with the code, so every',
    'change to what the package exports shows here. Do not edit by hand.',
  ];
  for (const [entry, path] of Object.entries(ENTRIES)) {
    const file = program.getSourceFile(`${ROOT}${path}`);
    const module = file && checker.getSymbolAtLocation(file);
    if (!file || !module) throw new Error(`cannot read the entry ${path}`);
    const exports = checker.getExportsOfModule(module).sort((a, b) => a.name.localeCompare(b.name));
    out.push('', `## ${entry}`, '', `${exports.length} names.`, '', '```ts');
    for (const exported of exports) out.push(...describe(checker, exported.name, exported, file));
    out.push('```');
  }
  return `${out.join('\n')}\n`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const text = apiReport();
  const before = (() => {
    try {
      return readFileSync(REPORT_PATH, 'utf8');
    } catch {
      return '';
    }
  })();
  writeFileSync(REPORT_PATH, text);
  console.log(before === text ? 'docs/api-report.md is up to date' : 'docs/api-report.md rewritten');
}
