"""A string as a YAML double-quoted scalar that every YAML 1.1 / 1.2 parser reads back
as the same string (the kubelet's manifests are read by Go's yaml, users' by PyYAML
and ruamel).

JSON's double-quoted string is YAML's, with two differences that matter here: YAML
may not hold some characters raw (C0 / C1 controls and DEL, the line breaks YAML 1.1
folds: NEL, LS, PS; the byte-order mark and non-characters), and JSON's ``\\ud83d\\ude00``
surrogate pairs are not YAML (YAML reads each as a lone surrogate). So the text is
written with :func:`json.dumps` keeping non-ASCII characters as they are, and those
characters are escaped as ``\\u`` and four hex digits, which both read alike.
"""

from __future__ import annotations

import json
import re

__all__ = ["double_quoted"]

#: what a YAML double-quoted scalar may not hold raw (YAML 1.2 §5.1 c-printable, and
#: YAML 1.1's line breaks)
_ESCAPE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]")


def double_quoted(text: str) -> str:
    """``text`` as a YAML double-quoted scalar.

    >>> double_quoted('a "b" \\x85 \U0001f600')
    '"a \\\\"b\\\\" \\\\u0085 \U0001f600"'
    """
    quoted = json.dumps(text, ensure_ascii=False)
    return _ESCAPE.sub(lambda m: f"\\u{ord(m.group()):04x}", quoted)
