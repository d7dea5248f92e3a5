#!/usr/bin/env python3
"""Fails when the Rust files under src/ import each other in a circle.

DESIGN.md promises "no file-level import cycle (checked in CI)"; this is the check. It builds
the import graph between the crate's .rs files and prints every strongly connected component
of more than one file, with the lines that make each arrow, then exits 1. Python 3 standard
library only; no compiler involved, so it reads the source the way rustc resolves names, in
the subset of Rust this crate uses:

- Nodes are the .rs files reachable from the crate roots (src/lib.rs, src/main.rs,
  src/bin/*.rs, src/bin/*/main.rs) through `mod x;` declarations: x.rs beside a x/ folder,
  x/mod.rs, and `#[path = "..."]`.
- An arrow A -> B when A names an item *defined* in B: by a `use` (grouped trees
  `use a::{b, c::{d}}`, renames, `pub use`, `pub(crate) use`, uses inside function bodies,
  paths from `crate::`, `super::`, `self::` or a name in scope), by a qualified path in code
  (`crate::x::y::Z`, `super::m::f()`, `m::Z` where `m` is a module in scope), or by a name
  that a module-level glob import (`use x::*;`) brings in.
- Re-exports are followed: a path that reaches an item through a module that only re-exports
  it (`pub use x::Y` in a mod.rs, `crate::Error` through lib.rs) points at the file that
  defines `Y`, never at the re-exporting file. A re-export itself (`pub use`, `pub(crate)
  use`, ...) is an arrow from its own file only when that file's code also uses the name: a
  mod.rs that re-exports its children's types does not depend on them by doing so.
- Not arrows: `mod x;` declarations, paths that name a module itself, names that resolve to
  nothing here (other crates, macros, generic parameters), comments, strings, attributes,
  and anything compiled only for tests: items under `#[cfg(test)]` (or `cfg(doctest)`,
  `cfg(all(test, ...))`), such as `#[cfg(test)] mod tests { ... }` and `#[cfg(test)] mod x;`.
- Paths into an item go no further than the item: `crate::x::Kind::Variant` and
  `crate::x::Type::method` point at the file defining `Kind` / `Type`.

    scripts/import_cycles.py [SRC_DIR]    # default: src/ next to this script's folder
    scripts/import_cycles.py --self-test  # the check's own tests (a tree with known cycles)
"""

import io
import os
import re
import sys
import tempfile
import textwrap
import unittest

KEYWORDS_WITH_PATHS = {"crate", "super", "self", "$crate"}
ITEM_KINDS = {"fn", "struct", "enum", "union", "trait", "type", "const", "static"}
# Tokens that never start a path segment.
NOT_NAMES = {
    "as", "async", "await", "break", "continue", "dyn", "else", "enum", "extern", "false",
    "fn", "for", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub",
    "ref", "return", "static", "struct", "trait", "true", "type", "unsafe", "use", "where",
    "while", "Self",
}


# ----------------------------------------------------------------------------------------
# Lexing: identifiers, `::`, single punctuation; comments and literals dropped or opaque.
# ----------------------------------------------------------------------------------------

class Tok:
    __slots__ = ("kind", "text", "line")

    def __init__(self, kind, text, line):
        self.kind, self.text, self.line = kind, text, line

    def __repr__(self):
        return f"{self.kind}:{self.text}@{self.line}"


IDENT_START = re.compile(r"[A-Za-z_]")
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
RAW_STRING = re.compile(r'(?:b|c)?r(#*)"')
NUMBER = re.compile(r"[0-9][0-9A-Za-z_]*(?:\.[0-9][0-9A-Za-z_]*)?")


def lex(src):
    toks = []
    i, n, line = 0, len(src), 1
    while i < n:
        c = src[i]
        if c == "\n":
            line += 1
            i += 1
        elif c.isspace():
            i += 1
        elif src.startswith("//", i):
            j = src.find("\n", i)
            i = n if j < 0 else j
        elif src.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if src.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif src.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            line += src.count("\n", i, j)
            i = j
        elif (m := RAW_STRING.match(src, i)) and (c in "bcr"):
            close = '"' + m.group(1)
            j = src.find(close, m.end())
            j = n if j < 0 else j + len(close)
            toks.append(Tok("lit", "", line))
            line += src.count("\n", i, j)
            i = j
        elif c == '"' or (c in "bc" and src.startswith('"', i + 1)):
            j = i + (1 if c == '"' else 2)
            while j < n and src[j] != '"':
                j += 2 if src[j] == "\\" else 1
            toks.append(Tok("lit", src[i + (1 if c == '"' else 2) : j], line))
            line += src.count("\n", i, j + 1)
            i = j + 1
        elif c == "'" or (c == "b" and src.startswith("'", i + 1)):
            q = i if c == "'" else i + 1
            if q + 1 < n and src[q + 1] == "\\":  # '\n', '\'', '\u{..}'
                j = q + 2
                while j < n and src[j] != "'":
                    j += 2 if src[j] == "\\" else 1
                toks.append(Tok("lit", "", line))
                i = j + 1
            elif q + 2 < n and src[q + 2] == "'":  # 'a'
                toks.append(Tok("lit", "", line))
                i = q + 3
            else:  # a lifetime or label
                m = IDENT.match(src, q + 1)
                i = m.end() if m else q + 1
                toks.append(Tok("lifetime", "", line))
        elif c == "$" and src.startswith("crate", i + 1):
            toks.append(Tok("ident", "$crate", line))
            i += 6
        elif src.startswith("r#", i) and i + 2 < n and IDENT_START.match(src[i + 2]):
            m = IDENT.match(src, i + 2)
            toks.append(Tok("ident", m.group(), line))
            i = m.end()
        elif IDENT_START.match(c):
            m = IDENT.match(src, i)
            toks.append(Tok("ident", m.group(), line))
            i = m.end()
        elif c.isdigit():
            m = NUMBER.match(src, i)
            toks.append(Tok("lit", "", line))
            i = m.end()
        elif src.startswith("::", i):
            toks.append(Tok("punct", "::", line))
            i += 2
        else:
            toks.append(Tok("punct", c, line))
            i += 1
    return toks


def match_brackets(toks):
    """Index of the closing bracket for every opening (), [], {} (unbalanced: to the end)."""
    pairs, stack = {}, []
    closing = {")": "(", "]": "[", "}": "{"}
    for k, t in enumerate(toks):
        if t.kind != "punct":
            continue
        if t.text in "([{":
            stack.append(k)
        elif t.text in closing:
            while stack and toks[stack[-1]].text != closing[t.text]:
                pairs[stack.pop()] = k
            if stack:
                pairs[stack.pop()] = k
    for k in stack:
        pairs[k] = len(toks)
    return pairs


# ----------------------------------------------------------------------------------------
# The module tree: definitions, imports and references of every module.
# ----------------------------------------------------------------------------------------

class Module:
    def __init__(self, name, file, parent):
        self.name, self.file, self.parent = name, file, parent
        self.children = {}  # name -> Module
        self.items = set()  # names of items defined here
        self.imports = {}  # name -> [path], from module-level `use`
        self.local_imports = {}  # name -> [path], from `use` inside function bodies
        self.globs = []  # [path] of module-level `use path::*`
        self.inline = False  # `mod name { .. }` inside its parent's file

    def __repr__(self):
        names, m = [], self
        while m:
            names.append(m.name)
            m = m.parent
        return "::".join(reversed(names))


class Ref:
    """A path some code names, to resolve once every module is read."""

    __slots__ = ("module", "path", "line", "what", "reexport")

    def __init__(self, module, path, line, what, reexport=None):
        self.module, self.path, self.line, self.what = module, path, line, what
        self.reexport = reexport  # the name a re-export binds


def is_test_cfg(attr):
    """True for `cfg(test)`, `cfg(doctest)` and `cfg(all(.., test, ..))`: test-only code."""
    text = "".join(t.text if t.kind != "lit" else '""' for t in attr)
    if not text.startswith("cfg("):
        return False
    pred = text[4:-1]

    def test_only(p):
        if p in ("test", "doctest"):
            return True
        if p.startswith("all(") and p.endswith(")"):
            return any(test_only(a) for a in split_args(p[4:-1]))
        return False

    return test_only(pred)


def split_args(s):
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
            continue
        depth += ch == "("
        depth -= ch == ")"
        cur += ch
    if cur:
        out.append(cur)
    return out


class Crate:
    def __init__(self, root_file):
        self.files = []  # every .rs file of the crate
        self.refs = {}  # file -> [Ref]
        self.file_idents = {}  # file -> set of identifiers in non-test code
        self.file_modules = {}  # file -> [Module] (file-level and inline ones)
        self.root = Module("crate", root_file, None)
        self.read_file(root_file, self.root, mod_rs=True)

    # -- reading files -------------------------------------------------------------------

    def read_file(self, path, module, mod_rs):
        with open(path, encoding="utf-8") as f:
            src = f.read()
        self.files.append(path)
        self.refs.setdefault(path, [])
        self.file_idents.setdefault(path, set())
        toks = lex(src)
        reader = FileReader(self, path, src, toks, mod_rs)
        reader.items(0, len(toks), module)

    def child_file(self, parent_file, parent_mod_rs, module_chain, name, explicit):
        """The file of `mod name;` declared in `parent_file` (inline modules in `module_chain`)."""
        base = os.path.dirname(parent_file)
        if explicit is not None:
            # #[path] is relative to the declaring file's folder (plus inline module folders).
            return os.path.normpath(os.path.join(base, *module_chain, explicit))
        if not parent_mod_rs:
            stem = os.path.splitext(os.path.basename(parent_file))[0]
            base = os.path.join(base, stem)
        base = os.path.join(base, *module_chain)
        for cand in (os.path.join(base, name + ".rs"), os.path.join(base, name, "mod.rs")):
            if os.path.isfile(cand):
                return cand
        return None

    # -- resolving -----------------------------------------------------------------------

    def lookup(self, module, name, seen):
        """What `name` means in `module`: (child module or None, set of defining files)."""
        key = (id(module), name)
        if key in seen:
            return None, set()
        seen = seen | {key}
        found_mod, files = module.children.get(name), set()
        if name in module.items:
            files.add(module.file)
        for path in module.imports.get(name, []) + module.local_imports.get(name, []):
            m, f = self.resolve(module, path, seen)
            found_mod = found_mod or m
            files |= f
        if found_mod is None and not files:
            for glob in module.globs:
                g, _ = self.resolve(module, glob, seen)
                if g is not None:
                    m, f = self.lookup(g, name, seen)
                    found_mod = found_mod or m
                    files |= f
        return found_mod, files

    def resolve(self, module, path, seen=frozenset()):
        """(module or None, set of files defining the item) a path names from `module`."""
        first, rest = path[0], path[1:]
        if first in ("crate", "$crate"):
            cur = self.root
        elif first == "self":
            cur = module
        elif first == "super":
            cur = module.parent
        else:
            cur, files = self.lookup(module, first, seen)
            if not rest or cur is None:
                return cur, files
        for k, seg in enumerate(rest):
            if cur is None:
                return None, set()
            if seg == "super":
                cur = cur.parent
                continue
            if seg == "self":
                continue
            m, files = self.lookup(cur, seg, seen)
            if k == len(rest) - 1:
                return m, files
            if m is None:  # an item: the rest are variants or associated items
                return None, files
            cur = m
        return cur, set()

    def through_module(self, r):
        first = r.path[0]
        if first in KEYWORDS_WITH_PATHS:
            return True
        m, _ = self.lookup(r.module, first, frozenset())
        return m is not None

    def edges(self):
        """{(from file, to file): [evidence line, ...]} over the whole crate."""
        out = {}

        def add(src, dst, ev):
            if src != dst:
                out.setdefault((src, dst), [])
                if ev not in out[(src, dst)]:
                    out[(src, dst)].append(ev)

        for file, refs in self.refs.items():
            for r in refs:
                if r.reexport is not None and r.reexport not in self.file_idents[file]:
                    continue
                if isinstance(r, CodeRef) and not self.through_module(r):
                    continue  # `Type::new`, `Kind::Variant`: the `use` of `Type` is the arrow
                _, files = self.resolve(r.module, r.path)
                for dst in files:
                    add(file, dst, f"{r.line}: {r.what}")
        # Module-level globs: every identifier of the file that the glob brings in.
        for file, modules in self.file_modules.items():
            for module in modules:
                for glob in module.globs:
                    g, _ = self.resolve(module, glob)
                    if g is None:
                        continue
                    for ident in sorted(self.file_idents[file]):
                        if ident in module.items or ident in module.imports:
                            continue
                        _, files = self.lookup(g, ident, frozenset())
                        for dst in files:
                            add(file, dst, f"use {'::'.join(glob)}::* ({ident})")
        return out


class FileReader:
    def __init__(self, crate, path, src, toks, mod_rs):
        self.crate, self.path, self.src, self.toks, self.mod_rs = crate, path, src, toks, mod_rs
        self.pairs = match_brackets(toks)

    def t(self, k):
        return self.toks[k].text if 0 <= k < len(self.toks) else ""

    def kind(self, k):
        return self.toks[k].kind if 0 <= k < len(self.toks) else ""

    def skip_to_semi(self, k, end):
        """Index of the `;` ending the item at k (skipping over bracket groups)."""
        while k < end and self.t(k) != ";":
            k = self.pairs[k] + 1 if self.t(k) in ("(", "[", "{") else k + 1
        return k

    def item_end(self, k, end):
        """Index of the last token of a fn/struct/impl/...: its `;` or its body's `}`."""
        while k < end:
            s = self.t(k)
            if s == ";":
                return k
            if s == "{":
                return self.pairs[k]
            k = self.pairs[k] + 1 if s in ("(", "[") else k + 1
        return end

    def items(self, k, end, module):
        """Reads the items of `module` in toks[k:end]."""
        self.crate.file_modules.setdefault(self.path, []).append(module)
        chain = []  # inline module folders between this file's module and `module`
        m = module
        while m is not None and m.inline:
            chain.insert(0, m.name)
            m = m.parent
        while k < end:
            attrs = []
            while self.t(k) == "#":
                if self.t(k + 1) == "!" and self.t(k + 2) == "[":
                    k = self.pairs[k + 2] + 1
                elif self.t(k + 1) == "[":
                    close = self.pairs[k + 1]
                    attrs.append((k + 2, close))
                    k = close + 1
                else:
                    break
            test_only = any(is_test_cfg(self.toks[a:b]) for a, b in attrs)
            explicit_path = None
            for a, b in attrs:
                if self.t(a) == "path" and self.t(a + 1) == "=" and self.kind(a + 2) == "lit":
                    explicit_path = self.t(a + 2)
            start = k
            if self.t(k) == "pub":
                k += 1
                if self.t(k) == "(":
                    k = self.pairs[k] + 1
            while True:
                s = self.t(k)
                if s in ("unsafe", "async", "default", "auto"):
                    k += 1
                elif s == "const" and self.t(k + 1) in ("fn", "unsafe", "async", "extern"):
                    k += 1
                elif s == "extern" and self.kind(k + 1) == "lit" and self.t(k + 2) in ("fn", "unsafe"):
                    k += 2
                else:
                    break
            kw = self.t(k)
            if kw == "use":
                semi = self.skip_to_semi(k, end)
                if not test_only:
                    reexport = self.t(start) == "pub"
                    self.use_decl(k + 1, semi, module, local=False, reexport=reexport)
                k = semi + 1
            elif kw == "mod" and self.toks[k + 1].kind == "ident":
                name = self.t(k + 1)
                if self.t(k + 2) == "{":
                    close = self.pairs[k + 2]
                    if not test_only:
                        child = Module(name, self.path, module)
                        child.inline = True
                        module.children[name] = child
                        self.items(k + 3, close, child)
                    k = close + 1
                else:
                    if not test_only:
                        file = self.crate.child_file(self.path, self.mod_rs, chain, name, explicit_path)
                        if file is not None:
                            child = Module(name, file, module)
                            module.children[name] = child
                            self.crate.read_file(file, child, os.path.basename(file) == "mod.rs")
                    k = self.skip_to_semi(k, end) + 1
            elif kw == "macro_rules" and self.t(k + 1) == "!":
                close = self.item_end(k + 2, end)
                if not test_only:
                    self.code(k + 2, close, module)
                k = close + 1
            elif kw in ("const", "static", "type"):
                if self.toks[k + 1].kind == "ident" and self.t(k + 1) != "mut":
                    name = self.t(k + 1)
                elif self.t(k + 1) == "mut":
                    name = self.t(k + 2)
                else:
                    name = None
                semi = self.skip_to_semi(k, end)
                if not test_only:
                    if name and name != "_":
                        module.items.add(name)
                    self.code(k + 1, semi, module)
                k = semi + 1
            elif kw in ITEM_KINDS or kw in ("impl", "extern"):
                if kw == "extern" and self.t(k + 1) == "crate":
                    k = self.skip_to_semi(k, end) + 1
                    continue
                close = self.item_end(k + 1, end)
                if not test_only:
                    if kw in ITEM_KINDS and self.toks[k + 1].kind == "ident":
                        module.items.add(self.t(k + 1))
                    self.code(k + 1, close, module)
                k = close + 1
            elif self.kind(k) == "ident":
                # An item-level macro call (`name! { .. }`, `name!(..);`) or something else.
                close = self.item_end(k, end)
                if not test_only:
                    self.code(k, close, module)
                k = close + 1
            else:
                k = max(k, start) + 1

    def use_decl(self, k, end, module, local, reexport=False):
        """Records the bindings and the references of `use` tree toks[k:end].

        A re-export (`pub use`, `pub(crate) use`, ...) only routes a path to the item: it makes
        an arrow from its own file only when that file's code uses the name too."""
        line = self.toks[k].line if k < len(self.toks) else 0
        for path, alias, glob in self.use_tree(k, end, []):
            if not path or path[0] == "":
                continue  # `use ::extern_crate::..`
            if glob:
                if not local:
                    module.globs.append(path)
                self.ref(module, path + ["*"], line, "use " + "::".join(path) + "::*", glob=True)
                continue
            bind = alias or path[-1]
            if path[-1] == "self":
                path = path[:-1]
                bind = alias or (path[-1] if path else None)
            if not path or bind is None:
                continue
            if bind != "_":
                table = module.local_imports if local else module.imports
                table.setdefault(bind, []).append(path)
            what = ("pub use " if reexport else "use ") + "::".join(path) + (f" as {alias}" if alias else "")
            self.ref(module, path, line, what, reexport=bind if reexport else None)

    def use_tree(self, k, end, prefix):
        """[(path, alias, is_glob)] of the use tree in toks[k:end]."""
        out, path = [], list(prefix)
        if self.t(k) == "::":
            if not prefix:
                path.append("")  # a leading `::`: another crate
            k += 1
        while k < end:
            s = self.t(k)
            if s == "{":
                close = self.pairs[k]
                for a, b in self.split_commas(k + 1, close):
                    out += self.use_tree(a, b, path)
                return out
            if s == "*":
                return out + [(path, None, True)]
            if self.toks[k].kind == "ident":
                path.append(s)
                k += 1
                if self.t(k) == "::":
                    k += 1
                    continue
                alias = None
                if self.t(k) == "as":
                    alias = self.t(k + 1)
                return out + [(path, alias, False)]
            k += 1
        return out

    def split_commas(self, a, b):
        parts, start, k = [], a, a
        while k < b:
            s = self.t(k)
            if s in ("(", "[", "{"):
                k = self.pairs[k] + 1
                continue
            if s == ",":
                parts.append((start, k))
                start = k + 1
            k += 1
        if start < b:
            parts.append((start, b))
        return parts

    def ref(self, module, path, line, what, glob=False, reexport=None):
        if glob:
            # The glob's own edges come from the identifiers it brings in (Crate.edges).
            return
        self.crate.refs[self.path].append(Ref(module, path, line, what, reexport))

    def code(self, k, end, module):
        """References in code toks[k:end]: qualified paths, nested `use`s, identifiers."""
        idents = self.crate.file_idents[self.path]
        while k < end:
            tok = self.toks[k]
            s = tok.text
            if s == "#" and self.t(k + 1) == "[":
                close = self.pairs[k + 1]
                if is_test_cfg(self.toks[k + 2 : close]):
                    # Skip the annotated item / statement / field.
                    j = close + 1
                    while j < end and self.t(j) not in (";", ",", "{", "}"):
                        j = self.pairs[j] + 1 if self.t(j) in ("(", "[") else j + 1
                    k = (self.pairs[j] if self.t(j) == "{" else j) + 1
                else:
                    k = close + 1
                continue
            if tok.kind == "ident" and s == "use" and self.t(k - 1) != "::" and self.t(k + 1) != "<":
                semi = self.skip_to_semi(k, end)
                self.use_decl(k + 1, semi, module, local=True)
                k = semi + 1
                continue
            if tok.kind == "ident":
                idents.add(s)
                if self.t(k + 1) == "::" and self.t(k - 1) != "::" and s not in NOT_NAMES:
                    path, j = [s], k + 1
                    while self.t(j) == "::" and j + 1 < end and self.toks[j + 1].kind == "ident":
                        path.append(self.t(j + 1))
                        j += 2
                    if len(path) > 1:
                        self.crate.refs[self.path].append(
                            CodeRef(module, path, tok.line, "::".join(path))
                        )
                    k = j
                    continue
            k += 1


class CodeRef(Ref):
    """A qualified path in code; counted only when it goes through a module."""

    __slots__ = ()


# ----------------------------------------------------------------------------------------
# The graph and its strongly connected components.
# ----------------------------------------------------------------------------------------

def crate_roots(src_dir):
    roots = []
    for name in ("lib.rs", "main.rs"):
        p = os.path.join(src_dir, name)
        if os.path.isfile(p):
            roots.append(p)
    bin_dir = os.path.join(src_dir, "bin")
    if os.path.isdir(bin_dir):
        for entry in sorted(os.listdir(bin_dir)):
            p = os.path.join(bin_dir, entry)
            if entry.endswith(".rs"):
                roots.append(p)
            elif os.path.isfile(os.path.join(p, "main.rs")):
                roots.append(os.path.join(p, "main.rs"))
    return roots


def import_graph(src_dir):
    """(files, {(a, b): [evidence]}) for every crate rooted in src_dir."""
    files, edges = [], {}
    for root in crate_roots(src_dir):
        crate = Crate(root)
        files += crate.files
        for key, ev in crate.edges().items():
            edges.setdefault(key, []).extend(e for e in ev if e not in edges.get(key, []))
    return files, edges


def cycles(files, edges):
    """Strongly connected components of more than one file (Tarjan), each sorted."""
    succ = {f: [] for f in files}
    for a, b in edges:
        succ.setdefault(a, []).append(b)
        succ.setdefault(b, [])
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in succ[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(max(10000, 4 * len(succ)))
    for v in sorted(succ):
        if v not in index:
            visit(v)
    return sorted(out)


def report(src_dir, out=sys.stdout):
    files, edges = import_graph(src_dir)
    found = cycles(files, edges)
    rel = lambda p: os.path.relpath(p, os.path.dirname(os.path.abspath(src_dir)))  # noqa: E731
    if not found:
        print(f"no file-level import cycle among {len(set(files))} files ({len(edges)} imports between files)", file=out)
        return 0
    print(f"{len(found)} file-level import cycle(s) in {rel(src_dir)}/:", file=out)
    for n, comp in enumerate(found, 1):
        print(f"\ncycle {n}: {len(comp)} files", file=out)
        for f in comp:
            print(f"  {rel(f)}", file=out)
        members = set(comp)
        for (a, b), ev in sorted(edges.items()):
            if a in members and b in members:
                print(f"  {rel(a)} -> {rel(b)}", file=out)
                for e in ev:
                    print(f"      line {e}", file=out)
    return 1


# ----------------------------------------------------------------------------------------
# The check's own tests: small trees with known cycles, so it cannot pass vacuously.
# ----------------------------------------------------------------------------------------

class SelfTest(unittest.TestCase):
    def tree(self, files):
        d = tempfile.TemporaryDirectory()
        self.addCleanup(d.cleanup)
        src = os.path.join(d.name, "src")
        for path, text in files.items():
            p = os.path.join(src, path)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "w", encoding="utf-8") as f:
                f.write(textwrap.dedent(text))
        return src

    def found(self, files):
        src = self.tree(files)
        graph_files, edges = import_graph(src)
        return [[os.path.relpath(f, src) for f in c] for c in cycles(graph_files, edges)], {
            (os.path.relpath(a, src), os.path.relpath(b, src)) for a, b in edges
        }

    BASE = {
        "lib.rs": """
            //! crate::a::A in a comment is no import
            mod a;
            pub mod b;
            mod c;
            mod d;
            pub use b::Thing;
        """,
        # b/mod.rs only re-exports: never the target of an arrow for `Thing`.
        "b/mod.rs": """
            mod inner;
            pub(crate) mod other;
            pub use inner::Thing;
            pub(crate) use other::{Other as Renamed, helper};
        """,
        "b/other.rs": """
            pub struct Other;
            pub fn helper() {}
        """,
        "c.rs": """
            pub struct C;
            #[cfg(test)]
            mod tests {
                use crate::d::D;
            }
            #[cfg(test)]
            fn only_in_tests() -> crate::d::D { todo!() }
        """,
        "d.rs": """
            use super::c::C;
            pub struct D(C);
            const S: &str = "crate::a::A";
        """,
    }

    def test_cycle_through_a_reexport_and_a_grouped_use(self):
        files = dict(self.BASE)
        files["a.rs"] = """
            use crate::{b::{Thing, Renamed}, c};
            pub struct A;
        """
        files["b/inner.rs"] = """
            pub struct Thing;
            fn f() { let _ = crate::a::A; }
        """
        found, edges = self.found(files)
        self.assertEqual(found, [["a.rs", "b/inner.rs"]])
        self.assertIn(("a.rs", "b/other.rs"), edges)  # through the renaming re-export
        self.assertNotIn(("a.rs", "b/mod.rs"), edges)
        self.assertNotIn(("lib.rs", "a.rs"), edges)  # `mod a;` is no arrow
        self.assertNotIn(("c.rs", "d.rs"), edges)  # test-only code
        self.assertNotIn(("d.rs", "a.rs"), edges)  # a string
        self.assertNotIn(("a.rs", "c.rs"), edges)  # a module named, not an item

    def test_root_reexport_and_super_paths(self):
        files = dict(self.BASE)
        files["a.rs"] = "pub struct A;\nfn f() -> crate::Thing { todo!() }\n"
        files["b/inner.rs"] = "pub struct Thing;\nuse super::super::a::A;\n"
        found, edges = self.found(files)
        self.assertEqual(found, [["a.rs", "b/inner.rs"]])
        # A re-export the file's own code does not use routes only: no arrow.
        files["b/inner.rs"] = "pub struct Thing;\npub(crate) use super::super::a::A;\n"
        self.assertEqual(self.found(files)[0], [])
        files["b/inner.rs"] = "pub struct Thing(A);\npub(crate) use super::super::a::A;\n"
        self.assertEqual(self.found(files)[0], [["a.rs", "b/inner.rs"]])
        self.assertIn(("a.rs", "b/inner.rs"), edges)  # crate::Thing, through lib.rs and b/mod.rs

    def test_module_alias_and_glob(self):
        files = dict(self.BASE)
        files["a.rs"] = "use crate::c;\npub struct A;\nfn f() { let _ = c::C; }\n"
        files["b/inner.rs"] = "pub struct Thing;\n"
        files["c.rs"] = "use crate::b::*;\npub struct C(Thing);\nfn f() { let _ = crate::a::A; }\n"
        found, edges = self.found(files)
        self.assertEqual(found, [["a.rs", "c.rs"]])
        self.assertIn(("c.rs", "b/inner.rs"), edges)

    def test_no_cycle(self):
        files = dict(self.BASE)
        files["a.rs"] = "use crate::b::Thing;\npub struct A(Thing);\n"
        files["b/inner.rs"] = "pub struct Thing;\n"
        found, edges = self.found(files)
        self.assertEqual(found, [])
        self.assertEqual(report(self.tree(files), out=io.StringIO()), 0)
        self.assertIn(("a.rs", "b/inner.rs"), edges)
        self.assertIn(("d.rs", "c.rs"), edges)

    def test_three_file_circle_in_a_dir_module(self):
        files = {
            "lib.rs": "mod http;\n",
            "http.rs": "mod x;\nmod y;\nmod z;\n",
            "http/x.rs": "use super::y::Y;\npub struct X;\n",
            "http/y.rs": "pub struct Y;\npub fn f() -> super::z::Z { todo!() }\n",
            "http/z.rs": "pub struct Z;\nimpl Z { fn g(&self) { let _ = crate::http::x::X; } }\n",
        }
        found, _ = self.found(files)
        self.assertEqual(found, [["http/x.rs", "http/y.rs", "http/z.rs"]])

    def test_lexer_literals(self):
        toks = lex(r"""let a = 'x'; let b = '\''; fn f<'a>(s: &'a str) {} let r = r#"crate::a"#; let c = b'"';""")
        self.assertNotIn("crate", [t.text for t in toks])


def main(argv):
    if argv[1:2] == ["--self-test"]:
        result = unittest.main(argv=[argv[0]], module=__name__, exit=False, verbosity=1).result
        return 0 if result.wasSuccessful() else 1
    src_dir = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
    return report(os.path.normpath(src_dir))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
