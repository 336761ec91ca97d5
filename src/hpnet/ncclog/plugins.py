"""Which network plugin wrote a line: by the source file (or function) its WARN names.

Network plugins only: a CollNet plugin (SHARP's ``sharp_plugin.c``) carries no
point-to-point traffic, so its lines say nothing of the network NCCL chose.

NCCL's WARN prefix carries ``file:line`` of the call (``__FILE__``; aws-ofi-nccl and
the TCPX plugins pass ``__PRETTY_FUNCTION__`` instead). The plugins' own source files
have names NCCL's tree never uses, so a WARN from them says which plugin was running
even when the log shows no ``Using network`` line. The names come from the plugins'
source trees (release tags of aws/aws-ofi-nccl, Mellanox/nccl-rdma-sharp-plugins,
google/nccl-fastsocket, google/nccl-plugin-gpudirecttcpx and -tcpxo), and the network
names are the ones each plugin prints as ``NET/<name>`` and reports to NCCL.
"""

from __future__ import annotations

import re

__all__ = ["PLUGIN_NETWORKS", "ofi_test_log_warn", "plugin_of"]

#: (pattern over a WARN's ``where``, the network name NCCL shows for that plugin)
PLUGIN_NETWORKS: tuple[tuple[re.Pattern[str], str], ...] = (
    # aws-ofi-nccl: src/nccl_ofi_*.c(pp), and __PRETTY_FUNCTION__ of nccl_net_ofi_*
    (re.compile(r"(?:^|/)nccl_ofi_\w+\.c(?:pp)?$|\bnccl_net_ofi_\w+\("), "AWS Libfabric"),
    # nccl-rdma-sharp-plugins: src/ib_plugin.c / p2p_plugin.c (IBext), ucx*_plugin.c
    (re.compile(r"(?:^|/)(?:ib|p2p)_plugin\.c$"), "IBext"),
    (re.compile(r"(?:^|/)ucx_rma_plugin\.c$"), "UCX_RMA"),
    (re.compile(r"(?:^|/)ucx_plugin\.c$"), "UCX"),
    # google/nccl-fastsocket: net_fastsocket.cc ("NET/FastSocket")
    (re.compile(r"(?:^|/)net_fastsocket\.cc$"), "FastSocket"),
    # google/nccl-plugin-gpudirecttcpx: net_tcpx.cc, tcpx* functions ("NET/GPUDirectTCPX")
    (re.compile(r"(?:^|/)net_tcpx\.cc$|\btcpx\w*\("), "GPUDirectTCPX"),
    # google/nccl-plugin-gpudirect-tcpxo: fastrak_plugin.cc ("NET/FasTrak")
    (re.compile(r"(?:^|/)fastrak_plugin\.cc$|\bfastrak\w*\(", re.IGNORECASE), "FasTrak"),
)


def plugin_of(where: str | None) -> str | None:
    """The plugin whose source ``where`` (a WARN's ``file.c:123`` or function) is in.

    >>> plugin_of("ib_plugin.c:1615"), plugin_of("transport/net_ib.cc:2244")
    ('IBext', None)
    >>> plugin_of("tcpxResult_t tcpxCommProgress(tcpxComm*):1231")
    'GPUDirectTCPX'
    """
    if not where:
        return None
    place = where.rsplit(":", 1)[0]
    for pattern, name in PLUGIN_NETWORKS:
        if pattern.search(place):
            return name
    return None


#: aws-ofi-nccl's test programs (nccl_message_transfer, ring, ...) log through their own
#: logger, not NCCL's: ``WARN: Function: <function> Line: <n>: `` then the plugin's
#: message (tests/functional/test-common.h, tests/unit/test-common.h, every release),
#: behind whatever a launcher puts first (pdsh's ``10.3.35.83: ``)
_TEST_PROGRAM_WARN = re.compile(r"(?:^|\s)WARN: Function: (\w+) Line: (\d+): (\S.*)$")


def ofi_test_log_warn(text: str) -> tuple[str, str] | None:
    """The function and line (as a WARN's ``where``) and the message of a WARN an
    aws-ofi-nccl test program printed, if ``text`` is one.

    >>> ofi_test_log_warn("10.3.35.83: WARN: Function: main Line: 66: NET/OFI OFI NCCL failure: 2")
    ('main:66', 'NET/OFI OFI NCCL failure: 2')
    """
    found = _TEST_PROGRAM_WARN.search(text)
    return (f"{found.group(1)}:{found.group(2)}", found.group(3).strip()) if found else None
