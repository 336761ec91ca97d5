"""The literal words without which no artefact reader can match a line (pure, no hpnet
imports: the NCCL log scanner marks the inputs that hold one, so the artefact readers
read only those again).

Each reader's patterns need one of these: a PyTorch watchdog line ("atchdog"), "NCCL
error in:" / "NCCL error: " / TensorRT-LLM's "NCCL error <file>", CuPy's NcclError, a
group's status when the dump signal came ("Received a dump signal ..."),
XLA's "NCCL operation", torch's async "WorkNCCL(...) raised", Horovod's "<call>
failed: ", the "Last error:" block, the traceback paths that name the wrapper (vLLM,
SGLang, TensorRT-LLM) or the failing call (", in ncclX"); a RAS text report's header
and table lines, RAS's JSON (``"nccl_version"`` first).
"""

from __future__ import annotations

import re

__all__ = ["FRAMEWORK_WORDS", "MARKS", "RAS_WORDS", "RCCL_BYTES", "RCCL_WORDS"]

FRAMEWORK_WORDS = (
    "atchdog",
    "Heartbeat monitor",  # 2.3-2.4: the watchdog stuck, no watchdog word in the line
    "NCCL error",
    "NcclError",
    "NCCL operation",
    "WorkNCCL",
    "dump signal",  # a group's status when the dump signal came (no watchdog word in it)
    " failed: ",
    "Last error",
    "vllm/",
    "sglang/",
    "tensorrt_llm",
    "pynccl_wrapper",
    ", in nccl",
)
#: a literal of each of the RAS text report's line starts (hpnet.artefacts.scan)
RAS_WORDS = ("Job summary", "Comms", ") MISMATCH", ") ERROR", ") INCOMPLETE", "compiled with CUDA")
#: any of them, in a line of bytes
MARKS = re.compile(
    "|".join(re.escape(w) for w in (*FRAMEWORK_WORDS, *RAS_WORDS, '"nccl_version"')).encode()
)
#: the literal words of an RCCL log's own lines (hpnet.artefacts.rccl.RCCL_MARK): NCCL-
#: shaped INFO lines, so looked for in the whole text, at memory speed
RCCL_WORDS = ("RCCL version", "librccl", "/hipify/src/", "ROCr version", "rocprofiler-sdk-rccl")
RCCL_BYTES = tuple(w.encode() for w in RCCL_WORDS)
