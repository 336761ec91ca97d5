#!/usr/bin/env python3
# ruff: noqa: E501, UP031, B007, PLR0917, RUF059, E741, RUF005, PLW2901, F841
"""Extract every log format string a C/C++ code base prints, across its release tags.

Written for hpnet (tools/nccl_formats/): the NCCL log analyser needs to know every line NCCL can
print, in which releases, and from which call sites.  Without --all-sites its output is the
format list alone (generated_from names extract_formats.py, its first name).

Usage:
    python extract.py REPO OUT.json                          # NVIDIA/nccl (default profile)
    python extract.py --all-sites REPO OUT.json              # + site_runs / extra_site_tags per entry
    python extract.py --profile aws-ofi-nccl REPO OUT.json
    python extract.py --profile nccl-rdma-sharp-plugins REPO OUT.json

REPO is a (bare) git repository, e.g. the mirror of NVIDIA/nccl; everything is read with
`git ls-tree` / `git cat-file`, no work tree is needed.  Standard library only (Python 3.11).
The NCCL run takes about 70 s.

--all-sites: every entry (formats, plugin_formats, macro_templates, disabled_formats) also gets
  site_runs        {"file:line": [[first, last], ...]}: the maximal runs of consecutive release
                   tags in which the entry is printed from exactly that file:line (a call site that
                   moves by one line is a new site), e.g.
                   {"transport/net_ib.cc:2244": [["2.24.3", "2.25.1"]],
                    "transport/net_ib.cc:2358": [["2.26.2", "2.26.6"]]}
  extra_site_tags  {"file:line": ["2.3.5-5", "2.3.7"]}: the extra (2.3.x) tags, which are not part
                   of runs, in which the entry is printed from that file:line.
warn_fatal.py beside this file reads that output.

What is extracted (profile "nccl"):
  * calls of the logging macros WARN / INFO / TRACE / TRACE_CALL / VERSION / ABORT
    (and the profiler-inspector INFO_INSPECTOR / TRACE_INSPECTOR / WARN_INSPECTOR, and the
    vendored doca-gpunetio DOCA_LOG), with the subsystem expression;
  * wrappers: a log call inside a function-like #define whose format is built from the
    macro's parameters (INFO_LOC, SYSCHECK("name"), NCCL_CONFIG_DEFAULT(..., "Blocking", "%d"),
    ...) is a *template*; every invocation of that macro found in the same tag (and the same
    source root) is expanded (parameter substitution, #stringification, __VA_ARGS__,
    recursively through further wrappers) and gives a concrete format at the invocation site;
  * PREFIX: the literal formats given to snprintf/fprintf/strftime inside the logger itself
    (functions ncclDebugLog*, or the WARN/INFO/TRACE #define bodies of 2.3.x, or DOCA's
    doca_gpu_log_print) -- the "%s:%d:%d [%d] NCCL INFO " family;
  * RAW: printf(...) and fprintf(stderr|stdout|ncclDebugFile, ...) outside the logger;
  * MACRO: the string macros VERSION_STRING / NCCL_GIT_VERSION_STRING that are printed
    through "%s", rendered with STR(x) -> %d and unresolved string macros -> %s.

Format strings are the runtime strings: adjacent literals concatenated, C escapes decoded,
PRIx64-style macros rendered as glibc/LP64 expands them (%lx ...), object-like string macros
(#define X "...") substituted when they have one value in the tag.  A format that is not a
literal (a variable, a function call) is recorded with format null and the expression text.
A top-level `cond ? "a" : "b"` format gives both alternatives (flag from_ternary).
Calls inside `#if 0` blocks are not counted as formats; they are listed under disabled_sites.
"""

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import time

# --------------------------------------------------------------------------------------
# profiles
# --------------------------------------------------------------------------------------

# macro -> (level, index of the format argument, index of the subsys argument or None,
#           fixed subsys text or None)
NCCL_LOG_MACROS = {
    "WARN": ("WARN", 0, None, None),
    "INFO": ("INFO", 1, 0, None),
    "TRACE": ("TRACE", 1, 0, None),
    "TRACE_CALL": ("TRACE", 0, None, "NCCL_CALL"),
    "VERSION": ("VERSION", 0, None, None),
    "ABORT": ("ABORT", 0, None, None),
    # plugins/profiler/inspector (plugin area only)
    "INFO_INSPECTOR": ("INFO", 0, None, "NCCL_PROFILE"),
    "TRACE_INSPECTOR": ("TRACE", 0, None, "NCCL_PROFILE"),
    # WARN level only when built with NCCL_INSPECTOR_ENABLE_WARN=1, else an alias of INFO_INSPECTOR
    "WARN_INSPECTOR": ("WARN", 0, None, "NCCL_PROFILE"),
    # vendored doca-gpunetio library (own stderr logger, not NCCL_DEBUG)
    "DOCA_LOG": ("DOCA", 1, 0, None),
    # RAS status report text sent to the `ncclras` client (not the debug log), >= 2.24
    "rasOutAppend": ("RASOUT", 0, None, None),
}

# aws-ofi-nccl: NCCL_OFI_* call the logger NCCL hands to the plugin and prepend a fixed text
# ("NET/OFI ") to the format; the prefix is read from the macro definition in every tag.
AWS_LOG_MACROS = {
    "NCCL_OFI_WARN": ("WARN", 0, None, None),
    "NCCL_OFI_INFO": ("INFO", 1, 0, None),
    "NCCL_OFI_TRACE": ("TRACE", 1, 0, None),
}

# nccl-rdma-sharp-plugins: its own include/debug.h with NCCL's WARN/INFO/TRACE names
SHARP_LOG_MACROS = {
    "WARN": ("WARN", 0, None, None),
    "INFO": ("INFO", 1, 0, None),
    "TRACE": ("TRACE", 1, 0, None),
}

# google/nccl-plugin-gpudirecttcpx: WARN/INFO/TRACE -> ADAPTED_DEBUG_* (NCCL or "native" adapter);
# NCCL_DEBUG_* / NATIVE_DEBUG_* are aliases.  google/nccl-fastsocket: WARN/INFO/TRACE.
TCPX_LOG_MACROS = {}
for _p in ("", "ADAPTED_DEBUG_", "NCCL_DEBUG_", "NATIVE_DEBUG_"):
    TCPX_LOG_MACROS[_p + "WARN"] = ("WARN", 0, None, None)
    TCPX_LOG_MACROS[_p + "INFO"] = ("INFO", 1, 0, None)
    TCPX_LOG_MACROS[_p + "TRACE"] = ("TRACE", 1, 0, None)

NO_MATCH = re.compile(r"(?!x)x")

PROFILES = {
    "nccl": {
        "name": "NVIDIA/nccl",
        "log_macros": NCCL_LOG_MACROS,
        "prefix_macros": (),
        "raw_funcs": True,
        "logger_funcs": re.compile(r"^(ncclDebugLog\w*|doca_gpu_log_print)$"),
        "logger_defines": {"WARN", "INFO", "TRACE", "VERSION"},
        "string_macros": ["VERSION_STRING", "GIT_VERSION_STRING", "NCCL_GIT_VERSION_STRING"],
        "tags": "nccl",
        # top-level directory -> area; "ext-*" handled by area_prefixes
        "areas": {"src": "src", "plugins": "plugin"},
        "area_prefixes": {"ext-": "plugin"},  # ext-net/, ext-tuner/, ext-profiler/ (<= 2.26)
        "py_dirs": ("src",),  # python code generators scanned for emitted calls
        "strip_src": True,
    },
    "aws-ofi-nccl": {
        "name": "aws/aws-ofi-nccl",
        "log_macros": AWS_LOG_MACROS,
        "prefix_macros": ("NCCL_OFI_WARN", "NCCL_OFI_INFO", "NCCL_OFI_TRACE"),
        "raw_funcs": True,
        "logger_funcs": NO_MATCH,
        "logger_defines": set(),
        "string_macros": [],
        "tags": "aws",
        "autoconf": True,
        "areas": {"src": "src", "include": "src", "tests": "tests"},
        "area_prefixes": {},
        "py_dirs": (),
        "strip_src": False,
    },
    "nccl-rdma-sharp-plugins": {
        "name": "Mellanox/nccl-rdma-sharp-plugins",
        "log_macros": SHARP_LOG_MACROS,
        "prefix_macros": (),
        "raw_funcs": True,
        "logger_funcs": NO_MATCH,
        "logger_defines": {"WARN", "INFO", "TRACE"},
        "string_macros": [],
        "tags": "sharp",
        "autoconf": True,
        "areas": {"src": "src", "include": "src"},
        "area_prefixes": {},
        "py_dirs": (),
        "strip_src": False,
    },
    "nccl-plugin-gpudirecttcpx": {
        "name": "google/nccl-plugin-gpudirecttcpx",
        "log_macros": TCPX_LOG_MACROS,
        "prefix_macros": (),
        "raw_funcs": True,
        "logger_funcs": NO_MATCH,
        "logger_defines": set(),
        "string_macros": [],
        "tags": "head",
        "areas": {"src": "src"},
        "area_prefixes": {},
        "py_dirs": (),
        "strip_src": False,
    },
    "nccl-plugin-gpudirect-tcpxo": {
        "name": "google/nccl-plugin-gpudirect-tcpxo",
        "log_macros": {},
        # absl logging: LOG(SEV) << ...; the plugin's LogSink forwards every line to NCCL's logger as
        # "NET/FasTrak <time>: <message>" (INFO -> NCCL_LOG_INFO/NCCL_NET, others -> NCCL_LOG_WARN/NCCL_ALL)
        "stream_macros": {
            "LOG": 0,
            "PLOG": 0,
            "LOG_IF": 0,
            "LOG_FIRST_N": 0,
            "LOG_EVERY_N": 0,
            "LOG_EVERY_N_SEC": 0,
            "LOG_EVERY_POW_2": 0,
            "DLOG": 0,
            "VLOG": None,
        },
        "stream_prefix": {"src": "NET/FasTrak %s: "},
        "stream_subsys": {"src": {"INFO": "NCCL_NET", "WARN": "NCCL_ALL"}},
        "prefix_macros": (),
        "raw_funcs": True,
        "logger_funcs": NO_MATCH,
        "logger_defines": set(),
        "string_macros": [],
        "tags": "vsemver",
        # code linked into the NCCL net plugin vs. the separate RxDM daemon / prober / GPUViz programs
        "areas": {
            "tcpdirect_plugin": "src",
            "dxs": "src",
            "nccl_cuda": "src",
            "cuda_helpers": "src",
            "net_util": "src",
            "dmabuf_bridge": "src",
            "buffer_mgmt_daemon": "daemon",
            "tcpxo_prober": "prober",
            "GPUViz": "gpuviz",
        },
        "area_prefixes": {},
        "py_dirs": (),
        "strip_src": False,
    },
    "nccl-fastsocket": {
        "name": "google/nccl-fastsocket",
        "log_macros": SHARP_LOG_MACROS,
        "prefix_macros": (),
        "raw_funcs": True,
        "logger_funcs": NO_MATCH,
        "logger_defines": set(),
        "string_macros": [],
        "tags": "head",
        "areas": {"": "src"},  # sources at the repository root
        "area_prefixes": {},
        "py_dirs": (),
        "strip_src": False,
    },
}

SOURCE_EXT = (".c", ".cc", ".cu", ".h", ".hpp", ".cpp", ".cuh", ".cxx", ".hh", ".hxx")

# glibc, LP64 (x86_64 / aarch64 Linux)
PRI = {}
for _c in "diouxX":
    for _w, _m in (
        ("8", ""),
        ("16", ""),
        ("32", ""),
        ("64", "l"),
        ("PTR", "l"),
        ("MAX", "l"),
        ("LEAST8", ""),
        ("LEAST16", ""),
        ("LEAST32", ""),
        ("LEAST64", "l"),
        ("FAST8", ""),
        ("FAST16", "l"),
        ("FAST32", "l"),
        ("FAST64", "l"),
    ):
        PRI["PRI" + _c + _w] = _m + _c


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------
# git access
# --------------------------------------------------------------------------------------


def git(repo, *args):
    return subprocess.run(["git", "-C", repo, *args], capture_output=True, check=True).stdout


class BlobReader:
    def __init__(self, repo):
        self.p = subprocess.Popen(
            ["git", "-C", repo, "cat-file", "--batch"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )

    def read(self, sha):
        self.p.stdin.write(sha.encode() + b"\n")
        self.p.stdin.flush()
        header = self.p.stdout.readline().split()
        if len(header) < 3 or header[1] != b"blob":
            raise RuntimeError("cannot read blob %s: %r" % (sha, header))
        size = int(header[2])
        data = self.p.stdout.read(size)
        self.p.stdout.read(1)
        return data

    def close(self):
        self.p.stdin.close()
        self.p.wait()


TAG_RE = re.compile(r"^v(\d+)\.(\d+)\.(\d+)-(\d+)$")


def tag_label(tag):
    m = TAG_RE.match(tag)
    a, b, c, n = m.groups()
    return "%s.%s.%s" % (a, b, c) if n == "1" else "%s.%s.%s-%s" % (a, b, c, n)


AWS_TAG_RE = re.compile(r"^v(\d+)\.(\d+)(?:\.(\d+))?(-aws)?$")


def select_aws_tags(all_tags, repo):
    """v1.x releases (plain and -aws builds; plain before -aws of the same version); v0.9.x as extra.
    Skipped: release candidates (rc) and v1.4.0aws (same commit as v1.4.0-aws)."""
    main, extra, skipped = [], [], []
    for t in all_tags:
        m = AWS_TAG_RE.match(t)
        if not m:
            skipped.append(t)
            continue
        v = (int(m.group(1)), int(m.group(2)), int(m.group(3) or 0), 1 if m.group(4) else 0)
        (main if v[0] >= 1 else extra).append((v, t))
    main.sort()
    extra.sort()
    return [t for _, t in main], [t for _, t in extra], sorted(skipped), {}


def select_sharp_tags(all_tags, repo):
    """v* releases; hpcx-* bundle tags are aliases when they point at a release commit, else extra;
    the branch tip (HEAD) is added as extra when it is not a tagged commit."""

    def commit(ref):
        return git(repo, "rev-parse", ref + "^{commit}").decode().strip()

    rel = []
    for t in all_tags:
        m = re.match(r"^v(\d+(?:\.\d+)*)$", t)
        if m:
            rel.append((tuple(int(x) for x in m.group(1).split(".")), t))
    rel.sort()
    main = [t for _, t in rel]
    by_commit = {commit(t): t for t in main}
    extra, aliases, skipped = [], {}, []
    for t in sorted(all_tags):
        if t in main:
            continue
        if t.startswith("hpcx-"):
            c = commit(t)
            if c in by_commit:
                aliases[t] = by_commit[c]
            else:
                extra.append(t)
        else:
            skipped.append(t)
    head = commit("HEAD")
    if head not in by_commit and all(commit(t) != head for t in extra):
        extra.append("HEAD")
    return main, extra, skipped, aliases


def label_of(tag, profile):
    if profile["tags"] == "nccl":
        return tag_label(tag)
    return tag[1:] if re.match(r"^v\d", tag) else tag


def select_nccl_tags(all_tags):
    main, extra, skipped = [], [], []
    for t in all_tags:
        m = TAG_RE.match(t)
        if not m:
            skipped.append(t)
            continue
        v = tuple(int(x) for x in m.groups())
        if v[0] == 2 and (2, 4, 2) <= v[:3] <= (2, 30, 7):
            main.append((v, t))
        elif v[0] == 2 and v[1] == 3:
            extra.append((v, t))
        else:
            skipped.append(t)
    main.sort()
    extra.sort()
    return [t for _, t in main], [t for _, t in extra], sorted(skipped)


# --------------------------------------------------------------------------------------
# lexer
# --------------------------------------------------------------------------------------

LEX = re.compile(
    r"""
  (?P<nl>\n)
| (?P<ws>(?:[ \t\f\v\r]|\\\r?\n)+)
| (?P<lc>//(?:[^\n\\]|\\\r?\n|\\.)*)
| (?P<bc>/\*[\s\S]*?\*/)
| (?P<raw>(?:u8|[uUL])?R"(?P<delim>[^()\\\s"]{0,16})\([\s\S]*?\)(?P=delim)")
| (?P<str>(?:u8|[uUL])?"(?:[^"\\\n]|\\[\s\S])*")
| (?P<chr>(?:u8|[uUL])?'(?:[^'\\\n]|\\[\s\S])*')
| (?P<num>\.?[0-9](?:[eEpP][+-]|'(?=[0-9A-Za-z])|[0-9A-Za-z_.])*)
| (?P<id>[A-Za-z_$][A-Za-z0-9_$]*)
| (?P<punct>\.\.\.|<<=|>>=|->\*|\#\#|::|->|\+\+|--|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%&|^!=<>]=|[\s\S])
""",
    re.X,
)

# token: (kind, text, line)


def lex(text):
    """Yield (kind, text, line, start, end) for every token, including nl/ws/comments."""
    line = 1
    out = []
    for m in LEX.finditer(text):
        k = m.lastgroup
        if k == "delim":
            k = "raw"
        t = m.group()
        out.append((k, t, line, m.start(), m.end()))
        if k == "nl":
            line += 1
        elif k in ("ws", "lc", "bc", "raw", "str"):
            line += t.count("\n")
    return out


ESC = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
    "e": "\x1b",
}


def decode_c_string(tok):
    """Decode one string-literal token to the characters the program sees."""
    m = re.match(r'^(u8|[uUL])?R"([^(]*)\(([\s\S]*)\)\2"$', tok)
    if m:
        return m.group(3)
    body = re.match(r'^(?:u8|[uUL])?"([\s\S]*)"$', tok).group(1)
    out = []
    i, n = 0, len(body)
    while i < n:
        c = body[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        if i + 1 >= n:
            out.append("\\")
            break
        d = body[i + 1]
        if d == "\n":  # line continuation inside the literal
            i += 2
        elif d == "\r" and body[i + 2 : i + 3] == "\n":
            i += 3
        elif d in ESC:
            out.append(ESC[d])
            i += 2
        elif d in "01234567":
            m = re.match(r"[0-7]{1,3}", body[i + 1 :])
            out.append(chr(int(m.group(), 8)))
            i += 1 + len(m.group())
        elif d == "x":
            m = re.match(r"[0-9A-Fa-f]+", body[i + 2 :])
            if m:
                out.append(chr(int(m.group(), 16) & 0xFF))
                i += 2 + len(m.group())
            else:
                out.append("x")
                i += 2
        elif d in "uU":
            ln = 4 if d == "u" else 8
            h = body[i + 2 : i + 2 + ln]
            try:
                out.append(chr(int(h, 16)))
                i += 2 + ln
            except ValueError:
                out.append(d)
                i += 2
        else:  # unknown escape: gcc keeps the character
            out.append(d)
            i += 2
    return "".join(out)


def tokens_text(toks):
    """Normalised source text of a token list."""
    parts = []
    prev = None
    for t in toks:
        k = t[0]
        if (
            (
                prev is not None
                and prev in ("id", "num", "str", "chr", "raw")
                and k in ("id", "num", "str", "chr", "raw")
            )
            or (prev is not None and parts and parts[-1] == ",")
            or (
                prev is not None
                and (t[1] in ("?", ":") or (parts and parts[-1] in ("?", ":")))
                and t[1] != "::"
                and (not parts or parts[-1] != "::")
            )
        ):
            parts.append(" ")
        parts.append(t[1])
        prev = k
    return "".join(parts)


# --------------------------------------------------------------------------------------
# per-blob parse
# --------------------------------------------------------------------------------------


class Define:
    __slots__ = ("body", "dead", "funclike", "line", "name", "params", "variadic")

    def __init__(self, name, params, variadic, body, line, dead, funclike):
        self.name, self.params, self.variadic = name, params, variadic
        self.body, self.line, self.dead, self.funclike = body, line, dead, funclike

    def key(self):
        return (self.name, tuple(self.params), self.variadic)


def eval_if(toks):
    ts = [t[1] for t in toks]
    while len(ts) >= 2 and ts[0] == "(" and ts[-1] == ")":
        ts = ts[1:-1]
    if ts == ["0"]:
        return 0
    if ts == ["1"]:
        return 1
    return None


def split_directives(all_toks):
    """Return (code_tokens, defines).  code tokens are (kind, text, line, dead)."""
    code = []
    defines = []
    stack = []  # dicts: cur_dead, taken
    bol = True
    i, n = 0, len(all_toks)

    def dead_now():
        return any(e["cur_dead"] for e in stack)

    while i < n:
        k, t, line, s, e = all_toks[i]
        if k == "nl":
            bol = True
            i += 1
            continue
        if k in ("ws", "lc", "bc"):
            i += 1
            continue
        if bol and t == "#":
            j = i + 1
            d = []
            while j < n and all_toks[j][0] != "nl":
                if all_toks[j][0] not in ("ws", "lc", "bc"):
                    d.append(all_toks[j])
                j += 1
            i = j
            if not d:
                continue
            name = d[0][1]
            rest = d[1:]
            if name in ("if", "ifdef", "ifndef"):
                v = eval_if(rest) if name == "if" else None
                stack.append({"cur_dead": v == 0, "taken": v == 1})
            elif name == "elif":
                if stack:
                    ent = stack[-1]
                    v = eval_if(rest)
                    if ent["taken"]:
                        ent["cur_dead"] = True
                    else:
                        ent["cur_dead"] = v == 0
                        if v == 1:
                            ent["taken"] = True
            elif name == "else":
                if stack:
                    ent = stack[-1]
                    ent["cur_dead"] = ent["taken"]
            elif name == "endif":
                if stack:
                    stack.pop()
            elif name == "define" and rest and rest[0][0] == "id":
                nm = rest[0]
                body = rest[1:]
                params, variadic, funclike = [], False, False
                if body and body[0][1] == "(" and body[0][3] == nm[4]:
                    funclike = True
                    j2 = 1
                    while j2 < len(body) and body[j2][1] != ")":
                        tt = body[j2]
                        if tt[0] == "id":
                            if j2 + 1 < len(body) and body[j2 + 1][1] == "...":
                                params.append(tt[1])
                                variadic = True
                            else:
                                params.append(tt[1])
                        elif tt[1] == "...":
                            params.append("__VA_ARGS__")
                            variadic = True
                        j2 += 1
                    body = body[j2 + 1 :]
                dd = dead_now()
                defines.append(
                    Define(
                        nm[1],
                        params,
                        variadic,
                        [(b[0], b[1], b[2], dd) for b in body],
                        nm[2],
                        dd,
                        funclike,
                    )
                )
            continue
        bol = False
        code.append((k, t, line, dead_now()))
        i += 1
    return code, defines


OPEN = {"(": ")", "[": "]", "{": "}"}


def match_paren(toks, i):
    """toks[i] is '('; return index of the matching ')' or None."""
    depth = 0
    stack = []
    for j in range(i, len(toks)):
        t = toks[j][1]
        if t in OPEN:
            stack.append(OPEN[t])
        elif t in (")", "]", "}"):
            if not stack or stack[-1] != t:
                return None
            stack.pop()
            if not stack:
                return j
    return None


def split_args(toks):
    args, cur, depth = [], [], 0
    for t in toks:
        x = t[1]
        if x in OPEN:
            depth += 1
        elif x in (")", "]", "}"):
            depth -= 1
        if x == "," and depth == 0:
            args.append(cur)
            cur = []
        else:
            cur.append(t)
    if cur or args:
        args.append(cur)
    return args


def strip_parens(toks):
    while (
        len(toks) >= 2
        and toks[0][1] == "("
        and toks[-1][1] == ")"
        and match_paren(toks, 0) == len(toks) - 1
    ):
        toks = toks[1:-1]
    return toks


class Call:
    """A call of a log macro / raw print / prefix formatter found in a blob."""

    __slots__ = (
        "args",
        "dead",
        "define",
        "fixed_sub",
        "fmt_idx",
        "generated",
        "kind",
        "level",
        "line",
        "macro",
        "miss",
        "sub_idx",
    )

    def __init__(self, **kw):
        for s in self.__slots__:
            setattr(self, s, kw.get(s))


RAW_FUNCS = {"printf": 0, "fprintf": 1}
PREFIX_FUNCS = {"snprintf": 2, "sprintf": 1, "fprintf": 1, "strftime": 2}
PRINT_STREAMS = {"stderr", "stdout", "ncclDebugFile"}


class BlobParse:
    __slots__ = ("calls", "defines", "funmacros", "misses", "objmacros")


def function_bodies(code, namepat):
    """Ranges (start, end) of code tokens inside bodies of functions whose name matches."""
    out = []
    n = len(code)
    i = 0
    while i < n:
        k, t = code[i][0], code[i][1]
        if k == "id" and namepat.match(t) and i + 1 < n and code[i + 1][1] == "(":
            e = match_paren(code, i + 1)
            if e is not None:
                j = e + 1
                # skip attributes / const / noexcept between ) and {
                while j < n and code[j][1] not in ("{", ";", "}", "(") and j - e < 20:
                    j += 1
                if j < n and code[j][1] == "{":
                    depth = 0
                    for q in range(j, n):
                        if code[q][1] == "{":
                            depth += 1
                        elif code[q][1] == "}":
                            depth -= 1
                            if depth == 0:
                                out.append((j, q, t))
                                i = q
                                break
        i += 1
    return out


ABSL_SEV = {
    "INFO": "INFO",
    "WARNING": "WARN",
    "ERROR": "WARN",
    "FATAL": "WARN",
    "DFATAL": "WARN",
    "QFATAL": "WARN",
    "kInfo": "INFO",
    "kWarning": "WARN",
    "kError": "WARN",
    "kFatal": "WARN",
}


def scan_stream(toks, i, profile, define, calls, misses):
    """LOG(SEV) << a << b ... ;  -> Call(kind='stream', args=[severity tokens, operand, operand, ...])."""
    t = toks[i][1]
    e = match_paren(toks, i + 1)
    if e is None:
        misses.append((toks[i][2], t, "unbalanced parentheses in call"))
        return
    if e + 1 >= len(toks) or toks[e + 1][1] != "<<":
        return
    margs = split_args(toks[i + 2 : e])
    si = profile["stream_macros"][t]
    if si is None:
        level = "INFO"  # VLOG(n)
    else:
        sev = strip_parens(margs[si]) if si < len(margs) else []
        sevtxt = tokens_text(sev).replace("absl::LogSeverity::", "")
        level = ABSL_SEV.get(sevtxt, "INFO_OR_WARN")  # e.g. LOG(LEVEL(x)): decided at run time
    ops, cur, depth = [], [], 0
    j = e + 2
    while j < len(toks):
        x = toks[j][1]
        if x in OPEN:
            depth += 1
        elif x in (")", "]", "}"):
            if depth == 0:
                break
            depth -= 1
        if depth == 0 and x == ";":
            break
        if depth == 0 and x == "<<":
            ops.append(cur)
            cur = []
        else:
            cur.append(toks[j])
        j += 1
    ops.append(cur)
    calls.append(
        Call(
            kind="stream",
            macro=t,
            line=toks[i][2],
            dead=toks[i][3],
            define=define,
            args=ops,
            fmt_idx=0,
            sub_idx=None,
            fixed_sub=None,
            level=level,
        )
    )


def scan_calls(toks, define, profile, in_logger, calls, misses, logger_ranges=None):
    macros = profile["log_macros"]
    streams = profile.get("stream_macros", {})
    n = len(toks)
    for i in range(n):
        k, t = toks[i][0], toks[i][1]
        if k != "id":
            continue
        if (
            t in streams
            and i + 1 < n
            and toks[i + 1][1] == "("
            and not (define is not None and define.name == t)
        ):
            scan_stream(toks, i, profile, define, calls, misses)
            continue
        is_log = t in macros
        is_raw = profile["raw_funcs"] and t in RAW_FUNCS
        is_pre = t in PREFIX_FUNCS
        if not (is_log or is_raw or is_pre):
            continue
        if i + 1 >= n or toks[i + 1][1] != "(":
            continue
        if i > 0 and toks[i - 1][1] in (".", "->", "::") and not is_log:
            continue  # member function named printf etc.
        if is_log and define is not None and define.name == t:
            continue
        if is_log and i > 0 and toks[i - 1][1] in ("void", "static", "int", "char", "*"):
            continue  # a declaration / definition, not a call
        e = match_paren(toks, i + 1)
        line, dead = toks[i][2], toks[i][3]
        if e is None:
            if is_log:
                misses.append((line, t, "unbalanced parentheses in call"))
            continue
        args = split_args(toks[i + 2 : e])
        logger = in_logger
        if logger_ranges is not None:
            logger = any(a < i < b for a, b, _ in logger_ranges)
        if is_log:
            level, fi, si, fixed = macros[t]
            if len(args) <= fi and not any(tt[1] == "__VA_ARGS__" for a in args for tt in a):
                misses.append((line, t, "too few arguments (%d)" % len(args)))
                continue
            calls.append(
                Call(
                    kind="log",
                    macro=t,
                    line=line,
                    dead=dead,
                    define=define,
                    args=args,
                    fmt_idx=fi,
                    sub_idx=si,
                    fixed_sub=fixed,
                    level=level,
                )
            )
            continue
        if logger and is_pre and t != "printf":
            fi = PREFIX_FUNCS[t]
            if t == "fprintf" and (not args or tokens_text(args[0]) not in PRINT_STREAMS):
                continue
            if len(args) > fi:
                calls.append(
                    Call(
                        kind="prefix",
                        macro=t,
                        line=line,
                        dead=dead,
                        define=define,
                        args=args,
                        fmt_idx=fi,
                        sub_idx=None,
                        fixed_sub=None,
                        level="PREFIX",
                    )
                )
            continue
        if is_raw:
            fi = RAW_FUNCS[t]
            if t == "fprintf" and (not args or tokens_text(args[0]) not in PRINT_STREAMS):
                continue
            if len(args) > fi:
                calls.append(
                    Call(
                        kind="raw",
                        macro=t,
                        line=line,
                        dead=dead,
                        define=define,
                        args=args,
                        fmt_idx=fi,
                        sub_idx=None,
                        fixed_sub=None,
                        level="RAW",
                    )
                )


def parse_blob(text, profile):
    toks = lex(text)
    code, defines = split_directives(toks)
    bp = BlobParse()
    bp.calls, bp.misses = [], []
    bp.defines = defines
    ranges = function_bodies(code, profile["logger_funcs"])
    scan_calls(code, None, profile, False, bp.calls, bp.misses, logger_ranges=ranges)
    for d in defines:
        in_logger = d.name in profile["logger_defines"]
        scan_calls(d.body, d, profile, in_logger, bp.calls, bp.misses)
    # macro tables used to evaluate format expressions (string macros, STR(x) stringification)
    objm, funm = {}, {}
    for d in defines:
        if d.dead:
            continue
        if d.funclike:
            funm.setdefault(d.name, []).append((tuple(d.params), d.body))
        else:
            objm.setdefault(d.name, []).append(d.body)
    bp.objmacros, bp.funmacros = objm, funm
    return bp


PY_TRIPLE = re.compile(r"(?s)'\'\'.*?'\'\'|\"\"\".*?\"\"\"")
PY_STR = re.compile(
    r"""(?<![A-Za-z0-9_])([rRuUbBfF]{0,2})('(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")"""
)
PY_COMMENT = re.compile(r"#[^\n]*")


def parse_py(text, profile):
    """C code emitted by a Python generator (src/device/symmetric/generate.py): scan every one-line
    Python string literal that contains a log macro call as C source."""
    bp = BlobParse()
    bp.calls, bp.misses, bp.defines, bp.objmacros, bp.funmacros = [], [], [], {}, {}
    # blank out triple-quoted strings and comments, keeping line numbers
    text = PY_TRIPLE.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), text)
    names = "|".join(re.escape(n) for n in profile["log_macros"])
    for m in PY_STR.finditer(text):
        prefix, lit = m.group(1), m.group(2)
        if "f" in prefix.lower() or "b" in prefix.lower():
            continue
        body = lit[1:-1]
        if not re.search(r"\b(%s)\s*\(" % names, body):
            continue
        line = text.count("\n", 0, m.start()) + 1
        after = text[m.end() : m.end() + 40].lstrip()
        if after.startswith("%") or after.startswith(".format"):
            bp.misses.append(
                (line, "python", "literal is %-formatted / .format()ed by the generator")
            )
            continue
        if "r" not in prefix.lower():
            body = re.sub(
                r"\\(.)", lambda mm: {"n": "\n", "t": "\t"}.get(mm.group(1), mm.group(1)), body
            )
        sub = parse_blob(body, profile)
        for c in sub.calls:
            if c.kind != "log":
                continue
            c.line = line
            c.generated = True
            bp.calls.append(c)
        for ln, mac, why in sub.misses:
            bp.misses.append((line, mac, "in generated code: " + why))
    return bp


def scan_invocations(text, names):
    """All invocations NAME(args) of the given macro names: list of (name, line, args, define, dead)."""
    toks = lex(text)
    code, defines = split_directives(toks)
    out = []

    def scan(ts, define):
        n = len(ts)
        for i in range(n):
            if ts[i][0] == "id" and ts[i][1] in names and i + 1 < n and ts[i + 1][1] == "(":
                if define is not None and define.name == ts[i][1]:
                    continue
                e = match_paren(ts, i + 1)
                if e is None:
                    continue
                out.append((ts[i][1], ts[i][2], split_args(ts[i + 2 : e]), define, ts[i][3]))

    scan(code, None)
    for d in defines:
        scan(d.body, d)
    return out


# --------------------------------------------------------------------------------------
# format evaluation
# --------------------------------------------------------------------------------------


class Unresolved(Exception):
    pass


def split_ternary(toks):
    """cond ? a : b at top level -> (cond, a, b) or None."""
    depth = 0
    q = None
    for i, t in enumerate(toks):
        x = t[1]
        if x in OPEN:
            depth += 1
        elif x in (")", "]", "}"):
            depth -= 1
        elif depth == 0 and x == "?" and q is None:
            q = i
    if q is None:
        return None
    depth, nest = 0, 0
    for i in range(q + 1, len(toks)):
        x = toks[i][1]
        if x in OPEN:
            depth += 1
        elif x in (")", "]", "}"):
            depth -= 1
        elif depth == 0 and x == "?":
            nest += 1
        elif depth == 0 and x == ":":
            if nest == 0:
                return toks[:q], toks[q + 1 : i], toks[i + 1 :]
            nest -= 1
    return None


# Macros that come from the build (nccl.h generated from nccl.h.in, -D flags, generated headers):
# inside a format they are rendered as a placeholder and the entry is flagged.
BUILD_TIME = {
    "NCCL_MAJOR": "%d",
    "NCCL_MINOR": "%d",
    "NCCL_PATCH": "%d",
    "NCCL_SUFFIX": "%s",
    "CUDA_MAJOR": "%d",
    "CUDA_MINOR": "%d",
    "NCCL_GIT_BRANCH": "%s",
    "NCCL_GIT_COMMIT_HASH": "%s",
    "GIT_BRANCH": "%s",
    "GIT_COMMIT_HASH": "%s",
    "NCCL_VERSION_CODE": "%d",
}


class Env:
    """Macro environment of one file in one tag (macros of the same source root)."""

    def __init__(self, objm, funm, path, build_time=None):
        self.objm, self.funm, self.path = objm, funm, path
        self.build_time = BUILD_TIME if build_time is None else build_time
        self.placeholders = False

    def _pick(self, table, name):
        cands = table.get(name)
        if not cands:
            return None
        local = [b for pp, b in cands if pp == self.path]
        use = local if local else [b for _, b in cands]
        first = use[0]
        for b in use[1:]:
            if [x[1] for x in (b[1] if isinstance(b, tuple) else b)] != [
                x[1] for x in (first[1] if isinstance(first, tuple) else first)
            ]:
                return "ambiguous"
        return first

    def string_macro(self, name, depth):
        if name in PRI:
            return PRI[name]
        body = self._pick(self.objm, name)
        if body is None or body == "ambiguous":
            if body is None and name in self.build_time:
                self.placeholders = self.placeholders or "%" in self.build_time[name]
                return self.build_time[name]
            return None
        return eval_concat(body, self, depth + 1)

    def expand_tokens(self, toks, depth):
        """Object-like macro expansion of an argument (for STR(x))."""
        out = []
        for t in toks:
            if t[0] == "id" and depth < 8:
                body = self._pick(self.objm, t[1])
                if body is not None and body != "ambiguous":
                    out.extend(self.expand_tokens(body, depth + 1))
                    continue
                if body is None and t[1] in self.build_time:
                    self.placeholders = self.placeholders or "%" in self.build_time[t[1]]
                    out.append(("str", '"' + self.build_time[t[1]] + '"', t[2], False))
                    continue
                if body == "ambiguous" or re.match(r"^[A-Z][A-Z0-9_]*$", t[1]):
                    raise Unresolved()  # an upper-case name we cannot see: do not guess
            out.append(t)
        return out

    def call_macro(self, name, args, depth):
        """Value of a function-like string macro call, e.g. STR(NCCL_PLUGIN_SYMBOL)."""
        ent = self._pick(self.funm, name)
        if ent is None or ent == "ambiguous" or depth > 8:
            return None
        params, body = ent
        body = strip_parens(body)
        if len(params) != 1 or len(args) != 1:
            return None
        p = params[0]
        if len(body) == 2 and body[0][1] == "#" and body[1][1] == p:
            toks = args[0]  # #p: no expansion of the argument
            if any(t[0] == "str" and t[1].startswith('"%') for t in toks):
                return None
            return tokens_text(toks)
        if (
            len(body) == 4
            and body[0][0] == "id"
            and body[1][1] == "("
            and body[2][1] == p
            and body[3][1] == ")"
        ):
            arg = self.expand_tokens(args[0], depth + 1)  # argument is macro-expanded first
            if any(t[0] == "str" for t in arg):
                # a build-time placeholder: the stringified value is the placeholder itself
                return "".join(decode_c_string(t[1]) if t[0] == "str" else t[1] for t in arg)
            return self.call_macro(body[0][1], [arg], depth + 1)
        return None


def eval_concat(toks, env, depth=0):
    """Evaluate a sequence of string pieces -> str, or raise Unresolved."""
    toks = strip_parens(toks)
    if not toks:
        raise Unresolved()
    out = []
    i = 0
    while i < len(toks):
        t = toks[i]
        if t[0] in ("str", "raw"):
            out.append(decode_c_string(t[1]))
        elif (
            t[0] == "id"
            and i + 1 < len(toks)
            and toks[i + 1][1] == "("
            and env is not None
            and depth < 8
        ):
            e = match_paren(toks, i + 1)
            if e is None:
                raise Unresolved()
            v = env.call_macro(t[1], split_args(toks[i + 2 : e]), depth)
            if v is None:
                raise Unresolved()
            out.append(v)
            i = e
        elif t[0] == "id" and t[1] in PRI:
            out.append(PRI[t[1]])
        elif t[0] == "id" and env is not None and depth < 8:
            v = env.string_macro(t[1], depth)
            if v is None:
                raise Unresolved()
            out.append(v)
        else:
            raise Unresolved()
        i += 1
    return "".join(out)


def eval_format(toks, env):
    """-> (list of alternative strings, is_ternary) or (None, False) when not a literal."""
    toks = strip_parens(toks)
    try:
        return [eval_concat(toks, env)], False
    except Unresolved:
        pass
    tern = split_ternary(toks)
    if tern:
        _, a, b = tern
        ra, _ = eval_format(a, env)
        rb, _ = eval_format(b, env)
        if ra is not None and rb is not None:
            return ra + rb, True
    return None, False


def refs_params(toks, define):
    if define is None or not define.funclike:
        return False
    ps = set(define.params)
    return any(t[0] == "id" and t[1] in ps for t in toks)


def substitute(body_args, define, inv_args):
    """Substitute define params in a list of arg token lists; returns the re-split arg list."""
    params = define.params
    mapping = {}
    for idx, p in enumerate(params):
        if define.variadic and idx == len(params) - 1:
            rest = inv_args[idx:]
            joined = []
            for j, a in enumerate(rest):
                if j:
                    joined.append(("punct", ",", a[0][2] if a else 0, False))
                joined.extend(a)
            mapping[p] = joined
        else:
            mapping[p] = inv_args[idx] if idx < len(inv_args) else []
    flat = []
    for j, a in enumerate(body_args):
        if j:
            flat.append(("punct", ",", 0, False))
        flat.extend(a)
    out = []
    i = 0
    while i < len(flat):
        t = flat[i]
        if (
            t[1] == "#"
            and i + 1 < len(flat)
            and flat[i + 1][0] == "id"
            and flat[i + 1][1] in mapping
        ):
            s = tokens_text(mapping[flat[i + 1][1]])
            out.append(
                ("str", '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"', t[2], False)
            )
            i += 2
            continue
        if t[1] == "##":
            # GNU ", ## __VA_ARGS__": drop the comma when the variadic part is empty
            if (
                out
                and out[-1][1] == ","
                and i + 1 < len(flat)
                and flat[i + 1][1] in mapping
                and not mapping[flat[i + 1][1]]
            ):
                out.pop()
            i += 1
            continue
        if t[0] == "id" and t[1] in mapping:
            out.extend(mapping[t[1]])
        else:
            out.append(t)
        i += 1
    return split_args(out)


# --------------------------------------------------------------------------------------
# per-tag processing
# --------------------------------------------------------------------------------------


def area_of(path, profile):
    top = path.split("/", 1)[0] if "/" in path else ""
    if top in profile["areas"]:
        return profile["areas"][top]
    for pre, area in profile["area_prefixes"].items():
        if top.startswith(pre):
            return area
    return None


def root_of(path, profile):
    """Source root inside which macros are shared (NCCL's bundled plugins are separate programs)."""
    parts = path.split("/")
    if area_of(path, profile) == "src":
        return "src"
    if parts[0] == "plugins":
        return "/".join(parts[:3])
    return "/".join(parts[:2])


def display_path(path, profile):
    parts = path.split("/", 1)
    if profile["strip_src"] and parts[0] == "src" and len(parts) == 2:
        return parts[1]
    return path


def is_source_path(path, profile):
    top = path.split("/", 1)[0]
    if path.endswith(".py") and top in profile["py_dirs"]:
        return True  # code generators (scanned for emitted log calls only)
    if not path.endswith(SOURCE_EXT):
        return False
    return area_of(path, profile) is not None


def list_files(repo, tag, profile):
    raw = git(repo, "ls-tree", "-r", "-z", "--full-tree", tag)
    files = []
    for ent in raw.split(b"\0"):
        if not ent:
            continue
        meta, path = ent.split(b"\t", 1)
        mode, typ, sha = meta.split()
        path = path.decode("utf-8", "replace")
        if typ != b"blob" or not is_source_path(path, profile):
            continue
        files.append((path, sha.decode()))
    files.sort()
    return files


class Extractor:
    def __init__(self, repo, profile):
        self.repo = repo
        self.profile = profile
        self.reader = BlobReader(repo)
        self.text = {}
        self.parsed = {}
        self.inv_cache = {}
        self.prefixes = {}

    def get_text(self, sha):
        if sha not in self.text:
            self.text[sha] = self.reader.read(sha).decode("utf-8", "replace")
        return self.text[sha]

    def get_parse(self, sha, path):
        key = (sha, path.endswith(".py"))
        if key not in self.parsed:
            if key[1]:
                self.parsed[key] = parse_py(self.get_text(sha), self.profile)
            else:
                self.parsed[key] = parse_blob(self.get_text(sha), self.profile)
        return self.parsed[key]

    def invocations(self, sha, names):
        key = (sha, names)
        if key not in self.inv_cache:
            text = self.get_text(sha)
            if not any(re.search(r"\b%s\b" % re.escape(nm), text) for nm in names):
                self.inv_cache[key] = []
            else:
                self.inv_cache[key] = scan_invocations(text, set(names))
        return self.inv_cache[key]

    def process_tag(self, tag):
        prof = self.profile
        files = list_files(self.repo, tag, prof)
        parses = [(p, sha, self.get_parse(sha, p)) for p, sha in files]

        # macro tables per source root: name -> list of (path, body)
        objm = collections.defaultdict(lambda: collections.defaultdict(list))
        funm = collections.defaultdict(lambda: collections.defaultdict(list))
        for p, sha, bp in parses:
            r = root_of(p, prof)
            for nm, bodies in bp.objmacros.items():
                for b in bodies:
                    objm[r][nm].append((p, b))
            for nm, ents in bp.funmacros.items():
                for b in ents:
                    funm[r][nm].append((p, b))

        build_time = dict(BUILD_TIME)
        if prof.get("autoconf"):
            # config.h macros generated by autoconf from AC_INIT([name], [version], ...)
            try:
                ac = git(self.repo, "show", "%s:configure.ac" % tag).decode("utf-8", "replace")
            except subprocess.CalledProcessError:
                ac = ""
            m = re.search(r"AC_INIT\(\s*\[([^\]]+)\]", ac)
            name = m.group(1) if m else "%s"
            build_time.update(
                {
                    "PACKAGE_NAME": name,
                    "PACKAGE_TARNAME": name,
                    "PACKAGE_VERSION": "%s",
                    "PACKAGE_STRING": name + " %s",
                    "VERSION": "%s",
                }
            )

        def make_resolver(path):
            r = root_of(path, prof)
            return Env(objm[r], funm[r], path, build_time)

        # fixed text a log macro prepends to the format (aws-ofi-nccl: "NET/OFI " fmt)
        misses = []
        self.prefixes = {}
        for name in prof["prefix_macros"]:
            found = set()
            for p, sha, bp in parses:
                for d in bp.defines:
                    if d.name != name or not d.funclike or d.dead:
                        continue
                    fi = prof["log_macros"][name][1]
                    if fi >= len(d.params):
                        continue
                    fparam = d.params[fi]
                    body = d.body
                    for j, t in enumerate(body):
                        if t[0] == "id" and t[1] == fparam:
                            k = j
                            while k > 0 and body[k - 1][0] == "str":
                                k -= 1
                            found.add("".join(decode_c_string(x[1]) for x in body[k:j]))
                            break
            if len(found) > 1:
                misses.append(
                    {
                        "file": "(definitions)",
                        "line": 0,
                        "macro": name,
                        "why": "different format prefixes in the tag: %r" % sorted(found),
                        "area": "src",
                    }
                )
            if found:
                self.prefixes[name] = sorted(found)[0]

        sites = []  # dicts
        templates = []  # (level, define, base macro, args, path, line, chain, fmt_idx, sub_idx, fixed_sub, kind)
        disabled = []
        for p, sha, bp in parses:
            for line, macro, why in bp.misses:
                misses.append(
                    {
                        "file": display_path(p, prof),
                        "line": line,
                        "macro": macro,
                        "why": why,
                        "area": area_of(p, prof),
                    }
                )
            resolver = make_resolver(p)
            for c in bp.calls:
                if c.kind == "stream":
                    self.handle_stream(c, p, resolver, sites, disabled)
                    continue
                self.handle_call(
                    c.kind,
                    c.level,
                    c.macro,
                    c.args,
                    c.fmt_idx,
                    c.sub_idx,
                    c.fixed_sub,
                    c.define,
                    p,
                    c.line,
                    c.dead,
                    [c.macro],
                    resolver,
                    sites,
                    templates,
                    disabled,
                    misses,
                    generated=bool(c.generated),
                )

        # expand templates through invocations (worklist; a template can create new templates)
        tmpl_records = []
        seen = set()
        work = list(templates)
        rounds = 0
        while work and rounds < 12:
            rounds += 1
            names = tuple(sorted({t["define"].name for t in work}))
            by_name = collections.defaultdict(list)
            for t in work:
                by_name[t["define"].name].append(t)
            new_work = []
            for t in work:
                t["expansions"] = 0
            for p, sha, bp in parses:
                if p.endswith(".py"):
                    continue
                invs = self.invocations(sha, names)
                if not invs:
                    continue
                resolver = make_resolver(p)
                r = root_of(p, prof)
                for nm, line, iargs, idefine, idead in invs:
                    for t in by_name[nm]:
                        if root_of(t["path"], prof) != r:
                            continue
                        d = t["define"]
                        if (
                            not d.variadic
                            and len(iargs) != len(d.params)
                            and not (len(d.params) == 0 and iargs == [[]])
                        ):
                            continue
                        newargs = substitute(t["args"], d, iargs)
                        key = (t["path"], t["line"], p, line, tuple(t["chain"]))
                        if key in seen:
                            continue
                        seen.add(key)
                        t["expansions"] += 1
                        self.handle_call(
                            t["kind"],
                            t["level"],
                            t["base"],
                            newargs,
                            t["fmt_idx"],
                            t["sub_idx"],
                            t["fixed_sub"],
                            idefine,
                            p,
                            line,
                            idead or t["dead"],
                            [nm] + t["chain"],
                            resolver,
                            sites,
                            new_work,
                            disabled,
                            misses,
                        )
            tmpl_records.extend(work)
            work = new_work
        for t in work:  # left after the round limit
            t["expansions"] = 0
            tmpl_records.extend([t])

        # synthetic MACRO entries (version strings)
        for p, sha, bp in parses:
            for d in bp.defines:
                if d.name in prof["string_macros"] and not d.funclike and not d.dead:
                    env = make_resolver(p)
                    try:
                        fmt = eval_concat(d.body, env)
                    except Unresolved:
                        misses.append(
                            {
                                "file": display_path(p, prof),
                                "line": d.line,
                                "macro": d.name,
                                "why": "string macro not evaluable",
                                "area": area_of(p, prof),
                            }
                        )
                        continue
                    sites.append(
                        {
                            "level": "MACRO",
                            "format": fmt,
                            "expr": None,
                            "subsys": d.name,
                            "file": display_path(p, prof),
                            "line": d.line,
                            "chain": ["#define"],
                            "area": area_of(p, prof),
                            "ternary": False,
                            "kind": "macro",
                            "placeholders": env.placeholders,
                            "generated": False,
                        }
                    )

        tmpl_out = []
        for t in tmpl_records:
            tmpl_out.append(
                {
                    "level": t["level"],
                    "macro": t["define"].name,
                    "base": t["base"],
                    "chain": t["chain"],
                    "expr": t["expr"],
                    "file": display_path(t["path"], prof),
                    "line": t["line"],
                    "area": area_of(t["path"], prof),
                    "expansions": t["expansions"],
                }
            )
        return files, sites, tmpl_out, misses, disabled

    def handle_stream(self, c, path, env, sites, disabled):
        """Render LOG(SEV) << ... as a printf-style format: literal text (with % doubled), the format of an
        absl::StrFormat(...) operand as is, and %s for any other streamed value."""
        prof = self.profile
        area = area_of(path, prof)
        parts, streamed = [], False
        for op in c.args:
            op = strip_parens(op)
            if not op:
                continue
            try:
                parts.append(eval_concat(op, env).replace("%", "%%"))
                continue
            except Unresolved:
                pass
            names = [x[1] for x in op[:4]]
            if op[0][0] == "id" and (
                "StrFormat" in names or "StringF" in names or "StrPrintf" in names
            ):
                k = names.index("StrFormat") if "StrFormat" in names else 0
                if k + 1 < len(op) and op[k + 1][1] == "(":
                    e = match_paren(op, k + 1)
                    fargs = split_args(op[k + 2 : e]) if e is not None else []
                    if fargs:
                        try:
                            parts.append(eval_concat(fargs[0], env))
                            continue
                        except Unresolved:
                            pass
            parts.append("%s")
            streamed = True
        msg = "".join(parts)
        if c.macro == "PLOG":
            msg += ": %s [%d]"  # absl appends ": <strerror> [<errno>]"
        pre = prof.get("stream_prefix", {}).get(area, "")
        subsys = prof.get("stream_subsys", {}).get(area, {}).get(c.level)
        rec = {
            "level": c.level,
            "expr": None,
            "subsys": subsys,
            "file": display_path(path, prof),
            "line": c.line,
            "chain": [c.macro],
            "area": area,
            "ternary": False,
            "kind": "stream",
            "placeholders": False,
            "generated": False,
            "format": pre + msg,
        }
        if pre:
            rec["macro_prefix"] = pre
        if streamed:
            rec["streamed_values"] = True
        (disabled if c.dead else sites).append(rec)

    def handle_call(
        self,
        kind,
        level,
        macro,
        args,
        fi,
        si,
        fixed,
        define,
        path,
        line,
        dead,
        chain,
        resolver,
        sites,
        templates,
        disabled,
        misses,
        generated=False,
    ):
        prof = self.profile
        if len(args) <= fi:
            misses.append(
                {
                    "file": display_path(path, prof),
                    "line": line,
                    "macro": macro,
                    "why": "too few arguments after macro expansion (%d)" % len(args),
                    "area": area_of(path, prof),
                }
            )
            return
        ftoks = args[fi]
        stoks = args[si] if si is not None and si < len(args) else None
        # template: format built from the enclosing macro's parameters
        if (
            define is not None
            and define.funclike
            and refs_params(ftoks, define)
            and define.name not in prof["log_macros"]
        ):
            templates.append(
                {
                    "level": level,
                    "define": define,
                    "base": macro,
                    "args": args,
                    "path": path,
                    "line": line,
                    "chain": chain,
                    "fmt_idx": fi,
                    "sub_idx": si,
                    "fixed_sub": fixed,
                    "kind": kind,
                    "dead": dead,
                    "expr": tokens_text(strip_parens(ftoks)),
                }
            )
            return
        if (
            kind == "log"
            and define is not None
            and define.funclike
            and define.name in prof["log_macros"]
        ):
            return  # the definition of a log macro in terms of another one (WARN_INSPECTOR -> INFO_INSPECTOR)
        subsys = (
            fixed if fixed is not None else (tokens_text(strip_parens(stoks)) if stoks else None)
        )
        resolver.placeholders = False
        alts, tern = eval_format(ftoks, resolver)
        if kind == "prefix" and alts is None:
            return
        if kind == "prefix" and all(a in ("%s", "%d") for a in alts):
            return
        base = {
            "level": level,
            "expr": None,
            "subsys": subsys,
            "file": display_path(path, prof),
            "line": line,
            "chain": chain,
            "area": area_of(path, prof),
            "ternary": tern,
            "kind": kind,
            "placeholders": resolver.placeholders,
            "generated": generated,
        }
        pre = self.prefixes.get(macro, "") if kind == "log" else ""
        if pre:
            base["macro_prefix"] = pre
            if alts is not None:
                alts = [pre + a for a in alts]
        if alts is None:
            rec = dict(base, format=None, expr=tokens_text(strip_parens(ftoks)))
            (disabled if dead else sites).append(rec)
            return
        for a in alts:
            rec = dict(base, format=a)
            (disabled if dead else sites).append(rec)


# --------------------------------------------------------------------------------------
# grouping
# --------------------------------------------------------------------------------------


def runs_of(indices, labels):
    runs = []
    for i in sorted(indices):
        if runs and runs[-1][1] == i - 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    return [[labels[a], labels[b]] for a, b in runs], [a for a, _ in runs]


def site_str(s):
    return "%s:%d" % (s["file"], s["line"])


def group(per_tag, main_labels, extra_labels, keyfn, entryfn, all_sites=False):
    """per_tag: list of (label, is_extra, list of records).

    all_sites: also give every entry 'site_runs' ({"file:line": [[first, last], ...]}, the maximal runs
    of consecutive main tags in which the entry is printed from exactly that file:line) and, when the
    extra tags have it, 'extra_site_tags' ({"file:line": [extra tag, ...]})."""
    groups = collections.defaultdict(
        lambda: {
            "main": collections.defaultdict(list),
            "extra": collections.defaultdict(list),
            "recs": [],
        }
    )
    idx = {lab: i for i, lab in enumerate(main_labels)}
    for label, is_extra, recs in per_tag:
        for r in recs:
            g = groups[keyfn(r)]
            (g["extra"] if is_extra else g["main"])[label].append(r)
            g["recs"].append((label, r))
    out = []
    for key, g in groups.items():
        present = [idx[l] for l in g["main"]]
        runs, firsts = runs_of(present, main_labels)
        sites = {}
        for f in firsts:
            lab = main_labels[f]
            sites[lab] = sorted({site_str(r) for r in g["main"][lab]}, key=site_sort)
        extra = {}
        for lab in extra_labels:
            if lab in g["extra"]:
                extra[lab] = sorted({site_str(r) for r in g["extra"][lab]}, key=site_sort)
        e = entryfn(key, g, main_labels, extra_labels)
        e["runs"] = runs
        e["sites"] = sites
        if extra:
            e["extra_tags"] = extra
        if all_sites:
            at = collections.defaultdict(set)
            for lab, recs in g["main"].items():
                for r in recs:
                    at[site_str(r)].add(idx[lab])
            e["site_runs"] = {s: runs_of(at[s], main_labels)[0] for s in sorted(at, key=site_sort)}
            xat = collections.defaultdict(list)
            for lab in extra_labels:
                for s in sorted({site_str(r) for r in g["extra"].get(lab, ())}, key=site_sort):
                    xat[s].append(lab)
            if xat:
                e["extra_site_tags"] = {s: xat[s] for s in sorted(xat, key=site_sort)}
        out.append(e)
    return out


def site_sort(s):
    f, _, ln = s.rpartition(":")
    return (f, int(ln))


def newest_recs(g, main_labels, extra_labels):
    for lab in reversed(main_labels):
        if lab in g["main"]:
            return g["main"][lab]
    for lab in reversed(extra_labels):
        if lab in g["extra"]:
            return g["extra"][lab]
    return []


def format_entry(key, g, main_labels, extra_labels):
    area, level, fmt, expr = key
    subs = sorted({r["subsys"] for _, r in g["recs"] if r["subsys"] is not None})
    newest = newest_recs(g, main_labels, extra_labels)
    newest_sub = sorted({r["subsys"] for r in newest if r["subsys"] is not None})
    e = {"level": level, "subsys": newest_sub[0] if newest_sub else None, "format": fmt}
    if fmt is None:
        e["expr"] = expr
    if len(subs) > 1:
        e["subsys_variants"] = subs
    macros = sorted({">".join(r["chain"]) for _, r in g["recs"]})
    e["macros"] = macros
    if any(r["ternary"] for _, r in g["recs"]):
        e["from_ternary"] = True
    if any(r.get("placeholders") for _, r in g["recs"]):
        e["build_time_placeholders"] = True
    if any(r.get("generated") for _, r in g["recs"]):
        e["generated_code"] = True
    if any(r.get("streamed_values") for _, r in g["recs"]):
        e["streamed_values"] = True
    pres = sorted({r["macro_prefix"] for _, r in g["recs"] if r.get("macro_prefix")})
    if pres:
        e["macro_prefix"] = pres[0] if len(pres) == 1 else pres
    e["kind"] = g["recs"][0][1]["kind"]
    return e


def template_entry(key, g, main_labels, extra_labels):
    area, level, macro, expr = key
    e = {"level": level, "macro": macro, "expr": expr}
    e["base"] = sorted({r["base"] for _, r in g["recs"]})
    e["expansions_newest"] = sum(r["expansions"] for r in newest_recs(g, main_labels, extra_labels))
    return e


# --------------------------------------------------------------------------------------
# main
# --------------------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("repo")
    ap.add_argument("out")
    ap.add_argument("--profile", default="nccl", choices=sorted(PROFILES))
    ap.add_argument(
        "--all-sites",
        action="store_true",
        help="give every entry 'site_runs' (file:line -> runs of tags printed from exactly that "
        "site) and 'extra_site_tags'",
    )
    ns = ap.parse_args()
    prof = PROFILES[ns.profile]
    repo = ns.repo
    t0 = time.time()

    all_tags = git(repo, "tag").decode().split()
    if prof["tags"] == "nccl":
        main_tags, extra_tags, skipped = select_nccl_tags(all_tags)
        aliases = {}
    elif prof["tags"] == "vsemver":
        vt = []
        for t in all_tags:
            m = re.match(r"^v(\d+(?:\.\d+)*)(?:-(\d+))?$", t)
            if m:
                vt.append((tuple(int(x) for x in m.group(1).split(".")), int(m.group(2) or 0), t))
        vt.sort()
        main_tags = [t for _, _, t in vt]
        extra_tags, aliases = [], {}
        skipped = sorted(set(all_tags) - set(main_tags))
    elif prof["tags"] == "head":
        # no release tags: the newest commit is the only version
        main_tags, extra_tags, skipped, aliases = ["HEAD"], [], sorted(all_tags), {}
    elif prof["tags"] == "aws":
        main_tags, extra_tags, skipped, aliases = select_aws_tags(all_tags, repo)
    else:
        main_tags, extra_tags, skipped, aliases = select_sharp_tags(all_tags, repo)
    log(
        "tags: %d release tags %s .. %s, %d extra (%s), %d skipped (%s), aliases %s"
        % (
            len(main_tags),
            main_tags[0],
            main_tags[-1],
            len(extra_tags),
            " ".join(extra_tags),
            len(skipped),
            " ".join(skipped),
            aliases,
        )
    )
    main_labels = [label_of(t, prof) for t in main_tags]
    extra_labels = [label_of(t, prof) for t in extra_tags]

    ex = Extractor(repo, prof)
    per_tag = []
    per_tag_tmpl = []
    stats = {}
    all_misses = []
    per_tag_disabled = []
    for tag in extra_tags + main_tags:
        lab = label_of(tag, prof)
        is_extra = tag in extra_tags
        files, sites, tmpls, misses, disabled = ex.process_tag(tag)
        per_tag.append((lab, is_extra, sites))
        per_tag_tmpl.append((lab, is_extra, tmpls))
        st = collections.Counter()
        for s in sites:
            st["%s/%s" % (s["area"], s["level"])] += 1
            if s["format"] is None:
                st["%s/nonliteral" % s["area"]] += 1
        st["files"] = len(files)
        st["templates"] = len(tmpls)
        st["disabled"] = len(disabled)
        st["misses"] = len(misses)
        stats[lab] = dict(sorted(st.items()))
        for m in misses:
            all_misses.append(dict(m, tag=lab))
        per_tag_disabled.append((lab, is_extra, disabled))
        log(
            "[%6.1fs] %-10s files=%4d sites=%5d templates=%3d misses=%d disabled=%d"
            % (
                time.time() - t0,
                lab,
                len(files),
                len(sites),
                len(tmpls),
                len(misses),
                len(disabled),
            )
        )
    ex.reader.close()

    def split_area(pt, area):
        return [(lab, ie, [r for r in recs if r["area"] == area]) for lab, ie, recs in pt]

    def fkey(r):
        return (r["area"], r["level"], r["format"], r["expr"] if r["format"] is None else None)

    def tkey(r):
        return (r["area"], r["level"], r["macro"], r["expr"])

    def sortkey(e):
        return (e["level"], e["format"] is None, e["format"] or "", e.get("expr") or "")

    areas = ["src"] + sorted(
        {
            a
            for a in list(prof["areas"].values()) + list(prof["area_prefixes"].values())
            if a != "src"
        }
    )
    by_area = {}
    for area in areas:
        by_area[area] = (
            sorted(
                group(
                    split_area(per_tag, area),
                    main_labels,
                    extra_labels,
                    fkey,
                    format_entry,
                    ns.all_sites,
                ),
                key=sortkey,
            ),
            sorted(
                group(
                    split_area(per_tag_tmpl, area),
                    main_labels,
                    extra_labels,
                    tkey,
                    template_entry,
                    ns.all_sites,
                ),
                key=lambda e: (e["macro"], e["level"], e["expr"]),
            ),
        )

    # de-duplicate misses (same blob, many tags)
    miss_groups = collections.OrderedDict()
    for m in all_misses:
        k = (m["area"], m["file"], m["line"], m["macro"], m["why"])
        miss_groups.setdefault(k, []).append(m["tag"])
    misses_out = [
        {"area": k[0], "site": "%s:%d" % (k[1], k[2]), "macro": k[3], "why": k[4], "tags": v}
        for k, v in sorted(miss_groups.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2]))
    ]
    disabled_out = []
    for area in areas:
        for e in sorted(
            group(
                split_area(per_tag_disabled, area),
                main_labels,
                extra_labels,
                fkey,
                format_entry,
                ns.all_sites,
            ),
            key=sortkey,
        ):
            e["area"] = area
            disabled_out.append(e)

    head = git(repo, "log", "-1", "--format=%H (%cs)", main_tags[-1] + "^{commit}").decode().strip()
    notes = {
        "runs": "maximal runs of consecutive entries of 'tags' (extra_tags are not part of runs; "
        "presence there is listed under each entry's 'extra_tags')",
        "sites": "file:line at the first tag of each run (call line of the macro); for macro-expanded "
        "formats the invocation site"
        + (
            "; paths under src/ are given relative to src/, plugin paths from the repo root"
            if prof["strip_src"]
            else "; paths from the repo root"
        ),
        "format": "runtime string: literals concatenated, escapes decoded, PRIx64 -> %lx (glibc LP64); "
        "null when the format is not a literal (then 'expr' has the expression)",
        "macros": "macro chain from the call site to the log macro, e.g. 'INFO_LOC>INFO_LOC_FN>INFO'",
        "disabled_formats": "calls inside #if 0 blocks (never compiled); same schema as formats, all areas",
        "macro_templates": "log calls inside a #define whose format is built from the macro's parameters; "
        "their invocations are expanded into 'formats'",
    }
    if ns.all_sites:
        notes["site_runs"] = (
            "every file:line the entry is printed from, with the maximal runs of consecutive "
            "entries of 'tags' in which it is printed from exactly that file:line (a site that "
            "moves by one line is a new site)"
        )
        notes["extra_site_tags"] = (
            "file:line -> the extra_tags in which the entry is printed from exactly that "
            "file:line (extra tags are not part of runs)"
        )
    if ns.profile == "nccl":
        notes["levels"] = (
            "WARN/INFO/TRACE/VERSION: NCCL_DEBUG levels (TRACE_CALL is TRACE with subsys NCCL_CALL, "
            "printed as 'NCCL CALL'); PREFIX: literal formats inside the logger that build the line "
            "prefix; RAW: printf/fprintf(stderr|stdout|ncclDebugFile) outside the logger; MACRO: "
            "version string macros printed through '%s'; DOCA: vendored doca-gpunetio stderr logger; "
            "RASOUT: rasOutAppend() text of the RAS status report shown by the ncclras client (>= 2.24)"
        )
        notes["build_time_placeholders"] = (
            "the format contains %d/%s standing for build-time constants "
            "(NCCL_MAJOR, NCCL_SUFFIX, CUDA_MAJOR, git branch/hash), not printf "
            "arguments"
        )
        notes["plugin_formats"] = (
            "ext-net/, ext-tuner/, ext-profiler/ (<= 2.26) and plugins/ (>= 2.27) of the NCCL repo"
        )
    else:
        notes["levels"] = (
            "WARN/INFO/TRACE: the NCCL_DEBUG level the plugin logs at through the logger NCCL "
            "passes to it; RAW: printf/fprintf(stderr|stdout)"
        )
        if prof["prefix_macros"]:
            notes["macro_prefix"] = (
                "text the log macro itself prepends to every format (read from the macro "
                "definition in each tag) -- already included in 'format'"
            )
    out = {
        "generated_from": "git mirror of %s (%s); tags %s..%s (+extra %s); %s = %s; by extract_formats.py "
        "(profile %s)"
        % (
            prof["name"],
            os.path.abspath(repo),
            main_tags[0],
            main_tags[-1],
            ",".join(extra_tags) or "none",
            main_tags[-1],
            head,
            ns.profile,
        )
        + ("; --all-sites (tools/nccl_formats/extract.py)" if ns.all_sites else ""),
        "tags": main_labels,
        "extra_tags": extra_labels,
        "tag_names": {label_of(t, prof): t for t in extra_tags + main_tags},
        "skipped_tags": skipped,
        "notes": notes,
        "formats": by_area["src"][0],
    }
    if aliases:
        out["tag_aliases"] = aliases
    for area in areas[1:]:
        out[area + "_formats"] = by_area[area][0]
    out["macro_templates"] = by_area["src"][1]
    for area in areas[1:]:
        out[area + "_macro_templates"] = by_area[area][1]
    out.update(
        {
            "stats_per_tag": stats,
            "misses": misses_out,
            "disabled_formats": disabled_out,
        }
    )
    with open(ns.out, "w") as f:
        json.dump(out, f, indent=1, ensure_ascii=False, sort_keys=False)
        f.write("\n")
    log(
        "wrote %s: %s, %d misses, %d disabled formats (%.1fs)"
        % (
            ns.out,
            ", ".join(
                "%d %s formats / %d templates" % (len(by_area[a][0]), a, len(by_area[a][1]))
                for a in areas
            ),
            len(misses_out),
            len(disabled_out),
            time.time() - t0,
        )
    )


if __name__ == "__main__":
    main()
