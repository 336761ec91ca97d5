"""The POSIX shell script a generated Dockerfile ends with: does the image hold what
the profile needs? (pure: requirements in, script text out)

It runs in the image being built, where hpnet is not installed and Python may not
be, so it is ``sh`` and coreutils only (dash, bash and BusyBox run it). It checks:

- ``libibverbs.so.1`` in a library directory (without it NCCL's IB transport cannot
  load: ``NET/IB : Failed to open libibverbs.so``);
- each provider the profile's NICs need: ``libibverbs/lib<name>-rdmav*.so`` *and*
  ``/etc/libibverbs.d/<name>.driver``. libibverbs only loads the providers a
  ``.driver`` file names (rdma-core ``libibverbs/dynamic_driver.c``: ``load_drivers``
  reads ``IBV_CONFIG_DIR``); without one it lists no device, and NCCL says
  ``NET/IB : No device found``;
- ``librdmacm.so.1`` (a warning: the guides install it, NCCL does not need it);
- the CUDA toolkit (``/usr/local/cuda/version.json``, ``version.txt``, NVIDIA's
  ``CUDA_VERSION``, torch's ``torch/version.py``) and NCCL (``libnccl.so.2.X.Y``,
  pip's ``nvidia_nccl_cu*-X.Y.Z.dist-info``, NVIDIA's ``NCCL_VERSION``) against the
  profile's range; where PyTorch is installed, the NCCL its wheel pins decides (that is
  the one a PyTorch job loads), else any one in range passes; none found is a warning
  (the framework may come later), only versions out of range fail;
- in the image itself (not under ``HPNET_IMAGE_ROOT``), that libibverbs and the
  providers load: ``ldd`` finds every library they need (libnl for rdma-core);
- ``python3``, when the guide requires Python 3 (a warning).

``HPNET_IMAGE_ROOT=DIR sh script`` checks an unpacked image (``docker export``)
instead of ``/``; the environment's ``CUDA_VERSION`` / ``NCCL_VERSION`` then do not
count. Output lines start ``hpnet image verify:``; the exit status is 1 when a
required piece is missing.
"""

from __future__ import annotations

import dataclasses
import shlex

__all__ = ["VerifySpec", "verify_script"]


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class VerifySpec:
    """What one image must hold. ``providers`` empty: any verbs provider will do (the
    node's NICs decide); ``install_hint`` says where the missing pieces come from."""

    profile: str
    providers: tuple[str, ...]
    cuda_min: str | None
    nccl_min: str | None
    nccl_max: str | None
    python: bool
    install_hint: str


#: the dynamic loader's directories in the images the guides use (Debian/Ubuntu
#: multiarch, the RHEL family's lib64, /usr/local from source installs, conda)
LIB_DIRS = (
    "/usr/lib/x86_64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/lib/x86_64-linux-gnu",
    "/lib/aarch64-linux-gnu",
    "/usr/lib64",
    "/lib64",
    "/usr/lib",
    "/lib",
    "/usr/local/lib",
    "/usr/local/lib64",
    "/opt/conda/lib",
)

_PRELUDE = r"""set -u
root=${HPNET_IMAGE_ROOT:-}
failed=0
say() { printf 'hpnet image verify: %s\n' "$*"; }
fail() { printf 'hpnet image verify: FAIL  %s\n' "$*"; failed=1; }
warn() { printf 'hpnet image verify: warn  %s\n' "$*"; }
ok() { printf 'hpnet image verify: ok    %s\n' "$*"; }
# the first file matching the pattern $1 in the library directories, without the root
first() {
  for d in $lib_dirs; do
    for f in "$root$d"/$1; do
      if [ -e "$f" ]; then printf '%s\n' "${f#"$root"}"; return 0; fi
    done
  done
  return 1
}
# ver_ge A B: dotted version A >= B
ver_ge() {
  [ "$(printf '%s\n%s\n' "$1" "$2" | sort -t . -k 1,1n -k 2,2n -k 3,3n | head -n 1)" = "$2" ]
}
# in_range V: V within [min, max.x] (max compares major.minor only)
in_range() {
  if [ -n "$2" ] && ! ver_ge "$1" "$2"; then return 1; fi
  if [ -n "$3" ] && ! ver_ge "$3.99999" "$1"; then return 1; fi
  return 0
}
# torch's version.py and pip's NCCL wheels, wherever Python keeps its packages
found_py=$(find "$root/usr" "$root/opt" -maxdepth 8 \( -path "$root/usr/share" -o -path "$root/usr/include" \) -prune -o \( -path '*-packages/torch/version.py' -o -path '*-packages/torch-*.dist-info/METADATA' -o -name 'nvidia_nccl_cu*.dist-info' \) -print 2>/dev/null)
# loads FILE: its shared-library dependencies resolve (ldd, in the image itself only)
loads() {
  if [ -n "$root" ] || ! command -v ldd >/dev/null 2>&1; then return 0; fi
  missing=$(ldd "$1" 2>&1 | grep 'not found')
  if [ -n "$missing" ]; then printf '%s\n' "$missing" | sed 's/^/    /'; return 1; fi
  return 0
}
"""

_LIBRARIES = r"""if p=$(first 'libibverbs.so.1*'); then
  if loads "$p"; then ok "libibverbs: $p"
  else fail "libibverbs at $p does not load: libraries it needs are missing (above) — $hint"
  fi
else fail "libibverbs.so.1 is missing: NCCL cannot load its IB transport ('NET/IB : Failed to open libibverbs.so') — $hint"
fi
if p=$(first 'librdmacm.so.1*'); then ok "librdmacm: $p"
else warn "librdmacm.so.1 is missing (the guides install it; RDMA CM tools and some plugins need it) — $hint"
fi
"""

_PROVIDER = r"""if p=$(first "libibverbs/lib$prov-rdmav*.so"); then
  if ! loads "$p"; then fail "the $prov provider at $p does not load: libraries it needs are missing (above) — $hint"
  elif [ -e "$root/etc/libibverbs.d/$prov.driver" ]; then ok "verbs provider $prov: $p"
  else fail "the $prov provider is at $p but /etc/libibverbs.d/$prov.driver is missing: libibverbs loads only the providers a .driver file names — $hint"
  fi
else fail "no $prov verbs provider (libibverbs/lib$prov-rdmav*.so): libibverbs will list no $prov device and NCCL says 'NET/IB : No device found' — $hint"
fi
"""

_ANY_PROVIDER = r"""if p=$(first 'libibverbs/lib*-rdmav*.so'); then ok "verbs providers: $(dirname "$p")"
else fail "no verbs provider (libibverbs/lib*-rdmav*.so): libibverbs will list no device — $hint"
fi
"""

_CUDA = r"""cuda=""
if [ -r "$root/usr/local/cuda/version.json" ]; then
  v=$(sed -n '/"cuda"/,/}/ s/.*"version" *: *"\([0-9][0-9.]*\)".*/\1/p' "$root/usr/local/cuda/version.json" | head -n 1)
  if [ -n "$v" ]; then cuda="$cuda $v(/usr/local/cuda)"; fi
elif [ -r "$root/usr/local/cuda/version.txt" ]; then
  v=$(sed -n 's/^CUDA Version \([0-9][0-9.]*\).*/\1/p' "$root/usr/local/cuda/version.txt" | head -n 1)
  if [ -n "$v" ]; then cuda="$cuda $v(/usr/local/cuda)"; fi
fi
if [ -z "$root" ] && [ -n "${CUDA_VERSION:-}" ]; then cuda="$cuda ${CUDA_VERSION}(CUDA_VERSION)"; fi
for f in $found_py; do
  case "$f" in */torch/version.py) ;; *) continue ;; esac
  # "cuda = '12.1'" and, from torch 2, "cuda: Optional[str] = '12.1'"
  v=$(sed -n "s/^cuda[^=]*= *'\([0-9][0-9.]*\)'.*/\1/p" "$f" | head -n 1)
  if [ -n "$v" ]; then cuda="$cuda $v(torch)"; fi
done
judge "CUDA" "$cuda_min" "" "$cuda"
"""

_NCCL = r"""nccl=""
for f in $(for d in $lib_dirs; do ls "$root$d"/libnccl.so.2.* 2>/dev/null; done); do
  v=${f##*/libnccl.so.}
  case "$nccl " in *" $v("*) continue ;; esac  # /lib and /usr/lib are one folder (merged /usr)
  nccl="$nccl $v(${f#"$root"})"
done
if [ -z "$root" ] && [ -n "${NCCL_VERSION:-}" ]; then nccl="$nccl ${NCCL_VERSION%%-*}(NCCL_VERSION)"; fi
for f in $found_py; do
  case "$f" in *.dist-info) ;; *) continue ;; esac
  v=$(printf '%s\n' "${f##*/}" | sed -n 's/^nvidia_nccl_cu[0-9]*-\([0-9][0-9.]*\)\.dist-info$/\1/p')
  if [ -n "$v" ]; then nccl="$nccl $v(pip)"; fi
done
# PyTorch loads the NCCL its wheel pins: where torch is installed, that one decides
pinned=""
for f in $found_py; do
  case "$f" in */METADATA) ;; *) continue ;; esac
  v=$(sed -n 's/^Requires-Dist: *nvidia-nccl-cu[0-9]* *== *\([0-9][0-9.]*\).*/\1/p' "$f" | head -n 1)
  if [ -n "$v" ]; then pinned="$v(torch-pin)"; fi
done
if [ -n "$pinned" ]; then
  if [ -n "$nccl" ]; then say "NCCL also in the image:$nccl (PyTorch jobs load torch's pin)"; fi
  judge "NCCL" "$nccl_min" "$nccl_max" " $pinned"
else
  judge "NCCL" "$nccl_min" "$nccl_max" "$nccl"
fi
"""

_JUDGE = r"""# judge WHAT MIN MAX "V(where) V(where) ...": one in range passes; none found warns
judge() {
  want="$2 or later"
  if [ -n "$3" ]; then want="$2 to $3.x"; fi
  if [ -z "$4" ]; then
    warn "no $1 found in the image (yet): $1 $want is required — the framework or base image you add must bring it"
    return
  fi
  for item in $4; do
    if in_range "${item%%(*}" "$2" "$3"; then ok "$1 $item ($want required)"; return; fi
  done
  fail "$1 found:$4 — $1 $want is required: use a base image (or a framework build) with it"
}
"""

_PYTHON = r"""python=""
if [ -z "$root" ]; then python=$(command -v python3 2>/dev/null)
else
  for f in /usr/bin/python3 /usr/local/bin/python3 /opt/conda/bin/python3; do
    if [ -e "$root$f" ]; then python=$f; break; fi
  done
fi
if [ -n "$python" ]; then ok "python3: $python"
else warn "no python3 in the image (yet): the guide requires Python 3"
fi
"""


def verify_script(spec: VerifySpec) -> str:
    """The script for ``spec``; see the module's docstring for what it checks.

    >>> script = verify_script(VerifySpec(profile="pai-dlc-erdma", providers=("erdma",),
    ...     cuda_min="12.1", nccl_min="2.19", nccl_max=None, python=True,
    ...     install_hint="see the install steps"))
    >>> "for prov in erdma; do" in script, script.rstrip().endswith("exit 0")
    (True, True)
    """
    quote = shlex.quote
    lines = [
        f"# hpnet image verify: what profile {spec.profile} needs in this image",
        "# (HPNET_IMAGE_ROOT=DIR checks an unpacked image instead of /)",
        _PRELUDE.rstrip("\n"),
        "lib_dirs=" + quote(" ".join(LIB_DIRS)),
        "hint=" + quote(spec.install_hint),
        "cuda_min=" + quote(spec.cuda_min or ""),
        "nccl_min=" + quote(spec.nccl_min or ""),
        "nccl_max=" + quote(spec.nccl_max or ""),
        _JUDGE.rstrip("\n"),
        _LIBRARIES.rstrip("\n"),
    ]
    if spec.providers:
        lines.append(f"for prov in {' '.join(quote(p) for p in spec.providers)}; do")
        lines.append(_PROVIDER.rstrip("\n"))
        lines.append("done")
    else:
        lines.append(_ANY_PROVIDER.rstrip("\n"))
    if spec.cuda_min:
        lines.append(_CUDA.rstrip("\n"))
    if spec.nccl_min or spec.nccl_max:
        lines.append(_NCCL.rstrip("\n"))
    if spec.python:
        lines.append(_PYTHON.rstrip("\n"))
    lines += [
        'if [ "$failed" -ne 0 ]; then',
        f"  say {quote(f'NOT READY for {spec.profile}: fix the FAIL lines above')}",
        "  exit 1",
        "fi",
        f"say {quote(f'ready for {spec.profile}')}",
        "exit 0",
    ]
    return "\n".join(lines) + "\n"
