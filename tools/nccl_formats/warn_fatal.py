#!/usr/bin/env python3
# ruff: noqa: E501, UP031, PLR0917, RUF005, PLW1510, SIM102, SIM103, SIM115, PLW2901, PLR1714, RUF059, RUF021, RUF023, SIM300
"""Decide, from NCCL's own source, whether printing a WARN means the call that printed it fails.

Written for hpnet (tools/nccl_formats/): hpnet's log analyser must not call a user's job failed
because NCCL printed a warning it then shrugged off, nor miss a WARN that ends the call.

Usage:
    python extract.py --all-sites REPO nccl_formats_all_sites.json
    python warn_fatal.py REPO nccl_formats_all_sites.json warn_fatal.json

REPO is the (bare) git mirror of NVIDIA/nccl; the second argument is the output of
`extract.py --all-sites`.  Standard library only (Python 3.10+); the C lexer is imported from
extract.py beside this file.  Every file is read with `git cat-file` at the first tag of each
site run (and at each extra 2.3.x tag the site is printed in).

For every WARN format (formats and plugin_formats), every call site and every run of that site,
the enclosing function (or macro body) is parsed into statements and the control flow after
the WARN(...) statement is followed:

  fatal     the path reaches `return <error>` (ncclInternalError, ncclSystemError, ... or a
            variable known to hold one: `ret = ncclSystemError; goto fail;` ... `return ret`,
            `if (ret != ncclSuccess) { WARN(...); return ret; }`), a goto to a label whose path
            returns such an error, abort()/exit(), a forced error (NCCLCHECK(ncclInternalError)),
            or an error stored as the communicator's async error;
  nonfatal  the block goes on after the WARN (it falls through to more code, `continue`, the
            loop goes on, `return ncclSuccess`, the end of a void function);
  unknown   anything the rules cannot decide; the reason says why (a return of -1/false/NULL
            from a non-ncclResult_t function, whose caller decides; a return value computed by
            a call; a path that depends on a condition; preprocessor branches; ...).

A WARN inside a function-like macro is analysed in the macro body; where the outcome depends on
the macro's arguments (`goto label`, an `error_action` parameter, falling out of the body) it is
analysed once per expansion found in the tag, with the arguments substituted.  A WARN whose
format is built from a macro's parameters (SYSCHECK(call, "name") ...) is analysed at its
invocation site with the macro chain expanded in place.

The decision is local: "fatal" means the function (or macro) that printed the WARN returns an
error or aborts; a caller that ignores that error is not followed.
"""

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import extract as X  # the lexer of the format extractor

ERR_CONSTS = {
    "ncclUnhandledCudaError",
    "ncclSystemError",
    "ncclInternalError",
    "ncclInvalidArgument",
    "ncclInvalidUsage",
    "ncclRemoteError",
    "ncclTimeout",
}
OK_CONSTS = {"ncclSuccess"}
# functions that return their ncclResult_t argument unchanged (group.cc / group.h, every release that has them)
PASSTHROUGH = {"ncclAsyncErrCheck", "ncclGroupErrCheck"}
LOG_MACROS = {
    "WARN",
    "INFO",
    "TRACE",
    "VERSION",
    "INFO_LOC",
    "TRACE_CALL",
    "WARN_INSPECTOR",
    "INFO_INSPECTOR",
    "TRACE_INSPECTOR",
}
ABORT_FUNCS = {"abort", "exit", "_exit", "_Exit", "__builtin_trap", "quick_exit"}
LOOPS = ("for", "while", "do")
MAX_STEPS = 4000


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def short(text, n=110):
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= n else text[: n - 3] + "..."


# --------------------------------------------------------------------------------------
# git
# --------------------------------------------------------------------------------------


class Repo:
    def __init__(self, path):
        self.path = path
        self.p = subprocess.Popen(
            ["git", "-C", path, "cat-file", "--batch"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        self.cache = {}
        self.grep_cache = {}

    def show(self, tag, path):
        """(blob sha, text) of tag:path, or (None, None)."""
        key = (tag, path)
        if key in self.cache:
            return self.cache[key]
        self.p.stdin.write(("%s:%s\n" % (tag, path)).encode())
        self.p.stdin.flush()
        header = self.p.stdout.readline().split()
        if len(header) < 3 or header[1] != b"blob":
            self.cache[key] = (None, None)
            return self.cache[key]
        data = self.p.stdout.read(int(header[2]))
        self.p.stdout.read(1)
        self.cache[key] = (header[0].decode(), data.decode("utf-8", "replace"))
        return self.cache[key]

    def grep_text(self, tag, pattern, root):
        """git grep -n -w -E at tag under root -> list of (path, line, text)."""
        key = ("text", tag, pattern, root)
        if key not in self.grep_cache:
            r = subprocess.run(
                ["git", "-C", self.path, "grep", "-n", "-E", pattern, tag, "--", root],
                capture_output=True,
                text=True,
                errors="replace",
            )
            out = []
            for ln in r.stdout.splitlines():
                parts = ln.split(":", 3)
                if len(parts) == 4 and parts[2].isdigit():
                    out.append((parts[1], int(parts[2]), parts[3]))
            self.grep_cache[key] = out
        return self.grep_cache[key]

    def grep(self, tag, pattern, root):
        """git grep -n -E pattern at tag under root -> list of (path, line)."""
        key = (tag, pattern, root)
        if key not in self.grep_cache:
            r = subprocess.run(
                ["git", "-C", self.path, "grep", "-n", "-E", pattern, tag, "--", root],
                capture_output=True,
                text=True,
                errors="replace",
            )
            out = []
            for ln in r.stdout.splitlines():
                parts = ln.split(":", 3)
                if len(parts) >= 3 and parts[2].isdigit():
                    out.append((parts[1], int(parts[2])))
            self.grep_cache[key] = out
        return self.grep_cache[key]


# --------------------------------------------------------------------------------------
# per-file token model
# --------------------------------------------------------------------------------------


class FileModel:
    """Code tokens (no preprocessor lines, no #if 0 code) and #defines of one blob.

    `code` holds every branch of every #if; view(line) gives one configuration: in each #if/#elif/#else
    chain the branch that holds `line`, else the first branch (so that `#if A  if (x) {  #else  if (y) {
    #endif` does not leave two opening braces)."""

    def __init__(self, text):
        toks = X.lex(text)
        code, defines = X.split_directives(toks)
        self.code = [(k, t, ln) for (k, t, ln, dead) in code if not dead]
        self.defines = [d for d in defines if not d.dead]
        self.region = directive_regions(text)
        self.match = match_all(self.code)
        self.views = {}

    def region_at(self, line):
        return self.region[line] if line < len(self.region) else ()

    def view(self, line):
        w = self.region_at(line)
        if w in self.views:
            return self.views[w]
        want = dict(w)
        keep = []
        for t in self.code:
            ok = True
            for ifl, br in self.region_at(t[2]):
                if want.get(ifl, 0) != br:
                    ok = False
                    break
            if ok:
                keep.append(t)
        v = FileModel.__new__(FileModel)
        v.code, v.defines, v.region, v.views = keep, self.defines, self.region, {}
        v.match = match_all(keep)
        self.views[w] = v
        return v


def match_all(toks):
    """Index of the matching bracket for every (, [, { and ), ], } (None where unbalanced)."""
    m = {}
    stack = []
    for i, t in enumerate(toks):
        x = t[1]
        if x in ("(", "[", "{"):
            stack.append(i)
        elif x in (")", "]", "}"):
            want = {")": "(", "]": "[", "}": "{"}[x]
            # tolerate a stray closer: pop to the nearest matching opener
            k = len(stack) - 1
            while k >= 0 and toks[stack[k]][1] != want:
                k -= 1
            if k < 0:
                continue
            j = stack[k]
            del stack[k:]
            m[i] = j
            m[j] = i
    return m


DIRECTIVE = re.compile(r"^\s*#\s*(if|ifdef|ifndef|elif|else|endif)\b(.*)$")


def directive_regions(text):
    """For every line, the stack of preprocessor branches it sits in: tuple of (if-line, branch#).
    Include guards and #if 0 do not matter here (the same for WARN and decision, or dead)."""
    regions = [()]
    stack = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        ln = lines[i]
        m = DIRECTIVE.match(ln)
        cur = tuple(stack)
        if m:
            kind = m.group(1)
            if kind in ("if", "ifdef", "ifndef"):
                stack.append((i + 1, 0))
            elif kind in ("elif", "else"):
                if stack:
                    a, b = stack[-1]
                    stack[-1] = (a, b + 1)
            elif kind == "endif":
                if stack:
                    stack.pop()
        regions.append(cur if not m else tuple(stack))
        # continuation lines of a directive
        while ln.endswith("\\") and i + 1 < len(lines):
            i += 1
            ln = lines[i]
            regions.append(tuple(stack))
        i += 1
    return regions


# --------------------------------------------------------------------------------------
# statement tree
# --------------------------------------------------------------------------------------


class Node:
    __slots__ = ("kind", "s", "e", "seq", "idx", "cond", "then", "els", "body", "name", "line")

    def __init__(self, kind, s, e, line):
        self.kind, self.s, self.e, self.line = kind, s, e, line
        self.seq = self.idx = self.cond = self.then = self.els = self.body = self.name = None


class Seq:
    __slots__ = ("items", "owner", "role")

    def __init__(self, owner, role):
        self.items, self.owner, self.role = [], owner, role


class ParseError(Exception):
    pass


class Parser:
    def __init__(self, toks, match):
        self.T = toks
        self.M = match
        self.labels = {}

    def close(self, i):
        j = self.M.get(i)
        if j is None or j < i:
            raise ParseError("unbalanced %r at line %d" % (self.T[i][1], self.T[i][2]))
        return j

    def seq(self, i, end, owner, role):
        sq = Seq(owner, role)
        while i < end:
            node, i = self.stmt(i, end)
            node.seq = sq
            node.idx = len(sq.items)
            sq.items.append(node)
        return sq

    def single(self, i, end, owner, role):
        """A sub-statement (body of if/for/...) wrapped in a Seq of one item."""
        sq = Seq(owner, role)
        node, j = self.stmt(i, end)
        node.seq = sq
        node.idx = 0
        sq.items.append(node)
        return sq, j

    def stmt(self, i, end):
        T = self.T
        k, t, ln = T[i]
        if t == "{":
            j = self.close(i)
            n = Node("block", i, j, ln)
            n.body = self.seq(i + 1, j, n, "block")
            return n, j + 1
        if t == ";":
            return Node("empty", i, i, ln), i + 1
        if k == "id" and t == "if":
            c = i + 1
            if c < end and T[c][1] == "constexpr":
                c += 1
            if c >= end or T[c][1] != "(":
                raise ParseError("if without ( at line %d" % ln)
            ce = self.close(c)
            n = Node("if", i, None, ln)
            n.cond = (c + 1, ce)
            n.then, j = self.single(ce + 1, end, n, "then")
            if j < end and T[j][1] == "else":
                n.els, j = self.single(j + 1, end, n, "else")
            n.e = j - 1
            return n, j
        if k == "id" and t in ("for", "while", "switch"):
            c = i + 1
            if c >= end or T[c][1] != "(":
                raise ParseError("%s without ( at line %d" % (t, ln))
            ce = self.close(c)
            n = Node(t, i, None, ln)
            n.cond = (c + 1, ce)
            n.body, j = self.single(ce + 1, end, n, "body")
            n.e = j - 1
            return n, j
        if k == "id" and t == "do":
            n = Node("do", i, None, ln)
            n.body, j = self.single(i + 1, end, n, "body")
            if j < end and T[j][1] == "while" and j + 1 < end and T[j + 1][1] == "(":
                ce = self.close(j + 1)
                n.cond = (j + 2, ce)
                j = ce + 1
                if j < end and T[j][1] == ";":
                    j += 1
            n.e = j - 1
            return n, j
        if k == "id" and t == "try":
            j = i + 1
            if j >= end or T[j][1] != "{":
                raise ParseError("try without { at line %d" % ln)
            n = Node("try", i, None, ln)
            n.body, j = self.single(j, end, n, "body")
            n.then = Seq(n, "catch")
            while j < end and T[j][1] == "catch":
                if j + 1 < end and T[j + 1][1] == "(":
                    j = self.close(j + 1) + 1
                if j < end and T[j][1] == "{":
                    blk, j = self.stmt(j, end)
                    blk.seq = n.then
                    blk.idx = len(n.then.items)
                    n.then.items.append(blk)
            n.e = j - 1
            return n, j
        if k == "id" and t in ("return", "goto", "break", "continue", "case", "default"):
            if t in ("case", "default"):
                j = i + 1
                depth = 0
                while j < end:
                    x = T[j][1]
                    if x in ("(", "[", "{"):
                        depth += 1
                    elif x in (")", "]", "}"):
                        depth -= 1
                    elif x == ":" and depth == 0:
                        break
                    j += 1
                n = Node("case", i, j, ln)
                return n, j + 1
            j = self.stmt_end(i, end)
            n = Node(t, i, j, ln)
            if t == "goto" and i + 1 < end:
                n.name = T[i + 1][1]
            return n, j + 1
        if k == "id" and i + 1 < end and T[i + 1][1] == ":":
            n = Node("label", i, i + 1, ln)
            n.name = t
            return n, i + 2
        j = self.stmt_end(i, end)
        return Node("expr", i, j, ln), j + 1

    def stmt_end(self, i, end):
        """Index of the ';' that ends the statement starting at i (or of its last token)."""
        T = self.T
        # statement-like macro call without a ';':  NAME(args) <next statement>
        if T[i][0] == "id" and i + 1 < end and T[i + 1][1] == "(":
            c = self.close(i + 1)
            if c + 1 >= end:
                return c
            nx = T[c + 1]
            if nx[1] == "}" or (nx[0] == "id" and nx[1] not in ("const", "noexcept")):
                return c
        j = i
        while j < end:
            x = T[j][1]
            if x in ("(", "[", "{"):
                j = self.close(j) + 1
                continue
            if x == ";":
                return j
            if x == "}":
                return j - 1
            j += 1
        return end - 1


def walk_nodes(seq):
    for n in seq.items:
        yield n
        for sub in (n.then, n.els, n.body):
            if sub is not None:
                yield from walk_nodes(sub)


# --------------------------------------------------------------------------------------
# helpers on token ranges
# --------------------------------------------------------------------------------------


def strip_outer(toks):
    while len(toks) >= 2 and toks[0][1] == "(" and toks[-1][1] == ")":
        depth = 0
        ok = True
        for q, t in enumerate(toks):
            if t[1] in ("(", "[", "{"):
                depth += 1
            elif t[1] in (")", "]", "}"):
                depth -= 1
                if depth == 0 and q != len(toks) - 1:
                    ok = False
                    break
        if not ok:
            break
        toks = toks[1:-1]
    # C casts: (ncclResult_t) x
    if (
        len(toks) >= 4
        and toks[0][1] == "("
        and toks[2][1] == ")"
        and toks[1][0] == "id"
        and toks[1][1] in ("ncclResult_t", "int", "void")
    ):
        toks = toks[3:]
    return toks


def split_top(toks, sep):
    out, cur, depth = [], [], 0
    for t in toks:
        x = t[1]
        if x in ("(", "[", "{"):
            depth += 1
        elif x in (")", "]", "}"):
            depth -= 1
        if x == sep and depth == 0:
            out.append(cur)
            cur = []
        else:
            cur.append(t)
    out.append(cur)
    return out


def text_of(toks):
    return X.tokens_text(toks)


def ids_in(toks):
    return {t[1] for t in toks if t[0] == "id"}


ACCESS_STOP = {
    "comm",
    "i",
    "j",
    "c",
    "r",
    "n",
    "p",
    "e",
    "NULL",
    "nullptr",
    "ncclSuccess",
    "true",
    "false",
    "sizeof",
    "int",
    "char",
    "void",
    "const",
    "struct",
    "unsigned",
    "long",
    "size_t",
    "strerror",
    "errno",
    "__FILE__",
    "__LINE__",
    "__func__",
    "uint64_t",
    "int64_t",
    "uint32_t",
    "static_cast",
    "reinterpret_cast",
    "this",
    "state",
    "rank",
    "nRanks",
    "ret",
    "res",
    "result",
}


def paths_in(toks):
    """Access paths (a->b.c) and plain identifiers used in an expression, minus very common ones."""
    chains = []
    cur = []
    for t in toks:
        if t[0] == "id" and (not cur or cur[-1] in ("->", ".")):
            cur.append(t[1])
            continue
        if t[1] in ("->", ".") and cur and cur[-1] not in ("->", "."):
            cur.append(t[1])
            continue
        if cur:
            chains.append("".join(cur).rstrip("->."))
        cur = [t[1]] if t[0] == "id" else []
    if cur:
        chains.append("".join(cur).rstrip("->."))
    res = set()
    for p in chains:
        if p in ACCESS_STOP or re.match(r"^nccl[A-Z]", p) or re.match(r"^[A-Z0-9_]+$", p):
            continue
        res.add(p)
    return res


def cond_paths(toks):
    """paths_in() of a condition without the calls in it (name and arguments): a condition that calls a
    function makes a new check of its own."""
    out = []
    i = 0
    while i < len(toks):
        t = toks[i]
        if t[0] == "id" and i + 1 < len(toks) and toks[i + 1][1] == "(":
            e = X.match_paren(toks, i + 1)
            if e is not None:
                i = e + 1
                continue
        out.append(t)
        i += 1
    return paths_in(out)


# --------------------------------------------------------------------------------------
# outcomes
# --------------------------------------------------------------------------------------


class Out:
    __slots__ = ("dec", "reason", "line", "other_warn", "func")

    def __init__(self, dec, reason, line=None, other_warn=False):
        self.dec, self.reason, self.line, self.other_warn = dec, reason, line, other_warn
        self.func = None  # name of the ncclResult_t function that returns the error (for callers)

    def __repr__(self):
        return "Out(%s, %r)" % (self.dec, self.reason)


class FallOut(Exception):
    """The walk fell out of a macro body: the outcome depends on the expansion site."""


class TooComplex(Exception):
    pass


# --------------------------------------------------------------------------------------
# the analysis of one WARN occurrence
# --------------------------------------------------------------------------------------


class Analysis:
    def __init__(
        self,
        toks,
        match,
        root,
        labels,
        ftype,
        warn_node,
        region_of,
        kind,
        params=(),
        macro=None,
        thread=False,
    ):
        self.thread = thread  # a pthread start routine: void* f(void*)
        self.T = toks
        self.M = match
        self.root = root
        self.labels = labels
        self.ftype = ftype  # 'nccl' | 'void' | 'lambda' | 'macro' | other text
        self.warn = warn_node
        self.region_of = region_of  # line -> preprocessor region (None for macro bodies)
        self.kind = kind  # 'function' | 'macro'
        self.params = set(params)
        self.macro = macro
        self.steps = 0
        self.bw_cache = {}
        self.ctx_paths = self.warn_context_paths()

    # ---------------------------------------------------------------- utilities
    def toks(self, s, e):
        return self.T[s : e + 1]

    def ntext(self, node):
        if node.kind == "if":
            return "if (%s)" % text_of(self.T[node.cond[0] : node.cond[1]])
        if node.kind in ("for", "while", "switch"):
            return "%s (%s)" % (node.kind, text_of(self.T[node.cond[0] : node.cond[1]]))
        if node.kind == "do":
            return "do ... while (%s)" % (
                text_of(self.T[node.cond[0] : node.cond[1]]) if node.cond else ""
            )
        if node.kind == "block":
            return "{ ... }"
        return text_of(self.toks(node.s, node.e))

    def cond_toks(self, node):
        return self.T[node.cond[0] : node.cond[1]]

    def warn_context_paths(self):
        """Identifiers / access paths of the WARN's arguments and of the conditions guarding it."""
        ps = paths_in(self.toks(self.warn.s, self.warn.e))
        node = self.warn
        while node.seq is not None and node.seq.owner is not None:
            o = node.seq.owner
            if o.kind in ("if", "while", "for", "switch") and o.cond:
                ps |= paths_in(self.cond_toks(o))
            node = o
        return ps

    def enclosing(self, node, kinds):
        n = node
        while n.seq is not None and n.seq.owner is not None:
            o = n.seq.owner
            if o.kind in kinds:
                return o
            n = o
        return None

    def is_do_once(self, node):
        if node.kind != "do" or not node.cond:
            return False
        return text_of(self.cond_toks(node)) in ("0", "false")

    # ---------------------------------------------------------------- value of a variable
    def classify_expr(self, toks):
        toks = strip_outer(toks)
        tern = X.split_ternary(toks)
        if tern:
            a, _ = self.classify_expr(tern[1])
            b, _ = self.classify_expr(tern[2])
            if a == b and a in ("err", "ok"):
                return (a, text_of(toks))
            return ("unk", text_of(toks))
        if (
            len(toks) >= 3
            and toks[0][0] == "id"
            and toks[0][1] in PASSTHROUGH
            and toks[1][1] == "("
            and toks[-1][1] == ")"
        ):
            return self.classify_expr(toks[2:-1])
        if len(toks) == 1 and toks[0][0] == "num" and re.match(r"^[0-9]+[uUlL]*$", toks[0][1]):
            v = (
                int(re.sub(r"[uUlL]+$", "", toks[0][1]), 0)
                if not toks[0][1].startswith("0x")
                else 1
            )
            return ("ok", "0") if v == 0 else ("const=%d" % v, toks[0][1])
        if len(toks) == 1 and toks[0][1] in ("true", "false"):
            return ("const=1", "true") if toks[0][1] == "true" else ("ok", "false")
        if len(toks) == 1:
            t = toks[0][1]
            if t in ERR_CONSTS:
                return ("err", t)
            if t in OK_CONSTS or t == "0":
                return ("ok", t)
            if t == "ncclInProgress":
                return ("unk", "ncclInProgress")
        return ("unk", text_of(toks))

    def assigns(self, node, var):
        """Effect of a statement on var: None (none), or (state, why)."""
        if node.kind not in ("expr", "return"):
            if node.kind in ("block",):
                for sub in reversed(node.body.items):
                    r = self.assigns(sub, var)
                    if r is not None:
                        return r
                return None
            if node.kind in ("label", "case", "empty", "goto", "break", "continue"):
                return None
            # compound statement: does any assignment to var reach the end of it?
            hits = [
                n
                for n in self.sub_nodes(node)
                if n.kind == "expr" and self.assigns(n, var) is not None
            ]
            if node.cond and self.mentions_assign(self.cond_toks(node), var):
                return ("unk", "assigned in `%s`" % short(self.ntext(node), 60))
            for h in hits:
                if not self.exits_right_after(h):
                    return (
                        "unk",
                        "may be assigned in `%s` (line %d)"
                        % (short(self.ntext(node), 60), node.line),
                    )
            return None
        toks = self.toks(node.s, node.e)
        if toks and toks[-1][1] == ";":
            toks = toks[:-1]
        if not any(t[0] == "id" and t[1] == var for t in toks):
            return None
        # declaration / assignment: [type] var = E
        for q, t in enumerate(toks):
            if t[0] == "id" and t[1] == var and q + 1 < len(toks) and toks[q + 1][1] == "=":
                prev = toks[q - 1][1] if q else None
                if prev in (None, "ncclResult_t", "auto", "int") or (q == 0):
                    st, why = self.classify_expr(toks[q + 2 :])
                    return (st, "`%s` (line %d)" % (short(text_of(toks), 70), node.line))
                return ("unk", "`%s` (line %d)" % (short(text_of(toks), 70), node.line))
        if len(toks) == 2 and toks[0][1] == "ncclResult_t" and toks[1][1] == var:
            return ("unk", "declared without a value (line %d)" % node.line)
        # macro call with var as an argument (a function cannot assign an argument passed by value)
        if (
            toks[0][0] == "id"
            and len(toks) > 1
            and toks[1][1] == "("
            and re.match(r"^[A-Z][A-Z0-9_]*$", toks[0][1])
            and toks[0][1] not in LOG_MACROS
        ):
            name = toks[0][1]
            e = X.match_paren(toks, 1)
            args = X.split_args(toks[2:e]) if e else []
            if any(len(a) == 1 and a[0][1] == var for a in args):
                if "GOTO" in name:
                    return (
                        "ok",
                        "`%s` did not jump (line %d)" % (short(text_of(toks), 70), node.line),
                    )
                return ("unk", "`%s` (line %d)" % (short(text_of(toks), 70), node.line))
        if self.mentions_assign(toks, var):
            return ("unk", "`%s` (line %d)" % (short(text_of(toks), 70), node.line))
        return None

    def mentions_assign(self, toks, var):
        for q, t in enumerate(toks):
            if t[0] == "id" and t[1] == var:
                nx = toks[q + 1][1] if q + 1 < len(toks) else ""
                pv = toks[q - 1][1] if q else ""
                if nx in ("=", "+=", "-=", "|=", "&=", "^=", "++", "--") or pv in ("&", "++", "--"):
                    return True
        return False

    def sub_nodes(self, node):
        for sub in (node.then, node.els, node.body):
            if sub is not None:
                yield from walk_nodes(sub)

    def exits_right_after(self, node):
        """The statement after node in its sequence leaves unconditionally (goto/return/break/continue)."""
        sq = node.seq
        for n in sq.items[node.idx + 1 :]:
            if n.kind in ("goto", "return", "break", "continue"):
                return True
            if n.kind == "expr" and self.is_forced(n):
                return True
            if n.kind in ("expr", "empty"):
                continue
            return False
        return False

    def implies(self, cond, var, branch):
        """What a condition (true if branch else false) says about var: None or (state, why)."""
        cond = strip_outer(cond)
        pieces = self._split_logic(cond, "&&" if branch else "||")
        for p in pieces:
            p = strip_outer(p)
            r = self._atom(p, var)
            if r is None:
                continue
            val = r if branch else {"err": "ok", "ok": "err"}[r]
            return (val, "`%s` is %s" % (short(text_of(cond), 70), "true" if branch else "false"))
        return None

    @staticmethod
    def _split_logic(toks, op):
        out, cur, depth = [], [], 0
        for t in toks:
            x = t[1]
            if x in ("(", "[", "{"):
                depth += 1
            elif x in (")", "]", "}"):
                depth -= 1
            if x == op and depth == 0:
                out.append(cur)
                cur = []
            else:
                cur.append(t)
        out.append(cur)
        return out

    def is_result_var(self, var):
        """var is declared ncclResult_t somewhere in the file (or is a macro's RES-like argument)."""
        if var in self.params:
            return True
        key = ("#rv", var)
        if key not in self.bw_cache:
            T = self.T
            found = False
            for q in range(len(T) - 1):
                if T[q][1] == "ncclResult_t" and T[q + 1][1] == var:
                    found = True
                    break
            self.bw_cache[key] = found
        return self.bw_cache[key]

    def _atom(self, p, var):
        """'err' when the atom (true) means var is not ncclSuccess, 'ok' when it means success."""
        txt = [t[1] for t in p]
        if txt == [var]:
            return "err" if self.is_result_var(var) else None
        if txt == ["!", var]:
            return "ok" if self.is_result_var(var) else None
        # (var = call) != ncclSuccess
        if len(p) >= 3 and p[0][1] == "(":
            e = X.match_paren(p, 0)
            if e is not None and e + 1 < len(p):
                inner = p[1:e]
                if len(inner) >= 2 and inner[0][1] == var and inner[1][1] == "=":
                    p = [("id", var, 0)] + p[e + 1 :]
                    txt = [t[1] for t in p]
        if len(txt) == 3 and var in (txt[0], txt[2]):
            other = txt[2] if txt[0] == var else txt[0]
            op = txt[1]
            if op == "!=" and (other == "ncclSuccess" or other == "0" and self.is_result_var(var)):
                return "err"
            if op == "==" and (other == "ncclSuccess" or other == "0" and self.is_result_var(var)):
                return "ok"
            if op == "==" and other in ERR_CONSTS:
                return "err"
        return None

    def value_before_warn(self, var):
        if var not in self.bw_cache:
            self.bw_cache[var] = self.backward(self.warn, var, set())
        return self.bw_cache[var]

    def backward(self, node, var, seen_labels):
        """State of var just before node executes, from the statements that dominate it."""
        n = node
        while True:
            sq = n.seq
            for j in range(n.idx - 1, -1, -1):
                st = sq.items[j]
                if st.kind == "label":
                    return self.at_label(st, var, seen_labels)
                r = self.assigns(st, var)
                if r is not None:
                    return r
            o = sq.owner
            if o is None:
                if var in self.params:
                    return ("unk", "%s is a macro argument" % var)
                return ("unk", "no assignment to %s found before the WARN" % var)
            if o.kind == "if":
                r = self.implies(self.cond_toks(o), var, sq.role == "then")
                if r is not None:
                    return r
                if self.mentions_assign(self.cond_toks(o), var):
                    return ("unk", "assigned in `%s`" % short(self.ntext(o), 60))
            elif o.kind in LOOPS:
                if o.kind == "do" and self.is_do_once(o):
                    pass
                else:
                    for sub in self.sub_nodes(o):
                        if sub.kind == "expr" and self.assigns(sub, var) is not None:
                            return (
                                "unk",
                                "%s is assigned inside the enclosing loop (line %d)"
                                % (var, sub.line),
                            )
                    if o.cond and self.mentions_assign(self.cond_toks(o), var):
                        return (
                            "unk",
                            "%s is assigned in the loop header (line %d)" % (var, o.line),
                        )
            elif o.kind == "switch":
                pass
            n = o

    def at_label(self, label, var, seen):
        """State of var at a label: combine every goto to it (and the fall-through into it)."""
        if label.name in seen:
            return ("unk", "label loop")
        seen = seen | {label.name}
        states = []
        # fall-through from the statement before the label
        sq = label.seq
        prev = sq.items[label.idx - 1] if label.idx > 0 else None
        if prev is None or prev.kind not in ("return", "goto", "break", "continue"):
            if prev is not None and prev.kind == "label":
                states.append(self.at_label(prev, var, seen))
            elif prev is not None or sq.owner is not None:
                states.append(
                    self.backward(label, var, seen)
                    if prev is None
                    else self._after(prev, var, seen)
                )
        for n in walk_nodes(self.root):
            if n.kind == "goto" and n.name == label.name:
                states.append(self.backward(n, var, seen))
            elif n.kind == "expr":
                toks = self.toks(n.s, n.e)
                if (
                    toks[0][0] == "id"
                    and "GOTO" in toks[0][1]
                    and len(toks) > 1
                    and toks[1][1] == "("
                ):
                    e = X.match_paren(toks, 1)
                    args = [text_of(a) for a in X.split_args(toks[2:e])] if e else []
                    if args and args[-1] == label.name or label.name in args:
                        if var in args:
                            states.append(
                                (
                                    "err",
                                    "`%s` jumps here only on error (line %d)"
                                    % (short(text_of(toks), 60), n.line),
                                )
                            )
                        else:
                            states.append(self.backward(n, var, seen))
        if not states:
            return ("unk", "no path into label %s" % label.name)
        vals = {s for s, _ in states}
        if vals == {"err"}:
            return (
                "err",
                "every jump to `%s:` carries an error in %s (e.g. %s)"
                % (label.name, var, states[0][1]),
            )
        if vals == {"ok"}:
            return ("ok", "every path into `%s:` has %s == ncclSuccess" % (label.name, var))
        return ("unk", "paths into `%s:` disagree on %s" % (label.name, var))

    def _after(self, node, var, seen):
        r = self.assigns(node, var)
        if r is not None:
            return r
        if node.kind == "label":
            return self.at_label(node, var, seen)
        return self.backward(node, var, seen)

    def value(self, var, state):
        if var in state:
            return state[var]
        return self.value_before_warn(var)

    # ---------------------------------------------------------------- classification of statements
    def is_forced(self, node):
        """abort()/exit()/NCCLCHECK(ncclInternalError)/async error: (kind, why) or None."""
        toks = self.toks(node.s, node.e)
        if not toks:
            return None
        t0 = toks[0][1]
        if t0 == "std" and len(toks) > 2 and toks[1][1] == "::":
            t0 = toks[2][1]
        if t0 in ABORT_FUNCS and len(toks) > 1:
            return ("fatal", "`%s` ends the process" % short(text_of(toks), 60))
        if toks[0][0] == "id" and len(toks) > 2 and toks[1][1] == "(" and "CHECK" in t0:
            e = X.match_paren(toks, 1)
            args = X.split_args(toks[2:e]) if e else []
            if args and len(strip_outer(args[0])) == 1 and strip_outer(args[0])[0][1] in ERR_CONSTS:
                return ("fatal", "forced error `%s`" % short(text_of(toks), 70))
        # the communicator's async error
        txt = text_of(toks)
        m = re.search(
            r"(asyncResult|asyncError)\s*,?\s*=?\s*(ncclSystemError|ncclInternalError|ncclRemoteError|"
            r"ncclUnhandledCudaError|ncclInvalidUsage|ncclInvalidArgument)",
            txt,
        )
        if m or re.match(
            r"^ncclCommSetAsyncError\s*\(.*,\s*(nccl\w+Error|ncclInvalid\w+)\s*\)", txt
        ):
            return (
                "fatal",
                "stores an error as the communicator's async error: `%s`" % short(txt, 70),
            )
        return None

    def has_exit(self, node):
        """Statements inside a compound statement that can leave it other than by falling through.
        Returns a list of (kind, node)."""
        out = []

        def rec(sq, loop_depth, sw_depth):
            for n in sq.items:
                if n.kind in ("return", "goto"):
                    out.append((n.kind, n))
                elif n.kind == "break" and loop_depth == 0 and sw_depth == 0:
                    out.append(("break", n))
                elif n.kind == "continue" and loop_depth == 0:
                    out.append(("continue", n))
                elif n.kind == "expr" and self.is_forced(n):
                    out.append(("forced", n))
                elif n.kind == "try":
                    out.append(("try", n))
                for sub in (n.then, n.els):
                    if sub is not None:
                        rec(sub, loop_depth, sw_depth)
                if n.body is not None:
                    if n.kind in LOOPS:
                        rec(n.body, loop_depth + 1, sw_depth)
                    elif n.kind == "switch":
                        rec(n.body, loop_depth, sw_depth + 1)
                    else:
                        rec(n.body, loop_depth, sw_depth)

        wrapper = Seq(None, "x")
        wrapper.items = [node]
        rec(wrapper, 0, 0)
        return out

    def exit_is_error(self, kind, n, state):
        if kind == "forced":
            return True
        if kind == "return":
            r = self.return_outcome(n, state)
            return r.dec == "fatal"
        return False

    def return_outcome(self, node, state):
        toks = self.toks(node.s, node.e)[1:]
        if toks and toks[-1][1] == ";":
            toks = toks[:-1]
        toks = strip_outer(toks)
        while (
            len(toks) >= 3
            and toks[0][0] == "id"
            and toks[0][1] in PASSTHROUGH
            and toks[1][1] == "("
            and toks[-1][1] == ")"
        ):
            toks = strip_outer(toks[2:-1])
        txt = text_of(toks)
        where = " (line %d)" % node.line
        se = self.stored_error(state)
        if se and (self.thread or not toks and self.ftype == "void"):
            return Out(
                "fatal",
                "stores an error in `%s` (%s), then returns%s" % (se[0], se[1], where),
                node.line,
            )
        if self.thread:
            return Out(
                "unknown",
                "the thread routine returns `%s`%s: the thread ends, no error code reaches a "
                "caller" % (short(txt, 40), where),
                node.line,
            )
        ft = self.ftype
        nccl_like = ft in ("nccl", "macro", "lambda")
        if not toks:
            if ft == "void":
                return Out(
                    "nonfatal",
                    "`return;` from a void function: no error is returned" + where,
                    node.line,
                )
            return Out("unknown", "`return;` from a %s function%s" % (ft, where), node.line)
        if len(toks) == 1:
            t = toks[0][1]
            if t in ERR_CONSTS:
                if nccl_like:
                    return Out("fatal", "return %s%s" % (t, where), node.line)
                return Out(
                    "unknown", "returns %s from a `%s` function%s" % (t, ft, where), node.line
                )
            if t in OK_CONSTS:
                return Out("nonfatal", "return ncclSuccess" + where, node.line)
            if t == "0" and ft == "nccl":
                return Out("nonfatal", "return 0 (= ncclSuccess)" + where, node.line)
            if t == "ncclInProgress":
                return Out(
                    "unknown", "return ncclInProgress (not an error, not done)" + where, node.line
                )
            if (
                toks[0][0] == "id"
                and (nccl_like or ft == "unknown")
                and t not in ("true", "false", "NULL", "nullptr")
            ):
                st, why = self.value(t, state)
                if st == "err":
                    return Out(
                        "fatal",
                        "return %s%s, %s holds an error: %s" % (t, where, t, why),
                        node.line,
                    )
                if st == "ok" and nccl_like:
                    return Out(
                        "nonfatal",
                        "return %s%s, %s == ncclSuccess: %s" % (t, where, t, why),
                        node.line,
                    )
                if st == "dropped":
                    return Out(
                        "nonfatal",
                        "return %s%s, but the error it held was overwritten by %s: the "
                        "function went on" % (t, where, why),
                        node.line,
                    )
                return Out(
                    "unknown",
                    "return %s%s: value of %s not determined (%s)" % (t, where, t, why),
                    node.line,
                )
        if not nccl_like:
            return Out(
                "unknown",
                "returns `%s` from a `%s` function%s; the caller decides"
                % (short(txt, 50), ft, where),
                node.line,
            )
        st, why = self.classify_expr(toks)
        if st == "err":
            return Out(
                "fatal", "return `%s`%s: an error either way" % (short(txt, 60), where), node.line
            )
        if st == "ok":
            return Out("nonfatal", "return `%s`%s: success" % (short(txt, 60), where), node.line)
        return Out(
            "unknown", "return `%s`%s: value not determined" % (short(txt, 60), where), node.line
        )

    def eval_cond(self, toks, state):
        """True/False/None for a condition over tracked variables."""
        toks = strip_outer(toks)
        for op in ("||", "&&"):
            parts = self._split_logic(toks, op)
            if len(parts) > 1:
                vals = [self.eval_cond(p, state) for p in parts]
                if op == "&&":
                    if False in vals:
                        return False
                    return True if all(v is True for v in vals) else None
                if True in vals:
                    return True
                return False if all(v is False for v in vals) else None
        if toks and toks[0][1] == "!" and len(toks) > 1:
            v = self.eval_cond(toks[1:], state)
            return None if v is None else not v
        return self.eval_leaf(toks, state)

    def num_of(self, var, state):
        """Numeric value of a tracked variable: int, 'nz' (an error: non-zero), or None."""
        st, _ = self.value(var, state)
        if st == "ok":
            return 0
        if st == "err":
            return "nz"
        if st.startswith("const="):
            return int(st[6:])
        return None

    def eval_leaf(self, toks, state):
        txt = [t[1] for t in toks]
        if len(toks) == 1 and toks[0][0] == "id":
            v = self.num_of(txt[0], state)
            return None if v is None else (v != 0)
        if len(toks) == 3 and txt[1] in ("==", "!=", "<", ">", "<=", ">="):
            a, op, b = toks
            if a[0] != "id" or a[1] in ERR_CONSTS or a[1] in OK_CONSTS:
                a, b = b, a
                op = {"<": ">", ">": "<", "<=": ">=", ">=": "<="}.get(op[1], op[1])
            else:
                op = op[1]
            if a[0] != "id" or a[1] in ERR_CONSTS or a[1] in OK_CONSTS:
                return None
            lhs = self.num_of(a[1], state)
            if b[1] in OK_CONSTS:
                rhs = 0
            elif b[0] == "num" and re.match(r"^-?[0-9]+$", b[1]):
                rhs = int(b[1])
            else:
                return None
            if lhs is None:
                return None
            if lhs == "nz":
                if rhs == 0 and op in ("==", "!="):
                    return op == "!="
                return None
            return {
                "==": lhs == rhs,
                "!=": lhs != rhs,
                "<": lhs < rhs,
                ">": lhs > rhs,
                "<=": lhs <= rhs,
                ">=": lhs >= rhs,
            }[op]
        return None

    def tracked_ids(self, state):
        return {v for v, (s, _) in state.items() if not v.startswith(("#", "@"))}

    def stored_error(self, state):
        """An error code stored, after the WARN, in a variable that outlives the function (a global such as
        initResult, a member such as args->ret): (target, why) or None."""
        for v, (st, why) in state.items():
            if st != "err" or v.startswith("#"):
                continue
            name = v[1:] if v.startswith("@") else v
            if v.startswith("@") or not self.is_local(name):
                return name, why
        return None

    def is_local(self, var):
        """var is declared inside the analysed function body (or is a macro argument)."""
        if var in self.params:
            return True
        key = ("#local", var)
        if key not in self.bw_cache:
            T = self.T
            lo = min(n.s for n in self.root.items) if self.root.items else 0
            hi = (
                max(n.e if n.e is not None else n.s for n in self.root.items)
                if self.root.items
                else -1
            )
            found = False
            start = lo
            j = lo - 2  # token before the body's '{'
            while j > 0 and T[j][1] != ")" and lo - j < 12:
                j -= 1
            if j > 0 and T[j][1] == ")" and self.M.get(j) is not None:
                start = self.M[j]
            for q in range(max(start, 1), min(hi + 1, len(T))):
                if (
                    T[q][1] == var
                    and T[q - 1][0] == "id"
                    and T[q - 1][1] not in ("return", "goto", "case")
                    and (q + 1 >= len(T) or T[q + 1][1] in ("=", ";", ",", ")", "["))
                ):
                    found = True
                    break
            self.bw_cache[key] = found
        return self.bw_cache[key]

    # ---------------------------------------------------------------- the walk
    def run(self):
        w = self.warn
        state = {}
        return self.walk(w.seq, w.idx + 1, state, tail=w.seq, post=False)

    def walk(self, seq, idx, state, tail, post):
        r = self._walk(seq, idx, state, tail, post)
        if "#other_warn" in state:
            r = Out(r.dec, r.reason, r.line, True)
        return r

    def _walk(self, seq, idx, state, tail, post):
        """Follow control from seq.items[idx]. tail: the WARN's own sequence while we are still in it.
        post: we left the WARN's block by falling through with no error pending."""
        while True:
            self.steps += 1
            if self.steps > MAX_STEPS:
                raise TooComplex()
            if idx >= len(seq.items):
                r = self.leave(seq, state, tail, post)
                if isinstance(r, Out):
                    return r
                seq, idx, tail, post = r
                continue
            n = seq.items[idx]
            if n.kind in ("empty", "label", "case"):
                idx += 1
                continue
            if post and not self.post_relevant(n, state):
                return Out(
                    "nonfatal",
                    "falls through to `%s` (line %d)" % (short(self.ntext(n), 80), n.line),
                    n.line,
                )
            if n.kind == "return":
                r = self.return_outcome(n, state)
                if post and r.dec == "unknown" and not self.thread:
                    r = self.post_return(n, r)
                return self.pp_check(r)
            if n.kind == "goto":
                if n.name in self.params:
                    errs = [v for v, (s, _) in state.items() if s == "err"]
                    if errs:
                        return Out(
                            "fatal",
                            "`%s = <error>; goto %s` (macro argument label; %s)"
                            % (errs[0], n.name, state[errs[0]][1]),
                            n.line,
                        )
                    raise FallOut("goto " + n.name)
                lab = self.labels.get(n.name)
                if lab is None:
                    if self.kind == "macro":
                        raise FallOut("goto " + n.name)
                    return Out("unknown", "goto %s: label not found" % n.name, n.line)
                seq, idx, tail, post = lab.seq, lab.idx + 1, None, False
                continue
            if n.kind == "break":
                o = self.enclosing(n, ("for", "while", "do", "switch"))
                if o is None:
                    if self.kind == "macro":
                        raise FallOut("break")
                    return Out("unknown", "break outside a loop (line %d)" % n.line, n.line)
                errs = [v for v, (s, _) in state.items() if s == "err"]
                seq, idx, tail, post = (
                    o.seq,
                    o.idx + 1,
                    None,
                    not errs and not self.pending_error(state),
                )
                continue
            if n.kind == "continue":
                o = self.enclosing(n, LOOPS)
                if o is None:
                    if self.kind == "macro":
                        raise FallOut("continue")
                    return Out("unknown", "continue outside a loop (line %d)" % n.line, n.line)
                if self.is_do_once(o):
                    seq, idx, tail, post = o.seq, o.idx + 1, None, False
                    continue
                errs = [v for v, (s, _) in state.items() if s == "err"]
                if not errs:
                    return Out(
                        "nonfatal", "`continue` (line %d): the loop goes on" % n.line, n.line
                    )
                return Out(
                    "unknown",
                    "`continue` (line %d) with %s holding an error" % (n.line, errs[0]),
                    n.line,
                )
            if n.kind == "try":
                return Out("unknown", "try/catch after the WARN (line %d)" % n.line, n.line)
            if n.kind == "expr":
                f = self.is_forced(n)
                if f:
                    return self.pp_check(Out(f[0], f[1] + " (line %d)" % n.line, n.line))
                toks = self.toks(n.s, n.e)
                if toks and toks[0][1] == "throw":
                    return Out("unknown", "throw (line %d)" % n.line, n.line)
                self.apply_expr(n, state, in_tail=tail is not None)
                if toks and toks[0][1] in WARN_MACROS and tail is None:
                    state["#other_warn"] = ("unk", "line %d" % n.line)
                if len(toks) == 1 and toks[0][1] in self.params:
                    raise FallOut("macro argument statement `%s`" % toks[0][1])
                idx += 1
                continue
            if n.kind == "block":
                seq, idx = n.body, 0
                continue
            if n.kind == "if":
                return self.do_if(n, state, tail, post)
            if n.kind in LOOPS or n.kind == "switch":
                if self.is_do_once(n):
                    seq, idx = n.body, 0
                    continue
                exits = self.has_exit(n)
                if not exits:
                    self.havoc(n, state)
                    idx += 1
                    continue
                if all(self.exit_is_error(k, x, state) for k, x in exits) and not (
                    cond_paths(self.cond_toks(n)) & self.ctx_paths
                ):
                    self.havoc(n, state)
                    idx += 1
                    continue
                return Out(
                    "unknown",
                    "`%s` with exits follows (line %d)" % (short(self.ntext(n), 60), n.line),
                    n.line,
                )
            return Out("unknown", "unhandled statement %s (line %d)" % (n.kind, n.line), n.line)

    def post_return(self, n, r):
        """A return reached by falling out of the WARN's block is the function's ordinary return: what it
        returns does not come from the WARN unless it is an error code or a failure sentinel."""
        toks = self.toks(n.s, n.e)[1:]
        if toks and toks[-1][1] == ";":
            toks = toks[:-1]
        toks = strip_outer(toks)
        txt = text_of(toks)
        if re.match(r"^(-\s*[0-9]+|NULL|nullptr|false|0)$", txt) or any(
            t[1] in ERR_CONSTS for t in toks
        ):
            return r
        if self.ftype == "nccl" and len(toks) == 1 and toks[0][0] == "id":
            st, why = self.value_before_warn(txt)
            if st == "err" or "paths into" in why or "every jump" in why:
                return Out("unknown", "%s; %s before the WARN: %s" % (r.reason, txt, why), n.line)
            return Out(
                "nonfatal",
                "falls through to the ordinary `return %s` (line %d); nothing in the WARN's "
                "block set %s" % (txt, n.line, txt),
                n.line,
            )
        if self.ftype not in ("nccl", "macro", "lambda", "void"):
            return Out(
                "nonfatal",
                "falls through to the ordinary `return %s` (line %d) of a `%s` function"
                % (short(txt, 40), n.line, self.ftype),
                n.line,
            )
        return r

    def post_relevant(self, n, state):
        """After falling out of the WARN's block with no error pending, the walk goes on through straight-line
        code (statements, blocks, ifs and loops without exits) to the next exit; it stops -- the WARN's block
        is over and the function goes on -- at a compound statement that can leave on a condition of its own
        (an if/loop/switch with a return/goto/break/continue inside) or a try.  An `if` with exits whose
        condition reads what the WARN is about is followed instead."""
        if n.kind in (
            "return",
            "goto",
            "break",
            "continue",
            "expr",
            "label",
            "case",
            "empty",
            "block",
        ):
            return True
        if n.kind == "try":
            return False
        if n.kind == "do" and self.is_do_once(n):
            return True
        if not self.has_exit(n):
            return True
        if n.kind == "if" and (
            cond_paths(self.cond_toks(n)) & (self.ctx_paths | self.tracked_ids(state))
        ):
            return True
        return False

    def pp_check(self, out):
        """A decision taken by code inside a preprocessor branch that the WARN is not in holds for one
        configuration only: not trusted.  (The walk sees one configuration: FileModel.view.)"""
        if self.region_of is None or out.line is None:
            return out
        try:
            wr = self.region_of[self.warn.line]
            dr = self.region_of[out.line]
        except IndexError:
            return out
        if dr != wr[: len(dr)]:
            return Out(
                "unknown",
                "decided by code inside a preprocessor branch that the WARN is not in (%s)"
                % out.reason,
                out.line,
            )
        return out

    def set_var(self, state, var, new, why, in_tail):
        """Record an assignment; an error overwritten by an undetermined value after the WARN's block is
        'dropped' (the function went on and computed a new result)."""
        old = state.get(var)
        if old is not None and old[0] == "dropped":
            return
        if old is None and not in_tail and new[0] != "err":
            old = self.value_before_warn(var) if var in self.guard_vars() else None
        if old is not None and old[0] == "err" and new[0] in ("unk", "ok") and not in_tail:
            state[var] = ("dropped", why)
        else:
            state[var] = (new[0], why)

    def apply_expr(self, n, state, in_tail=False):
        toks = self.toks(n.s, n.e)
        if toks and toks[-1][1] == ";":
            toks = toks[:-1]
        why = "`%s` (line %d)" % (short(text_of(toks), 60), n.line)
        # a->b = E / a.b = E / *p = E: remembered under the path text (errors stored in result slots)
        eq = next((q for q, t in enumerate(toks) if t[1] == "="), None)
        if (
            eq is not None
            and eq >= 2
            and all(
                t[0] == "id" or t[1] in ("->", ".", "*", "[", "]") or t[0] == "num"
                for t in toks[:eq]
            )
        ):
            st = self.classify_expr(toks[eq + 1 :])
            if st[0] == "err":
                state["@" + text_of(toks[:eq])] = ("err", why)
            return
        # var = E   /  ncclResult_t var = E
        if len(toks) >= 3 and toks[0][0] == "id" and toks[1][1] == "=":
            self.set_var(state, toks[0][1], self.classify_expr(toks[2:]), why, in_tail)
            return
        if (
            len(toks) >= 4
            and toks[0][1] in ("ncclResult_t", "int", "bool", "auto")
            and toks[1][0] == "id"
            and toks[2][1] == "="
        ):
            self.set_var(state, toks[1][1], self.classify_expr(toks[3:]), why, in_tail)
            return
        for q, t in enumerate(toks):
            if t[0] != "id":
                continue
            nx = toks[q + 1][1] if q + 1 < len(toks) else ""
            pv = toks[q - 1][1] if q else ""
            if nx in ("=", "+=", "-=", "|=", "&=", "^=", "++", "--") or pv in ("&", "++", "--"):
                if pv in (".", "->"):
                    continue
                self.set_var(state, t[1], ("unk", ""), why, in_tail)
        if (
            toks
            and toks[0][0] == "id"
            and len(toks) > 1
            and toks[1][1] == "("
            and re.match(r"^[A-Z][A-Z0-9_]*$", toks[0][1])
            and toks[0][1] not in LOG_MACROS
        ):
            e = X.match_paren(toks, 1)
            for a in X.split_args(toks[2:e]) if e else []:
                if len(a) == 1 and a[0][0] == "id" and not re.match(r"^[A-Z][A-Z0-9_]*$", a[0][1]):
                    if "GOTO" in toks[0][1]:
                        self.set_var(
                            state,
                            a[0][1],
                            ("ok", ""),
                            "`%s` did not jump (line %d)" % (short(text_of(toks), 60), n.line),
                            in_tail,
                        )
                    else:
                        self.set_var(state, a[0][1], ("unk", ""), why, in_tail)
                elif len(a) >= 3 and a[0][0] == "id" and a[1][1] == "=" and "CHECK" in toks[0][1]:
                    # NCCLCHECK(ret = call): past it, ret == ncclSuccess
                    self.set_var(
                        state,
                        a[0][1],
                        ("ok", ""),
                        "`%s` passed (line %d)" % (short(text_of(toks), 60), n.line),
                        in_tail,
                    )

    def havoc(self, node, state):
        """A compound statement without exits was passed: variables it may assign lose their value, unless
        they held an error and every assignment inside stores an error too."""
        why = "may be assigned in `%s` (line %d)" % (short(self.ntext(node), 50), node.line)
        for v in set(state) | self.guard_vars():
            vals = [self.assigns(sub, v) for sub in self.sub_nodes(node) if sub.kind == "expr"]
            vals = [x[0] for x in vals if x is not None]
            conds = [
                sub
                for sub in self.sub_nodes(node)
                if sub.cond and self.mentions_assign(self.cond_toks(sub), v)
            ]
            if node.kind != "if" and node.cond and self.mentions_assign(self.cond_toks(node), v):
                conds.append(node)
            if not vals and not conds:
                continue
            cur = self.value(v, state)[0]
            if cur == "err" and not conds and all(x == "err" for x in vals):
                continue
            if cur == "dropped":
                continue
            state[v] = ("unk", why)

    def leave(self, seq, state, tail, post):
        """Falling off the end of seq: the next position, or an Out."""
        o = seq.owner
        left_tail = tail is not None and seq is tail
        errs = [v for v, (s, _) in state.items() if s == "err"]
        if o is None:
            if self.kind == "macro":
                raise FallOut("end of macro body")
            if self.ftype == "void":
                se = self.stored_error(state)
                if se:
                    return Out(
                        "fatal",
                        "stores an error in `%s` (%s), then reaches the end of the void function"
                        % se,
                        None,
                    )
                return Out("nonfatal", "reaches the end of a void function", None)
            return Out("unknown", "falls off the end of a `%s` function" % self.ftype, None)
        if o.kind in LOOPS and not self.is_do_once(o):
            pend = errs or [v for v in self.guard_vars() if self.value(v, state)[0] == "err"]
            if not pend:
                return Out(
                    "nonfatal",
                    "the loop `%s` (line %d) goes on" % (short(self.ntext(o), 60), o.line),
                    o.line,
                )
            return self.loop_goes_on_with_error(o, pend, state)
        if o.kind == "try" or (o.seq is not None and o.seq.role == "catch"):
            t = o if o.kind == "try" else o.seq.owner
            return (
                t.seq,
                t.idx + 1,
                None if left_tail else tail,
                post or (left_tail and not errs and not self.pending_error(state)),
            )
        nxt_post = post
        if left_tail and not errs and not self.pending_error(state):
            nxt_post = True
        if left_tail:
            # the WARN's block is done; its parent block is the new "tail" for nothing
            tail = None
        return (o.seq, o.idx + 1, tail, nxt_post)

    def loop_goes_on_with_error(self, o, pend, state):
        """The loop iterates again with an error in a variable: follow the code after the loop when the
        loop assigns that variable in one place only (so the error survives the remaining iterations)."""
        for v in pend:
            n_assign = sum(
                1
                for sub in self.sub_nodes(o)
                if sub.kind == "expr" and self.assigns(sub, v) is not None
            )
            n_assign += sum(
                1
                for sub in self.sub_nodes(o)
                if sub.kind in ("if", "while", "for", "switch")
                and sub.cond
                and self.mentions_assign(self.cond_toks(sub), v)
            )
            if n_assign > 1:
                return Out(
                    "unknown",
                    "the loop `%s` (line %d) goes on; %s holds an error but may be overwritten in "
                    "a later iteration" % (short(self.ntext(o), 60), o.line, v),
                    o.line,
                )
        if o.kind != "do" and "while" != o.kind and o.kind != "for":
            return Out("unknown", "loop", o.line)
        st = dict(state)
        for v in pend:
            st[v] = self.value(v, state)
        return self.walk(o.seq, o.idx + 1, st, None, False)

    def pending_error(self, state):
        """An ncclResult_t variable that the WARN's guard says holds an error (if (ret != ncclSuccess) WARN)."""
        for v in self.guard_vars():
            st, _ = self.value(v, state)
            if st == "err":
                return True
        return False

    def guard_vars(self):
        vs = set()
        node = self.warn
        while node.seq is not None and node.seq.owner is not None:
            o = node.seq.owner
            if o.kind == "if" and o.cond:
                for t in self.cond_toks(o):
                    if t[0] == "id" and self.implies(
                        self.cond_toks(o), t[1], node.seq.role == "then"
                    ):
                        vs.add(t[1])
            node = o
        return vs

    def cond_assigns(self, n, state, tail):
        """Variables assigned inside a condition: -> {var: (then-state, else-state)}; updates state."""
        out = {}
        ct = self.cond_toks(n)
        for q, t in enumerate(ct):
            if (
                t[0] == "id"
                and q + 1 < len(ct)
                and ct[q + 1][1] == "="
                and (q == 0 or ct[q - 1][1] not in (".", "->"))
            ):
                var = t[1]
                why = "`%s` (line %d)" % (short(self.ntext(n), 60), n.line)
                self.set_var(state, var, ("unk", ""), why, tail is not None)
                th = self.implies(ct, var, True)
                el = self.implies(ct, var, False)
                out[var] = (th, el)
        return out

    def simulate(self, seq, state, tail):
        """Apply the straight-line statements of a sequence without exits to state."""
        for n in seq.items:
            if n.kind == "expr":
                self.apply_expr(n, state, in_tail=tail is not None)
            elif n.kind == "block":
                self.simulate(n.body, state, tail)
            elif n.kind == "if":
                assigned = self.cond_assigns(n, state, tail)
                st_then, st_else = dict(state), dict(state)
                for var, (th, el) in assigned.items():
                    if th is not None:
                        st_then[var] = th
                    if el is not None:
                        st_else[var] = el
                self.merge_if(n, st_then, st_else, state, tail)
            elif n.kind in ("empty", "label", "case"):
                continue
            else:
                self.havoc(n, state)

    def merge_if(self, n, st_then, st_else, state, tail):
        """state after an if without exits: the join of both branches."""
        self.simulate(n.then, st_then, tail)
        if n.els is not None:
            self.simulate(n.els, st_else, tail)
        for v in set(st_then) | set(st_else):
            if v.startswith("#"):
                if v in st_then or v in st_else:
                    state[v] = st_then.get(v) or st_else.get(v)
                continue
            a = st_then[v] if v in st_then else self.value(v, state)
            b = st_else[v] if v in st_else else self.value(v, state)
            if a[0] == b[0]:
                state[v] = a
            else:
                state[v] = (
                    "unk",
                    "differs between the branches of `%s` (line %d)"
                    % (short(self.ntext(n), 50), n.line),
                )

    def do_if(self, n, state, tail, post):
        assigned = self.cond_assigns(n, state, tail)
        v = None if assigned else self.eval_cond(self.cond_toks(n), state)
        st_then, st_else = dict(state), dict(state)
        for var, (th, el) in assigned.items():
            if th is not None:
                st_then[var] = th
            if el is not None:
                st_else[var] = el
        if v is True:
            return self.walk(n.then, 0, st_then, tail, False)
        if v is False:
            if n.els is not None:
                return self.walk(n.els, 0, st_else, tail, False)
            return self.walk(n.seq, n.idx + 1, st_else, tail, post)
        exits = self.has_exit(n)
        if not exits:
            self.merge_if(n, st_then, st_else, state, tail)
            return self.walk(n.seq, n.idx + 1, state, tail, post)
        dependent = bool(cond_paths(self.cond_toks(n)) & (self.ctx_paths | self.tracked_ids(state)))
        a = self.walk(n.then, 0, st_then, tail, False)
        if n.els is not None:
            b = self.walk(n.els, 0, st_else, tail, False)
        else:
            b = self.walk(n.seq, n.idx + 1, st_else, tail, post)
        c = "`%s` (line %d)" % (short(self.ntext(n), 60), n.line)
        if a.dec == b.dec:
            return Out(
                a.dec,
                b.reason if n.els is None else a.reason,
                b.line,
                a.other_warn and b.other_warn,
            )
        if n.els is None and a.dec == "fatal" and b.dec == "nonfatal":
            if not dependent:
                return Out(
                    "nonfatal",
                    "%s; an independent check %s may fail instead" % (b.reason, c),
                    b.line,
                    b.other_warn,
                )
            if a.other_warn:
                return Out(
                    "nonfatal",
                    "%s; a later check %s fails with a WARN of its own" % (b.reason, c),
                    b.line,
                    b.other_warn,
                )
        return Out(
            "unknown",
            "depends on %s: then %s [%s]; else %s [%s]" % (c, a.dec, a.reason, b.dec, b.reason),
            None,
        )


# --------------------------------------------------------------------------------------
# locating the WARN: function bodies, macro bodies, in-place expansion
# --------------------------------------------------------------------------------------


def brace_kind(toks, b):
    """What an opening brace starts: 'ns' (namespace/extern/class), 'init' or 'func'."""
    j = b - 1
    seg = []
    while j >= 0 and toks[j][1] not in (";", "}", "{"):
        seg.append(toks[j])
        j -= 1
    seg.reverse()
    words = [t[1] for t in seg]
    if "namespace" in words or (words[:1] == ["extern"] and any(t[0] == "str" for t in seg)):
        return "ns"
    if words and words[-1] == "=":
        return "init"
    if any(w in ("class", "struct", "union", "enum") for w in words) and ")" not in words:
        return "ns"
    if not words:
        return "init"
    return "func"


def function_of(fm, w):
    """(body open index, close index, return type) of the function whose body holds token w."""
    toks, M = fm.code, fm.match
    encl = []
    depth_stack = []
    for i in range(w):
        x = toks[i][1]
        if x == "{":
            j = M.get(i)
            if j is not None and j > w:
                encl.append(i)
    for b in encl:
        k = brace_kind(toks, b)
        if k == "ns":
            continue
        if k == "init":
            return None
        return b, M[b], return_type(toks, b), function_name(toks, b)
    del depth_stack
    return None


def function_name(toks, b):
    j = b - 1
    while j >= 0 and toks[j][1] != ")":
        j -= 1
    depth = 0
    while j >= 0:
        if toks[j][1] == ")":
            depth += 1
        elif toks[j][1] == "(":
            depth -= 1
            if depth == 0:
                break
        j -= 1
    return toks[j - 1][1] if j > 0 and toks[j - 1][0] == "id" else None


def return_type(toks, b):
    j = b - 1
    seg = []
    while j >= 0 and toks[j][1] not in (";", "}", "{"):
        seg.append(toks[j])
        j -= 1
    seg.reverse()
    # the parameter list: last top-level ( ... ) before the body
    q = len(seg) - 1
    while q >= 0 and seg[q][1] != ")":
        q -= 1
    if q < 0:
        return "unknown", False
    depth = 0
    p = q
    while p >= 0:
        if seg[p][1] == ")":
            depth += 1
        elif seg[p][1] == "(":
            depth -= 1
            if depth == 0:
                break
        p -= 1
    params = [t[1] for t in seg[p + 1 : q]]
    thread = len(params) in (2, 3) and params[0] == "void" and params[1] == "*"
    head = [t[1] for t in seg[: max(p - 1, 0)]]
    head = [
        h
        for h in head
        if h
        not in (
            "static",
            "inline",
            "extern",
            "__host__",
            "__device__",
            "__forceinline__",
            "constexpr",
            "NCCL_API",
            "__attribute__",
            "virtual",
        )
    ]
    if "ncclResult_t" in head:
        return "nccl", False
    if not head or head[-1] == "::" or head == ["~"]:
        return "void", False  # constructor / destructor
    if "void" in head and "*" not in head:
        return "void", False
    return (" ".join(head[-3:]) if head else "unknown"), thread and head[-2:] == ["void", "*"]


def find_node(seq, w):
    """Innermost statement node whose token range holds w."""
    for n in seq.items:
        if n.s <= w <= (n.e if n.e is not None else n.s):
            for sub in (n.then, n.els, n.body):
                if sub is not None:
                    r = find_node(sub, w)
                    if r is not None:
                        return r
            return n
    return None


def build(toks, start, end, match):
    """Parse toks[start:end] as a statement sequence. -> (root Seq, labels)."""
    p = Parser(toks, match)
    root = p.seq(start, end, None, "root")
    labels = {}
    for n in walk_nodes(root):
        if n.kind == "label":
            labels[n.name] = n
    return root, labels


def analyse_in_function(fm, w, region_of=True):
    """Analyse the WARN at code token index w of a file model. -> Out."""
    f = function_of(fm, w)
    if f is None:
        return Out("unknown", "no enclosing function found")
    b, e, (ftype, thread), fname = f
    root, labels = build(fm.code, b + 1, e, fm.match)
    node = find_node(root, w)
    if node is None:
        return Out("unknown", "WARN not found in the parsed function")
    if node.s != w:
        # inside an expression: a lambda body?
        inner = [i for i in range(node.s, w) if fm.code[i][1] == "{" and fm.match.get(i, -1) > w]
        if not inner:
            return Out(
                "unknown",
                "WARN is part of an expression: `%s`"
                % short(text_of(fm.code[node.s : node.e + 1])),
            )
        lb = inner[-1]
        root, labels = build(fm.code, lb + 1, fm.match[lb], fm.match)
        node = find_node(root, w)
        if node is None or node.s != w:
            return Out("unknown", "WARN nested in an expression")
        ftype, thread = "lambda", False
    an = Analysis(
        fm.code,
        fm.match,
        root,
        labels,
        ftype,
        node,
        fm.region if region_of else None,
        "function",
        thread=thread,
    )
    try:
        out = an.run()
        if ftype == "nccl":
            out.func = fname
        return out
    except TooComplex:
        return Out("unknown", "control flow too complex to follow")
    except FallOut as ex:
        return Out("unknown", "falls out: %s" % ex)


# ---------------------------------------------------------------------------------
# macros


def define_body_tokens(d):
    return [(k, t, ln) for (k, t, ln, dead) in d.body]


def substitute_tokens(body, params, variadic, args):
    """Macro argument substitution on a token list (no # / ## processing beyond dropping them)."""
    mapping = {}
    for i, p in enumerate(params):
        if variadic and i == len(params) - 1:
            rest = args[i:]
            joined = []
            for j, a in enumerate(rest):
                if j:
                    joined.append(("punct", ",", 0))
                joined.extend(a)
            mapping[p] = joined
        else:
            mapping[p] = args[i] if i < len(args) else []
    out = []
    i = 0
    while i < len(body):
        t = body[i]
        if t[1] == "#" and i + 1 < len(body) and body[i + 1][1] in mapping:
            out.append(("str", '"..."', t[2]))
            i += 2
            continue
        if t[1] == "##":
            i += 1
            continue
        if t[0] == "id" and t[1] in mapping:
            out.extend(mapping[t[1]])
        else:
            out.append(t)
        i += 1
    return out


class Sites:
    """Everything needed to analyse one (tag, file, line) site."""

    def __init__(self, repo):
        self.repo = repo
        self.models = {}
        self.def_cache = {}

    def model(self, tag, path):
        sha, text = self.repo.show(tag, path)
        if sha is None:
            return None
        if sha not in self.models:
            self.models[sha] = FileModel(text)
        return self.models[sha]

    def root_dir(self, path):
        parts = path.split("/")
        if parts[0] == "src":
            return "src"
        if parts[0] == "plugins":
            return "/".join(parts[:3])
        return "/".join(parts[:2])

    def defines(self, tag, name, path):
        """Definitions of macro `name` at tag visible from path: list of (path, Define)."""
        root = self.root_dir(path)
        key = (tag, name, root)
        if key not in self.def_cache:
            out = []
            for p, ln in self.repo.grep(tag, r"^\s*#\s*define\s+%s\b" % re.escape(name), root):
                fm = self.model(tag, p)
                if fm is None:
                    continue
                for d in fm.defines:
                    if d.name == name and d.line == ln and d.funclike:
                        out.append((p, d))
            self.def_cache[key] = out
        defs = self.def_cache[key]
        local = [x for x in defs if x[0] == path]
        if local:
            return local
        inc = [x for x in defs if "/include/" in x[0]]
        return inc or defs


def analyse_macro_body(d, warn_i, body=None, name=None):
    """Analyse the WARN at token index warn_i of a macro body. -> Out, or raises FallOut."""
    toks = body if body is not None else define_body_tokens(d)
    toks = list(toks)
    if toks and toks[-1][1] not in (";", "}"):
        toks.append(("punct", ";", toks[-1][2]))
    match = match_all(toks)
    root, labels = build(toks, 0, len(toks), match)
    node = find_node(root, warn_i)
    if node is None or node.s != warn_i:
        return Out("unknown", "WARN nested in an expression inside macro %s" % (name or d.name))
    an = Analysis(
        toks,
        match,
        root,
        labels,
        "macro",
        node,
        None,
        "macro",
        params=d.params if body is None else (),
        macro=d.name,
    )
    return an.run()


# --------------------------------------------------------------------------------------
# per-site driver
# --------------------------------------------------------------------------------------

WARN_MACROS = {"WARN", "WARN_INSPECTOR"}


def warn_calls(toks, line):
    return [
        i
        for i, t in enumerate(toks)
        if t[0] == "id"
        and t[1] in WARN_MACROS
        and t[2] == line
        and i + 1 < len(toks)
        and toks[i + 1][1] == "("
    ]


def invocations_at(toks, name, line):
    return [
        i
        for i, t in enumerate(toks)
        if t[0] == "id"
        and t[1] == name
        and t[2] == line
        and i + 1 < len(toks)
        and toks[i + 1][1] == "("
    ]


def combine(outs):
    decs = {o.dec for o in outs}
    if len(decs) == 1:
        return outs[0]
    return Out(
        "unknown", "candidates disagree: " + "; ".join("%s (%s)" % (o.dec, o.reason) for o in outs)
    )


class Decider:
    def __init__(self, repo):
        self.repo = repo
        self.sites = Sites(repo)
        self.memo = {}

    def decide(self, tag, path, line, chains):
        """-> list of (Out, expansion-site or None)."""
        sha, _ = self.repo.show(tag, path)
        key = (sha, path, line, tuple(chains), tag if any(">" in c for c in chains) else None)
        if key in self.memo:
            return self.memo[key]
        r = self._decide(tag, path, line, chains)
        self.memo[key] = r
        return r

    def callers(self, tag, path, fname):
        """One level up: how the direct callers of fname use its result (text search in the tag).
        -> {"propagate": n, "handle": [site, ...], "indirect": n}."""
        key = ("callers", tag, fname, self.sites.root_dir(path))
        if key in self.memo:
            return self.memo[key]
        res = {"propagate": 0, "handle": [], "indirect": 0}
        name = re.escape(fname)
        for p, ln, text in self.repo.grep_text(tag, r"\b%s\b" % name, self.sites.root_dir(path)):
            t = text.split("//")[0]
            if not re.search(r"\b%s\b" % name, t):
                continue
            site = "%s:%d" % (p[4:] if p.startswith("src/") else p, ln)
            if re.search(
                r"^\s*(template\s*<[^>]*>\s*)?((static|inline|extern|__host__|NCCL_API)\s+)*"
                r"(ncclResult_t|NCCL_API\s*\(\s*ncclResult_t)\s*,?\s*(\w+::)?%s\b" % name,
                t,
            ):
                continue  # definition / declaration
            if not re.search(r"\b%s\s*\(" % name, t):
                res["indirect"] += 1  # address taken: called through a table of function pointers
                continue
            m = re.search(
                r"\b([A-Z][A-Z0-9_]*CHECK[A-Z0-9_]*|NCCLWAIT\w*)\s*\(\s*(\(?\s*\w+\s*=\s*)?"
                r"([\w\[\]]+(\.|->))*%s\s*\(" % name,
                t,
            )
            if m or re.search(r"\breturn\s+(\w+\s*\(\s*)?([\w\[\]]+(\.|->))*%s\s*\(" % name, t):
                if m and "GOTO" in m.group(1) and self.label_clears(tag, p, ln, t):
                    res["handle"].append(
                        site + " (its goto label resets the result to ncclSuccess)"
                    )
                else:
                    res["propagate"] += 1
                continue
            res["handle"].append(site)
        self.memo[key] = res
        return res

    def label_clears(self, tag, p, ln, text):
        """NCCLCHECKGOTO(call, ret, label): does `label:` reset ret to ncclSuccess within a few lines?"""
        m = re.search(r",\s*(\w+)\s*,\s*(\w+)\s*\)\s*;?\s*$", text.strip())
        if not m:
            return False
        var, label = m.group(1), m.group(2)
        _, body = self.repo.show(tag, p)
        lines = body.split("\n")
        for i in range(ln, min(len(lines), ln + 400)):
            if re.match(r"^\s*%s\s*:" % re.escape(label), lines[i]):
                chunk = "\n".join(lines[i : i + 12])
                return bool(re.search(r"\b%s\s*=\s*ncclSuccess\b" % re.escape(var), chunk))
        return False

    def _decide(self, tag, path, line, chains):
        if path.endswith(".py"):
            return [
                (Out("unknown", "WARN emitted into generated code by a Python generator"), None)
            ]
        fm = self.sites.model(tag, path)
        if fm is None:
            return [(Out("unknown", "file not found at %s" % tag), None)]
        fm = fm.view(line)
        # 1. a WARN call in code at this line
        ws = warn_calls(fm.code, line)
        if ws:
            outs = []
            for w in ws:
                try:
                    outs.append(analyse_in_function(fm, w))
                except ParseError as ex:
                    outs.append(Out("unknown", "parse error: %s" % ex))
            return [(combine(outs), None)]
        # 2. a WARN call inside a #define body at this line
        for d in fm.defines:
            bt = define_body_tokens(d)
            idx = warn_calls(bt, line)
            if d.funclike and idx:
                return self.macro_site(tag, path, d, idx)
        # 3. an invocation of a wrapper macro at this line: expand it in place
        firsts = sorted({c.split(">")[0] for c in chains if ">" in c})
        for name in firsts:
            inv = invocations_at(fm.code, name, line)
            if inv:
                cs = [c.split(">") for c in chains if c.split(">")[0] == name]
                return [(self.expand_in_place(tag, path, fm, inv[0], cs), None)]
            for d in fm.defines:
                bt = define_body_tokens(d)
                inv = invocations_at(bt, name, line)
                if inv and d.funclike:
                    cs = [c.split(">") for c in chains if c.split(">")[0] == name]
                    return [
                        (
                            Out(
                                "unknown",
                                "wrapper %s invoked inside macro %s: expansion sites not followed"
                                % (name, d.name),
                            ),
                            None,
                        )
                    ]
        return [(Out("unknown", "no WARN call or wrapper invocation found at this line"), None)]

    # ---- WARN literal inside a macro body
    def macro_site(self, tag, path, d, idx):
        outs = []
        try:
            outs = [analyse_macro_body(d, i) for i in idx]
            o = combine(outs)
            return [(Out(o.dec, "in macro %s: %s" % (d.name, o.reason), o.line), None)]
        except ParseError as ex:
            return [(Out("unknown", "parse error in macro %s: %s" % (d.name, ex)), None)]
        except TooComplex:
            return [(Out("unknown", "macro %s too complex" % d.name), None)]
        except FallOut as ex:
            why = str(ex)
        # depends on the expansion: analyse every invocation in the tag
        res = self.per_expansion(tag, path, d, idx, why, depth=0)
        return res

    def per_expansion(self, tag, path, d, idx, why, depth):
        root = self.sites.root_dir(path)
        if not path.endswith((".h", ".hpp", ".cuh", ".hh", ".hxx")):
            root = path  # a macro defined in a source file is used in that file only
        hits = self.repo.grep(tag, r"\b%s\s*\(" % re.escape(d.name), root)
        res = []
        for p, ln in hits:
            fm = self.sites.model(tag, p)
            if fm is None:
                continue
            fm = fm.view(ln)
            for i in invocations_at(fm.code, d.name, ln):
                site = "%s:%d" % (p[4:] if p.startswith("src/") else p, ln)
                res.append((self.expand_literal(fm, i, d, idx, why), site))
            for d2 in fm.defines:
                if d2.name == d.name:
                    continue
                bt = define_body_tokens(d2)
                for i in invocations_at(bt, d.name, ln):
                    site = "%s:%d" % (p[4:] if p.startswith("src/") else p, ln)
                    # the macro is used inside another macro: substitute there and analyse that body
                    o = self.expand_in_macro(tag, p, d2, bt, i, d, idx, why, depth)
                    res.extend(o if isinstance(o, list) else [(o, site)])
        if not res:
            return [
                (
                    Out(
                        "unknown",
                        "in macro %s the outcome depends on the expansion (%s) and no expansion "
                        "was found" % (d.name, why),
                    ),
                    None,
                )
            ]
        return res

    def expand(self, toks, i, d, warn_body_idx):
        """Replace the invocation of d at toks[i] by d's body with arguments substituted.
        Returns (new tokens, index of the target WARN(s) in them, end index of the invocation)."""
        c = X.match_paren(toks, i + 1)
        if c is None:
            return None
        args = X.split_args(toks[i + 2 : c])
        body = define_body_tokens(d)
        # mark the WARN tokens to find them after substitution
        marked = []
        for q, t in enumerate(body):
            if q in warn_body_idx:
                marked.append((t[0], t[1], toks[i][2], "TARGET"))
            else:
                marked.append((t[0], t[1], toks[i][2]))
        new = substitute_tokens(marked, d.params, d.variadic, args)
        new = [(t[0], t[1], toks[i][2]) + ((t[3],) if len(t) > 3 else ()) for t in new]
        end = c
        # a trailing ';' after the invocation stays
        out = (
            toks[:i]
            + [("punct", "{", toks[i][2])]
            + new
            + [("punct", ";", toks[i][2]), ("punct", "}", toks[i][2])]
            + toks[end + 1 :]
        )
        targets = [q for q, t in enumerate(out) if len(t) > 3 and t[3] == "TARGET"]
        out = [t[:3] for t in out]
        return out, targets

    def expand_literal(self, fm, i, d, idx, why):
        r = self.expand(fm.code, i, d, set(idx))
        if r is None:
            return Out("unknown", "cannot expand %s" % d.name)
        toks, targets = r
        sub = FileModel.__new__(FileModel)
        sub.code, sub.defines, sub.region = toks, [], None
        sub.match = match_all(toks)
        outs = []
        for w in targets:
            try:
                outs.append(analyse_in_function(sub, w, region_of=False))
            except ParseError as ex:
                outs.append(Out("unknown", "parse error: %s" % ex))
        o = combine(outs) if outs else Out("unknown", "WARN lost in expansion")
        return Out(o.dec, "macro %s expanded here (%s): %s" % (d.name, why, o.reason), o.line)

    def expand_in_macro(self, tag, p, d2, bt, i, d, idx, why, depth):
        r = self.expand(bt, i, d, set(idx))
        if r is None:
            return Out("unknown", "cannot expand %s inside %s" % (d.name, d2.name))
        toks, targets = r
        outs = []
        try:
            for w in targets:
                outs.append(analyse_macro_body(d2, w, body=toks, name=d2.name))
            o = combine(outs)
            return Out(o.dec, "macro %s inside macro %s: %s" % (d.name, d2.name, o.reason), o.line)
        except FallOut as ex:
            if depth >= 1:
                return Out("unknown", "macro %s inside %s: %s" % (d.name, d2.name, ex))
            # the outer macro also depends on its expansion: go one level further out
            fake = X.Define(
                d2.name,
                d2.params,
                d2.variadic,
                [(t[0], t[1], t[2], False) for t in toks],
                d2.line,
                False,
                True,
            )
            return self.per_expansion(tag, p, fake, targets, "%s; %s" % (why, ex), depth + 1)
        except (ParseError, TooComplex) as ex:
            return Out("unknown", "macro %s inside %s: %s" % (d.name, d2.name, ex))

    # ---- wrapper macros whose WARN format comes from their arguments
    def expand_in_place(self, tag, path, fm, i, chains):
        outs = []
        for chain in chains:
            o = self.expand_chain(tag, path, fm, i, chain)
            outs.append(o)
        return combine(outs)

    def expand_chain(self, tag, path, fm, i, chain):
        toks = fm.code
        pos = i
        # expand chain[0], then find chain[1] inside the expansion, ...
        for depth, name in enumerate(chain[:-1]):
            defs = self.sites.defines(tag, name, path)
            if not defs:
                return Out("unknown", "definition of %s not found at %s" % (name, tag))
            bodies = {text_of(define_body_tokens(dd)): dd for _, dd in defs}
            if len(bodies) > 1:
                return Out(
                    "unknown", "%d different definitions of %s at %s" % (len(bodies), name, tag)
                )
            d = next(iter(bodies.values()))
            nxt = chain[depth + 1]
            body = define_body_tokens(d)
            marks = {
                q
                for q, t in enumerate(body)
                if t[0] == "id" and t[1] == nxt and q + 1 < len(body) and body[q + 1][1] == "("
            }
            # the call whose arguments use the macro's parameters is the template (IBV_PTR_CHECK has a plain
            # WARN("lib wrapper not initialized.") and the template WARN("Call to " name " failed"))
            ps = set(d.params)
            tmpl = set()
            for q in marks:
                e = X.match_paren(body, q + 1)
                if e is not None and any(t[0] == "id" and t[1] in ps for t in body[q + 2 : e]):
                    tmpl.add(q)
            if tmpl:
                marks = tmpl
            if not marks:
                return Out("unknown", "%s not found in the body of %s" % (nxt, name))
            r = self.expand(toks, pos, d, marks)
            if r is None:
                return Out("unknown", "cannot expand %s" % name)
            toks, targets = r
            if len(targets) != 1:
                # several candidate calls: analyse each and combine
                sub_outs = []
                for tpos in targets:
                    sub_outs.append(self._finish(toks, tpos, chain[depth + 1 :], tag, path))
                return combine(sub_outs)
            pos = targets[0]
        return self._finish(toks, pos, [chain[-1]], tag, path)

    def _finish(self, toks, pos, rest, tag, path):
        if rest != ["WARN"]:
            sub = FileModel.__new__(FileModel)
            sub.code, sub.defines, sub.region = toks, [], None
            sub.match = match_all(toks)
            return self.expand_chain(tag, path, sub, pos, rest)
        sub = FileModel.__new__(FileModel)
        sub.code, sub.defines, sub.region = toks, [], None
        sub.match = match_all(toks)
        try:
            return analyse_in_function(sub, pos, region_of=False)
        except ParseError as ex:
            return Out("unknown", "parse error: %s" % ex)


# --------------------------------------------------------------------------------------
# main
# --------------------------------------------------------------------------------------


def aggregate(decs):
    vals = {d["decision"] for d in decs}
    decided = vals - {"unknown"}
    if not decided:
        return "unknown"
    if decided == {"fatal"}:
        return "fatal"
    if decided == {"nonfatal"}:
        return "nonfatal"
    return "mixed"


def main():
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("repo")
    ap.add_argument("formats", help="output of extract.py --all-sites")
    ap.add_argument("out")
    ap.add_argument("--only", help="only formats containing this text (debugging)")
    ns = ap.parse_args()
    t0 = time.time()
    data = json.load(open(ns.formats))
    names = data["tag_names"]
    repo = Repo(ns.repo)
    dec = Decider(repo)
    out_formats = []
    entries = [("src", f) for f in data["formats"] if f["level"] == "WARN"]
    entries += [("plugin", f) for f in data.get("plugin_formats", []) if f["level"] == "WARN"]
    if ns.only:
        entries = [(a, f) for a, f in entries if ns.only in (f["format"] or "")]
    for n, (area, f) in enumerate(entries):
        chains = f.get("macros", [])
        decisions = []
        jobs = []
        for site, runs in f.get("site_runs", {}).items():
            for run in runs:
                jobs.append((site, run[0], run, False))
        for site, tags in f.get("extra_site_tags", {}).items():
            for tg in tags:
                jobs.append((site, tg, None, True))
        for site, label, run, extra in jobs:
            p, _, ln = site.rpartition(":")
            gpath = ("src/" + p) if area == "src" else p
            tag = names[label]
            for o, exp in dec.decide(tag, gpath, int(ln), chains):
                d = {"site": site, "tag": label}
                if run is not None:
                    d["run"] = run
                if extra:
                    d["extra_tag"] = True
                if exp:
                    d["expansion"] = exp
                d["decision"] = o.dec
                d["reason"] = o.reason
                if o.dec == "fatal" and o.func and not exp:
                    c = dec.callers(tag, gpath, o.func)
                    d["callers"] = {
                        "function": o.func,
                        "propagate": c["propagate"],
                        "indirect": c["indirect"],
                    }
                    if c["handle"]:
                        d["callers"]["do_not_propagate"] = c["handle"][:8]
                decisions.append(d)
        e = {
            "format": f["format"],
            "area": area,
            "runs": f["runs"],
            "site_runs": f.get("site_runs", {}),
        }
        if f.get("extra_site_tags"):
            e["extra_site_tags"] = f["extra_site_tags"]
        e["macros"] = chains
        e["fatal"] = aggregate(decisions)
        if e["fatal"] in ("fatal", "mixed"):
            dn = sorted(
                {d["tag"] for d in decisions if d.get("callers", {}).get("do_not_propagate")}
            )
            if dn:
                e["callers_may_recover"] = dn
        e["decisions"] = decisions
        out_formats.append(e)
        if n % 100 == 0:
            log("[%6.1fs] %d/%d formats" % (time.time() - t0, n, len(entries)))
    counts = collections.Counter(e["fatal"] for e in out_formats)
    dcounts = collections.Counter(d["decision"] for e in out_formats for d in e["decisions"])
    out = {
        "generated_from": "%s; warn_fatal.py (tools/nccl_formats/) over %s, sources read from %s"
        % (data["generated_from"], os.path.basename(ns.formats), os.path.abspath(ns.repo)),
        "notes": {
            "fatal": "fatal: every decided site/run is fatal; nonfatal: every decided one is nonfatal; mixed: "
            "both occur; unknown: none decided",
            "decisions": "one per site and run (read at the run's first tag) and per extra 2.3.x tag; "
            "'expansion' is set when a WARN inside a macro body was analysed at each expansion",
            "scope": "local decision: the function (or macro) that printed the WARN returns an error, aborts, or "
            "marks the communicator failed; callers that swallow the error are not followed",
            "callers": "for a fatal decision in an ncclResult_t function: its direct callers in that tag, found by "
            "name (one level only): 'propagate' = NCCLCHECK*/...CHECK...(f(...)) or return f(...); "
            "'do_not_propagate' = any other use (ret = f(), if (f() != ncclSuccess), a goto label that "
            "resets the result); 'indirect' = the name used without a call (function-pointer tables)",
            "callers_may_recover": "tags in which some direct caller of a fatal site does not propagate the error: "
            "the call that printed the WARN fails, but the caller may recover",
        },
        "counts": {
            "formats": dict(sorted(counts.items())),
            "decisions": dict(sorted(dcounts.items())),
        },
        "formats": out_formats,
    }
    with open(ns.out, "w") as fh:
        json.dump(out, fh, indent=1, ensure_ascii=False)
        fh.write("\n")
    log(
        "wrote %s: %d formats %s; decisions %s (%.1fs)"
        % (ns.out, len(out_formats), dict(counts), dict(dcounts), time.time() - t0)
    )


if __name__ == "__main__":
    main()
