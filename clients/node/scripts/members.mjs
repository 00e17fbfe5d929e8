// @ts-check
/**
 * The member names the hand-written client declares, read from the package's own source with the
 * TypeScript parser, so that the generator (generate.mjs) never emits a wrapper that shadows one
 * and no list of them has to be kept by hand. A build tool, like generate.mjs: nothing under src/
 * imports it. It parses but never type-checks: the committed src/generated.ts may be stale when
 * it runs, and the names are all in the syntax.
 */

import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";

export const CLIENT_CLASS = "PromptdClient";
// The generator's own output: its members are the wrappers themselves.
export const GENERATED_FILE = "generated.ts";

/**
 * Every member name of class `className` and of the base classes it extends that are declared in
 * `srcDir`'s own hand-written files (every .ts file under it but `skip`, given relative to it):
 * methods, properties, accessors, parameter properties, private ones (`#name` as written), and
 * static ones. Sorted, each once.
 * @param {string} srcDir
 * @param {{className?: string, skip?: readonly string[]}} [options]
 * @returns {string[]}
 */
export function clientMembers(srcDir, { className = CLIENT_CLASS, skip = [GENERATED_FILE] } = {}) {
  const root = resolve(srcDir);
  const skipped = new Set(skip.map((file) => resolve(root, file)));
  const files = parseSources(root, skipped);
  const found = [...files.values()].flatMap((file) => classes(file).filter((c) => c.name?.text === className));
  const where = `${root} (${[...skipped].map((path) => relative(root, path)).join(", ") || "nothing"} aside)`;
  if (found.length !== 1) throw new Error(`expected one class ${className} in ${where}, found ${found.length}`);

  // Every class has a `constructor` on its prototype, declared or not.
  const names = new Set(["constructor"]);
  /** @type {ts.ClassDeclaration | null} */
  let current = found[0] ?? null;
  const seen = new Set();
  while (current !== null && !seen.has(current)) {
    seen.add(current);
    for (const member of current.members) {
      for (const name of memberNames(member)) names.add(name);
    }
    current = baseClass(current, files, skipped);
  }
  return [...names].sort();
}

/** @param {string} root @param {Set<string>} skipped @returns {Map<string, ts.SourceFile>} */
function parseSources(root, skipped) {
  const files = new Map();
  const entries = readdirSync(root, { recursive: true, encoding: "utf8" }).sort();
  for (const entry of entries) {
    const path = join(root, entry);
    if (!entry.endsWith(".ts") || entry.endsWith(".d.ts") || skipped.has(path)) continue;
    files.set(path, ts.createSourceFile(path, readFileSync(path, "utf8"), ts.ScriptTarget.Latest, true, ts.ScriptKind.TS));
  }
  return files;
}

/** @param {ts.SourceFile} file @returns {ts.ClassDeclaration[]} */
function classes(file) {
  return file.statements.filter(ts.isClassDeclaration);
}

/** @param {ts.ClassElement} member @returns {string[]} */
function memberNames(member) {
  if (ts.isConstructorDeclaration(member)) {
    // `constructor(readonly connection: Connection)` declares a property too.
    return member.parameters.filter((p) => ts.isParameterPropertyDeclaration(p, member)).flatMap((p) => nameText(p.name));
  }
  // Index signatures, static blocks and stray semicolons name nothing.
  if (ts.isMethodDeclaration(member) || ts.isPropertyDeclaration(member) || ts.isGetAccessorDeclaration(member) || ts.isSetAccessorDeclaration(member)) {
    return nameText(member.name);
  }
  return [];
}

/**
 * A member's name as a wrapper could spell it. A computed name other than a literal (a symbol
 * such as `[Symbol.dispose]`) is left out: a wrapper's name is always an identifier, never a
 * symbol. A `#name` keeps its `#`: it lives apart from `name`, so a wrapper `name()` next to it
 * shadows nothing.
 * @param {ts.Node} name @returns {string[]}
 */
function nameText(name) {
  if (ts.isIdentifier(name) || ts.isPrivateIdentifier(name) || ts.isStringLiteralLike(name) || ts.isNumericLiteral(name)) return [name.text];
  if (ts.isComputedPropertyName(name) && (ts.isStringLiteralLike(name.expression) || ts.isNumericLiteral(name.expression))) return [name.expression.text];
  return [];
}

/**
 * The class `declaration` extends, when the package's hand-written files declare it (in the same
 * file, or imported from one by a relative path); null for no base, a base from a skipped file
 * (the generated wrappers), from another package or a global (`Error`).
 * @param {ts.ClassDeclaration} declaration @param {Map<string, ts.SourceFile>} files @param {Set<string>} skipped
 * @returns {ts.ClassDeclaration | null}
 */
function baseClass(declaration, files, skipped) {
  const clause = declaration.heritageClauses?.find((c) => c.token === ts.SyntaxKind.ExtendsKeyword);
  const base = clause?.types[0]?.expression;
  if (base === undefined) return null;
  const file = declaration.getSourceFile();
  const className = declaration.name?.text ?? "(anonymous class)";
  if (!ts.isIdentifier(base)) {
    // `extends mixin(Base)` or `extends ns.Base`: its members cannot be read from the syntax.
    throw new Error(`${file.fileName}: ${className} extends ${base.getText(file)}, which this reader cannot follow; name the base class directly`);
  }
  const local = classes(file).find((c) => c.name?.text === base.text);
  if (local !== undefined) return local;
  const imported = importOf(file, base.text);
  if (imported === null || !imported.module.startsWith(".")) return null;
  const path = sourcePath(dirname(file.fileName), imported.module);
  if (skipped.has(path)) return null;
  const target = files.get(path);
  const found = target === undefined ? undefined : classes(target).find((c) => c.name?.text === imported.name);
  if (found === undefined) {
    throw new Error(`${file.fileName}: ${className} extends ${base.text} from ${imported.module}, where no class ${imported.name} is declared (a re-export is not followed)`);
  }
  return found;
}

/**
 * Which module a local name is imported from, and its name there.
 * @param {ts.SourceFile} file @param {string} local @returns {{module: string, name: string} | null}
 */
function importOf(file, local) {
  for (const statement of file.statements) {
    if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier)) continue;
    const bindings = statement.importClause?.namedBindings;
    if (bindings === undefined || !ts.isNamedImports(bindings)) continue;
    for (const element of bindings.elements) {
      if (element.name.text === local) return { module: statement.moduleSpecifier.text, name: (element.propertyName ?? element.name).text };
    }
  }
  return null;
}

/**
 * `./client.js` as NodeNext writes it names `./client.ts` in the sources.
 * @param {string} dir @param {string} specifier @returns {string}
 */
function sourcePath(dir, specifier) {
  const path = resolve(dir, specifier);
  return path.endsWith(".js") ? `${path.slice(0, -3)}.ts` : path.endsWith(".ts") ? path : `${path}.ts`;
}
