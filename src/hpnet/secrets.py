"""What counts as a secret, wherever hpnet moves or prints environment values.

A variable is secret when its name says so (a TOKEN, SECRET, PASSWORD, PASSWD, PWD,
KEY, CRED... word or a last word PASS, but not the shell's own PWD and OLDPWD; a
kubeconfig or netrc path, a connection string) or when its value holds a credential
whatever the name (``https://user:pass@host`` in a proxy or package-index
URL, an Azure ``AccountKey=`` / ``SharedAccessSignature=`` connection string, a private
key block). Names NCCL itself reads are never secret by name (``NCCL_IB_PKEY`` is a
partition key), but their values are checked like any other.

The rules of hpnet's promise (docs/security.md): a secret is never forwarded
unless named (``--env NAME``), never inherited by ranks hpnet starts when a remote rank
would not get it either, never written to argv, a printed plan or a file others can
read, and printed as ``<redacted>`` (a URL keeps its scheme, user and host).
"""

from __future__ import annotations

import re

__all__ = [
    "REDACTED",
    "is_secret",
    "looks_secret",
    "redact",
    "redact_text",
    "value_has_secret",
]

REDACTED = "<redacted>"

_SECRET_WORDS = frozenset(
    {"TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "PWD", "KEY", "APIKEY",
     "CRED", "CREDS", "CREDENTIAL", "CREDENTIALS", "AUTH", "PRIVATE", "SESSION",
     "COOKIE", "SIGNATURE", "KUBECONFIG", "NETRC", "CONNSTR", "SAS"}
)  # fmt: skip
_SECRET_PARTS = ("TOKEN", "SECRET", "PASSW", "CRED", "APIKEY", "ACCESSKEY")
#: words that name a secret only as the last word (``DB_PASS``, ``PASS``): elsewhere
#: they are other things (``PASS_THROUGH``), and as a part of a word too (``BYPASS``,
#: ``GIT_ASKPASS``, a program)
_SECRET_LAST_WORDS = frozenset({"PASS"})
#: two words that together name a secret (``AZURE_STORAGE_CONNECTION_STRING``)
_SECRET_PAIRS = (("CONNECTION", "STRING"),)

#: credentials inside a value: a URL's ``user:password@``, connection-string keys,
#: a private key block, an HTTP authorization header
_CREDENTIAL = re.compile(
    r"://[^/\s:@]*:(?!<redacted>@)[^/\s@]+@"
    r"|(?:^|;)\s*(?:AccountKey|SharedAccessKey|SharedAccessSignature|Password|Pwd)\s*="
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----"
    r"|\b(?:Bearer|Basic) [A-Za-z0-9._~+/=-]{16,}",
    re.IGNORECASE,
)
#: the password of a URL, for redacting it alone
_URL_PASSWORD = re.compile(r"(://[^/\s:@]*:)[^/\s@]+(@)")


def looks_secret(name: str) -> bool:
    """Whether a variable's name says it holds a secret.

    >>> [looks_secret(n) for n in ("HF_TOKEN", "AWS_SECRET_ACCESS_KEY", "CRED_FILE",
    ...                             "KUBECONFIG", "AZURE_STORAGE_CONNECTION_STRING",
    ...                             "NCCL_IB_PKEY", "NCCL_IB_HCA", "PWD")]
    [True, True, True, True, True, False, False, False]
    >>> [looks_secret(n) for n in ("MY_PASS", "PASS", "DB_PWD", "OLDPWD", "PASS_THROUGH")]
    [True, True, True, False, False]
    """
    if name == "PWD" or _known_nccl(name):  # the shell's working directory; NCCL's own
        return False
    words = [w for w in re.split(r"[^A-Z0-9]+", name.upper()) if w]
    if any(w in _SECRET_WORDS or any(p in w for p in _SECRET_PARTS) for w in words):
        return True
    if words and words[-1] in _SECRET_LAST_WORDS:
        return True
    return any(all(part in words for part in pair) for pair in _SECRET_PAIRS)


def value_has_secret(value: str) -> bool:
    """Whether a value holds a credential, whatever its variable is called.

    >>> value_has_secret("http://alice:s3cret@proxy.corp:3128")
    True
    >>> value_has_secret("DefaultEndpointsProtocol=https;AccountName=a;AccountKey=abc==")
    True
    >>> value_has_secret("https://pypi.org/simple"), value_has_secret("mlx5_0:1")
    (False, False)
    """
    return bool(_CREDENTIAL.search(value))


def is_secret(name: str, value: str) -> bool:
    """A secret by its name or by its value."""
    return looks_secret(name) or value_has_secret(value)


def redact(name: str, value: str) -> str:
    """``value`` as it may be shown: ``<redacted>`` for a secret; a URL with credentials
    keeps everything but its password.

    >>> redact("HF_TOKEN", "hf_abc"), redact("NCCL_IB_HCA", "mlx5")
    ('<redacted>', 'mlx5')
    >>> redact("PIP_INDEX_URL", "https://bob:pw@pypi.corp/simple")
    'https://bob:<redacted>@pypi.corp/simple'
    """
    if looks_secret(name):
        return REDACTED
    return redact_text(value)


def redact_text(text: str) -> str:
    """Free text (a command line, a value) with the credentials it holds redacted."""
    if not _CREDENTIAL.search(text):
        return text
    text = _URL_PASSWORD.sub(rf"\1{REDACTED}\2", text)
    return REDACTED if _CREDENTIAL.search(text) else text


def _known_nccl(name: str) -> bool:
    if not name.startswith("NCCL_"):
        return False
    from hpnet.nccl.catalog import lookup  # noqa: PLC0415 - the catalog is data, imported late

    return lookup(name) is not None
