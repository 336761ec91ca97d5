"""Known failure signatures in NCCL logs: data, each with its cause and fix.

A signature is a regular expression over the text of WARN lines, INFO lines that
report a failure, and framework lines around NCCL (PyTorch's watchdog, nccl-tests'
"Test NCCL failure"). Every pattern is written against the format string in NCCL's
source that prints it (file named in ``source``) and tested on real logs under
``tests/data/nccl-logs/``. The order matters only for ``exclusive`` signatures,
which stop a line from also matching the generic ones after them.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from hpnet.ncclog.messages import CRASH_REPORT, LAUNCHER_FAILED, TESTS_WRONG

if TYPE_CHECKING:
    from hpnet.ncclog.model import NcclLog, ProcessLog

__all__ = ["IN_CONTEXT", "SIGNATURES", "Signature", "in_context"]


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Signature:
    id: str
    severity: str  # "error", "warning" or "info"
    title: str
    pattern: re.Pattern[str]
    cause: str
    fix: str
    source: str  # the NCCL (or framework) source that prints it
    #: a line matched by this signature matches no later one
    exclusive: bool = False
    #: a generic consequence (an abort, a timeout, "unhandled system error"): shown
    #: after the specific causes found in the same log
    consequence: bool = False
    #: (pattern, fatal): a WARN line the pattern matches is an error whatever the process
    #: did after it, and a failure when ``fatal`` (a device-fatal event of a warning
    #: signature; a plugin that gave up, which NCCL goes on without)
    escalate: tuple[re.Pattern[str], bool] | None = None
    #: NCCL goes on after it (falls back): a failure only when the process did not
    survivable: bool = False


def _sig(  # noqa: PLR0917 - a row of the table below reads best positionally
    id: str,
    severity: str,
    title: str,
    pattern: str,
    cause: str,
    fix: str,
    source: str,
    *,
    exclusive: bool = False,
    consequence: bool = False,
    survivable: bool = False,
    escalate: tuple[str, bool] | None = None,
) -> Signature:
    return Signature(
        id=id,
        severity=severity,
        title=title,
        pattern=re.compile(pattern),
        cause=cause,
        fix=fix,
        source=source,
        exclusive=exclusive,
        consequence=consequence,
        survivable=survivable,
        escalate=(re.compile(escalate[0]), escalate[1]) if escalate else None,
    )


SIGNATURES: tuple[Signature, ...] = (
    _sig(
        "libibverbs-missing",
        "warning",  # an error only when traffic then went over sockets (socket-fallback)
        "libibverbs cannot be loaded: NCCL cannot use RDMA at all",
        r"Failed to open libibverbs|libibverbs\.so[.\d]*: cannot open shared object"
        r"|Count not open libibverbs\.so\.1\b",
        "the RDMA user-space library (rdma-core's libibverbs) is not installed in this "
        "image, so the IB transport is off and NCCL falls back to sockets",
        "install rdma-core's libibverbs and the verbs provider for the NIC in the image "
        "(Debian/Ubuntu: apt-get install libibverbs1 ibverbs-providers; RHEL: dnf install "
        "rdma-core libibverbs), then `hpnet detect` in the container lists the devices",
        'src/misc/ibvsymbols.cc ("Failed to open libibverbs.so[.1]"; 2.30.3+: "Count not '
        'open %s" per library, the last libibverbs.so.1, ibvsymbols.cc:86 @2.30.7)',
        exclusive=True,
    ),
    _sig(
        "bootstrap-no-interface",
        "error",
        "no network interface for NCCL's bootstrap",
        r"Bootstrap ?: no socket interface found|NET/Socket ?: no interface found"
        r"|no usable interface found|Unable to find (?:any )?interface"
        r"|connecting to address\s+with family \d+ is neither AF_INET",
        "NCCL_SOCKET_IFNAME matches no interface that is up with an address in this "
        "network namespace (a typo, an interface of another node, or a container without "
        "host networking)",
        "set NCCL_SOCKET_IFNAME to an interface `ip -br addr` shows up with an address "
        "(`hpnet env` picks one), or unset it",
        "src/bootstrap.cc, src/transport/net_socket.cc",
        exclusive=True,
    ),
    _sig(
        "no-net-plugin",
        "error",
        "no network module could be initialised",
        r"Failed to initialize any NET plugin",
        "NCCL_NET names a module that is not there (a plugin's name without its "
        "libnccl-net-*.so, or IB on a node without RDMA devices), so even the Socket "
        "fallback was not allowed",
        "unset NCCL_NET, or install the plugin it names; on a node without RDMA use "
        "NCCL_NET=Socket",
        'src/plugin/net.cc ("Failed to initialize any NET plugin")',
        exclusive=True,
    ),
    _sig(
        "net-plugin-load-failed",
        "warning",
        "a network plugin was found but could not be loaded",
        r"NET/Plugin ?: (?:Plugin load (?:\([^)]*\) )?returned \d+ : (?!\S+: cannot open shared "
        r"object file: No such file)|Failed to find ncclNetPlugin symbol \(>= v\d+\)"
        r"|.*undefined symbol|Failed to (?:load|initialize))"
        r"|Failed to initialize NET plugin (?!IB\b)",
        "the plugin was built for another NCCL (its ncclNetPlugin_vN symbols do not match "
        "this NCCL) or misses a library it links against, so NCCL used its internal "
        "modules instead (AIACC supports NCCL 2.8-2.16 only)",
        "install the plugin build that matches this NCCL, or set NCCL_NET_PLUGIN=none to "
        "stop loading it",
        "src/plugin/plugin_open.cc, src/plugin/net.cc",
    ),
    _sig(
        "modify-qp-enodev",
        "error",
        "RDMA connection setup failed: No such device (the GID's netdev is not here)",
        r"ibv_modify_qp failed with (?:19\b|error )?\s*No such device",
        "the GID NCCL uses belongs to a netdev that is not in this network namespace "
        "(a RoCE GID of another container's macvlan/SR-IOV interface), or the index "
        "points at an empty or RoCE v1 entry",
        "choose a RoCE v2 IPv4 GID whose netdev is in this namespace: `hpnet env` "
        "computes NCCL_IB_GID_INDEX; on NCCL >= 2.21.5 unset it to let NCCL choose",
        'src/misc/ibvwrap.cc ("Call to ibv_modify_qp failed with %d %s")',
        exclusive=True,
    ),
    _sig(
        "modify-qp-etimedout",
        "error",
        "RDMA connection setup timed out (ibv_modify_qp: Connection timed out)",
        r"ibv_modify_qp failed with (?:110\b|error )?\s*Connection timed out",
        "the two NICs could not reach each other at the RDMA level: different GID "
        "index or address family on the two nodes, no route between their subnets, or "
        "a fabric / switch (PFC, VLAN) problem",
        "make NCCL_IB_GID_INDEX select the same kind of GID on every node (`hpnet env` "
        "on each), check RoCE routing between the subnets (ib_write_bw between the "
        "two hosts)",
        "src/misc/ibvwrap.cc",
        exclusive=True,
    ),
    _sig(
        "modify-qp-enetunreach",
        "error",
        "RDMA connection setup failed: Network is unreachable",
        r"ibv_modify_qp failed with (?:101\b|error )?\s*Network is unreachable",
        "the RoCE GID's IP address has no route to the peer's (link-local GID across "
        "subnets, or a GID of an interface without a route)",
        "use an IPv4-mapped RoCE v2 GID on a routed interface (`hpnet env` sets "
        "NCCL_IB_GID_INDEX); check `ip route` to the peer",
        "src/misc/ibvwrap.cc",
        exclusive=True,
    ),
    _sig(
        "modify-qp-failed",
        "error",
        "RDMA connection setup failed (ibv_modify_qp)",
        r"ibv_modify_qp failed",
        "the queue pair could not be moved to a connected state: GID index, MTU, "
        "traffic class or port state do not agree between the two sides",
        "run `hpnet doctor` on both nodes (vars.gid, ports.state) and compare "
        "`hpnet env` output between them",
        "src/misc/ibvwrap.cc",
        exclusive=True,
    ),
    _sig(
        "ib-async-event",
        "warning",  # NCCL goes on after it; an error when the failures after it follow from it
        "the RDMA NIC reported an asynchronous event (a port's, a queue pair's or the subnet "
        "manager's)",
        # "NET/IB : Got async event : %s" (2.4-2.19), "NET/IB : %s:%d Got async event : %s"
        # (2.20-2.22), "... Got non-fatal async event: %s(%d)" (2.28.7+): ibv_get_async_event's
        # ibv_event_type_str() text (transport/net_ib.cc, transport/net_ib/common.cc)
        # 2.23-2.30: "Got async error event: %s", "async fatal event on QP (%p): %s",
        # "... on CQ", "async fatal event: %s"
        r"Got (?:non-fatal )?async (?:error )?event ?: ?|async fatal event\b",
        "the NIC or the driver raised an event on a port or a queue pair: 'local access "
        "violation work queue error' / 'local work queue catastrophic error' (a queue pair hit a "
        "memory-access fault and went to the error state: memory registration or GPUDirect "
        "RDMA), 'port error' / 'port active' (the link went down or flapped), 'GID table change' "
        "(an address of the port changed under running connections), 'local catastrophic "
        "error' (the device failed): transfers on the affected queue pairs then complete with "
        "errors on both sides; 'client reregistration' and 'SM change' (the InfiniBand subnet "
        "manager restarted or handed over and asked the port to register again: no fault of "
        "this node, and NCCL goes on)",
        "read the event: for a port error or GID change check the link and who changes the "
        "interface's addresses (NetworkManager, a CNI) during the job; for an access violation "
        "check GPUDirect RDMA (nvidia_peermem / dma-buf, ACS) and retry with "
        "NCCL_NET_GDR_LEVEL=LOC; for a catastrophic error the NIC needs a reset; for a client "
        "reregistration or SM change, the subnet manager's log (`sminfo` names it) says why",
        'src/transport/net_ib.cc ("NET/IB : %s:%d Got async event : %s"), '
        "src/transport/net_ib/common.cc (2.29+)",
        exclusive=True,
        # IBV_EVENT_DEVICE_FATAL (rdma-core's ibv_event_type_str: "local catastrophic
        # error"): the HCA itself failed, every queue pair on it is lost; 2.23+ "async
        # fatal event" (a QP's, a CQ's or the device's): ncclIbAsyncThreadMain counts it
        # (ncclIbStatsFatalError) and the communicator's next ncclIbTest / isend fails
        # ("communicator encountered a fatal error", NCCL_IB_RETURN_ASYNC_EVENTS=1 by
        # default); the SRQ's is "unused for now"
        escalate=(r"local catastrophic error|async fatal event(?! on SRQ)", True),
    ),
    _sig(
        "completion-retry-exceeded",
        "error",
        "RDMA transfers failed: retry count exceeded (status 12, vendor error 129)",
        r"with error 12\b|status=(?:[^(\s]*\()?12\)?[\s,]|status=12\b|vendor[_ ]err[= ]?129\b"
        r"|RETRY_EXC",
        "the peer stopped acknowledging: it died, its NIC or link went down, or the "
        "fabric drops packets (RoCE without lossless PFC/ECN, a bad cable or switch "
        "port); a raised NCCL_IB_TIMEOUT only delays the error",
        "check the peer named in the line (did its process die first?), the link "
        "counters (`ethtool -S`, `perfquery`) and the fabric's PFC/ECN configuration",
        'src/transport/net_ib.cc ("Got completion from peer ... status")',
        exclusive=True,
    ),
    _sig(
        "completion-local-protection",
        "error",
        "RDMA transfers failed: local protection error (status 4, vendor error 81)",
        r"with error 4\b|status=(?:[^(\s]*\()?4\)?[\s,]|status=4\b|vendor[_ ]err[= ]?81\b"
        r"|LOC_PROT_ERR",
        "the NIC could not access the registered memory: GPUDirect RDMA through a "
        "broken path (nvidia_peermem or dma-buf with ACS / IOMMU in the way), or memory "
        "freed or re-registered under a transfer",
        "disable PCIe ACS on the switches between GPU and NIC (`hpnet doctor` "
        "gpudirect.acs), check nvidia_peermem matches the driver; to confirm, retry "
        "with NCCL_NET_GDR_LEVEL=LOC (no GPUDirect)",
        "src/transport/net_ib.cc",
        exclusive=True,
    ),
    _sig(
        "completion-error",
        "error",
        "RDMA transfers failed: a work completion came back with an error status",
        # any status: "Got completion with error %d, opcode %d, len %d, vendor err %d"
        # (2.4-2.9), "Got completion from peer %s with error %d, ..." (2.10-2.21),
        # "NET/IB: Got completion from peer %s with status=%d ..." (2.22+), and the
        # IBV_WC_* name from 2.28.7
        r"Got completion (?:from peer \S+ )?with (?:error|status)",
        "the NIC reported a failed RDMA operation: status 5 (IBV_WC_WR_FLUSH_ERR) means the "
        "queue pair had already failed (the first error is elsewhere, often on the peer); "
        "9/10/11 (remote invalid request / access / operation) a peer that freed or never "
        "registered the memory or crashed; 13 (RNR retry exceeded) a peer not posting "
        "receives; the peer named in the line is where to look",
        "find the first completion error across the ranks (its status names the cause); check "
        "the peer's log and its NIC (`ibv_devinfo`, link counters); a flush (5) is always a "
        "consequence of another error",
        'src/transport/net_ib.cc ("Got completion ... with error/status")',
        exclusive=True,
    ),
    _sig(
        "collnet-failed",
        "error",
        "in-network reduction (CollNet / SHARP) could not be set up",
        # "NVLink SHARP" is NVLS, not CollNet (pytorch#177472: 2.29's "Failed to bind NVLink
        # SHARP (NVLS) Multicast memory" had read as CollNet)
        r"Cannot initialize CollNet|CollNet is not supported or fails to initialize"
        r"|sharp_coll\w* failed|(?<!NVLink )SHARP\b.*(?:[Ff]ailed|[Ee]rror)"
        r"|[Ff]ailed to .*(?<!NVLink )SHARP\b",
        "the SHARP collnet plugin could not create its group (no aggregation manager or "
        "SHARP daemon reachable, a switch without SHARP, too many GPUs per node for CollNet, "
        "a streaming aggregation tree another group holds ('Streaming Tree lock failed'), "
        "or a plugin / HPC-X mismatch): NCCL uses the point-to-point network instead, or "
        "fails when CollNet was required",
        "check the SHARP daemons (sharp_am, sharpd) and the plugin's HPC-X version; unset "
        "NCCL_COLLNET_ENABLE / NCCL_ALGO=CollNet* if in-network reduction is not available",
        'src/transport.cc ("Cannot initialize CollNet, using point-to-point network '
        'instead"), src/graph/tuning.cc, nccl-rdma-sharp-plugins',
        exclusive=True,
        survivable=True,
    ),
    _sig(
        "net-mismatch",
        "error",
        "the ranks use different networks: a connection of one network module reached a "
        "listener of another",
        r"socketFinalizeAccept: wrong type [34] != [34]\b",
        "every socket NCCL opens says what it is for (include/socket.h: 1 bootstrap, 2 "
        "proxy, 3 NET/Socket, 4 NET/IB); 'wrong type 4 != 3' means a peer connected with "
        "NET/IB to a rank that listens with NET/Socket (and 3 != 4 the reverse): NCCL chose "
        "IB on some nodes and sockets on others, so IB is unusable or disabled on some nodes "
        "only, or their NCCL_NET / NCCL_IB_* settings differ",
        "make every node choose the same network: find the nodes whose log says NET/Socket "
        "(no RDMA device, libibverbs or the RDMA devices missing in the container; "
        "`hpnet check --all` compares them), or set NCCL_IB_DISABLE=1 on every node",
        'src/misc/socket.cc ("socketFinalizeAccept: wrong type %d != %d", 2.12+)',
        exclusive=True,
    ),
    _sig(
        "mnnvl-failed",
        "error",
        "multi-node NVLink (MNNVL) is available but not working: no usable IMEX channel",
        r"MNNVL .* not working",
        "NCCL found GPUs of a multi-node NVLink domain (GB200 NVL72 and similar: a clique "
        "of several nodes) but could not share memory across it: a fabric memory handle "
        "(cuMemCreate with CU_MEM_HANDLE_TYPE_FABRIC) needs an IMEX channel "
        "(/dev/nvidia-caps-imex-channels/channelN) in the container and the nvidia-imex "
        "service running on every node of the domain; without them the CUDA call before "
        "this line fails (800 'operation not permitted' in an unprivileged pod)",
        "give the job an IMEX channel (Kubernetes: the NVIDIA DRA driver's ComputeDomain; "
        "Docker: --device /dev/nvidia-caps-imex-channels/channel0) and check "
        "`nvidia-imex-ctl -N` on every node; NCCL_MNNVL_ENABLE=0 runs without multi-node "
        "NVLink (over the network instead)",
        'src/mnnvl.cc ("MNNVL (cliqueSize %d) is available but not working on this system. '
        'Check the IMEX channel configuration ...")',
        exclusive=True,
    ),
    _sig(
        "nvls-failed",
        "error",
        "NVLink SHARP (NVLS) could not be set up",
        r"Failed to bind NVLink SHARP|NVLS.*(?:failed|[Ee]rror)",
        "the NVLink multicast objects could not be created or bound: the Fabric Manager "
        "(or IMEX for multi-node NVLink) is not running or not configured, or the driver "
        "does not support multicast on this system",
        "check `systemctl status nvidia-fabricmanager` (and nvidia-imex for MNNVL) and the "
        "driver version; NCCL_NVLS_ENABLE=0 (NCCL_MNNVL_ENABLE=0) runs without it",
        'src/transport/nvls.cc ("Failed to bind NVLink SHARP (NVLS) Multicast memory"), '
        "src/mnnvl.cc",
        exclusive=True,
        survivable=True,
    ),
    _sig(
        "p2p-disabled-nvlink",
        "error",
        "P2P is disabled between GPUs that NVLink connects",
        r"P2P is disabled between NVLINK connected GPUs",
        "CUDA reports no peer access between GPUs the topology says are NVLink-connected: "
        "a hardware or driver fault, or a VM / container that hides P2P",
        "check `nvidia-smi topo -p2p n` and `nvidia-smi nvlink -s`; NCCL_IGNORE_DISABLED_P2P=1 "
        "proceeds without P2P (through SHM)",
        "src/graph/paths.cc",
        exclusive=True,
    ),
    _sig(
        "p2p-disabled-pcie",
        "warning",
        "P2P is disabled between GPUs: their traffic goes through host memory (SHM)",
        # the INFO form, for a path that is not NVLink (the NVLink one is a WARN and fails)
        r"P2P is disabled between connected GPUs",
        "NCCL asked NVML whether each pair of GPUs can read and write each other's memory, "
        "and NVML said no for this pair: a VM or cloud instance that does not expose peer "
        "access, PCIe ACS or an IOMMU in the way, or GPUs without P2P over PCIe (most "
        "GeForce cards); NCCL turns P2P off for the pair, and its connections go through SHM "
        "(one more copy, through host memory, on every hop)",
        "`nvidia-smi topo -p2p rw` shows what NVML says per pair; on bare metal turn ACS off "
        "on the PCIe switches and put the IOMMU in passthrough mode; where the platform has "
        "no P2P, SHM is the path (NCCL_IGNORE_DISABLED_P2P=1 only hides this line)",
        "src/graph/paths.cc ncclTopoCheckP2p ('P2P is disabled between connected GPUs %d and "
        "%d') @v2.20.5-1",
    ),
    _sig(
        "memlock",
        "error",
        "RDMA memory could not be registered or pinned (out of memory: the memlock limit, "
        "or the NIC's registration resources)",
        # ibv_create_qp without an errno (NCCL up to 2.18, the HPC-X plugins): its queues
        # are pinned memory too (pyxis#60: every GPU thread of a Slurm step at init); a
        # registration or queue with an errno other than ENOMEM is no limit's doing
        # (rdma-reg-rejected)
        r"(?:ibv_reg_mr\w*|ibv_create_cq|ibv_reg_dmabuf_mr) failed"
        r"(?! with error (?!Cannot allocate memory))"
        r"|ibv_create_qp failed\s*$|(?:ibv_\w+|register).*Cannot allocate memory",
        "most often the locked-memory limit (ulimit -l) is too low for RDMA registration "
        "(containers default to 64 KiB / 8 MiB); else the NIC ran out of memory "
        "registrations (too much memory pinned by the processes of a host), or the host of "
        "memory: `ulimit -l` in the job's environment and the kernel log (`dmesg`) say which",
        "docker run --ulimit memlock=-1; Kubernetes: the IPC_LOCK capability and a "
        "memlock limit; hosts: `* - memlock unlimited` in /etc/security/limits.conf; with "
        "the limit unlimited, fewer processes per host or a smaller NCCL_BUFFSIZE",
        'src/misc/ibvwrap.cc ("Call to ibv_reg_mr failed")',
        exclusive=True,
    ),
    _sig(
        "rdma-reg-rejected",
        "error",
        "the RDMA NIC's driver refused to register a buffer (an error other than a memory limit's)",
        r"(?:ibv_reg_mr\w*|ibv_reg_dmabuf_mr) failed with error (?!Cannot allocate memory)",
        "ibv_reg_mr and its kin return EINVAL, EFAULT or EOPNOTSUPP for a buffer or access "
        "flags the NIC's kernel driver does not take: a GPU buffer it cannot pin (no "
        "nvidia_peermem and no DMA-BUF, or a VM or driver without GPUDirect RDMA), or relaxed "
        "ordering (ibv_reg_mr_iova2 is the call NCCL makes with IBV_ACCESS_RELAXED_ORDERING, "
        "where NCCL_IB_PCI_RELAXED_ORDERING is on and the verbs library has it)",
        "NCCL_IB_PCI_RELAXED_ORDERING=0 (NCCL then calls plain ibv_reg_mr: if the error goes, "
        "relaxed ordering was it); check GPUDirect RDMA (`lsmod | grep peermem`, or a driver "
        "and kernel with DMA-BUF); NCCL_NET_GDR_LEVEL=LOC (host buffers) tells whether GPU "
        "memory is what is refused",
        "src/misc/ibvwrap.cc (wrap_ibv_reg_mr_iova2, 'Call to ibv_reg_mr_iova2 failed with "
        "error %s'); src/transport/net_ib.cc ncclIbRegMrDmaBufInternal @v2.27.3-1",
        exclusive=True,
    ),
    _sig(
        "efa-no-rdma-read",
        "warning",
        "the EFA device has no RDMA read: aws-ofi-nccl cannot use GPUDirect RDMA, and every "
        "transfer between nodes is staged through host memory",
        r"FI_HMEM capability requires RDMA, which this device does not support",
        "libfabric's EFA provider answered the plugin's request for GPU memory (FI_HMEM) with "
        "no: that needs RDMA read, which EFA has on p4d and later instances only; the plugin "
        "then asks again without it and reports host buffers only to NCCL (aws-ofi-nccl "
        "nccl_ofi_net.c, support_gdr): no error, a slower path",
        "on an instance type with EFA RDMA (p4d, p5 and later) the line goes away; elsewhere "
        "this is the expected path; the connection lines say 'via NET/AWS Libfabric/N' without "
        "/GDRDMA",
        "libfabric prov/efa (rxr_info_to_rxr); aws-ofi-nccl src/nccl_ofi_net.c @v1.3.0-aws; "
        "aws/aws-ofi-nccl#161",
    ),
    _sig(
        "gdr-disabled-hca",
        "warning",
        "GPUDirect RDMA is not supported on an HCA: traffic is staged through host memory",
        # the Socket transport never does GPUDirect: its "Disabled" line is no problem
        r"(?<!Socket : )GPU Direct RDMA Disabled for HCA",
        "neither nvidia_peermem (nv_peer_mem) is loaded nor dma-buf is available, so the "
        "NIC cannot read GPU memory directly",
        "modprobe nvidia_peermem (or use the open GPU kernel module on Linux >= 5.12 for "
        "dma-buf); then the connection lines end in /GDRDMA",
        "src/graph/topo.cc, src/transport/net_ib.cc",
    ),
    _sig(
        "duplicate-gpu",
        "error",
        "two ranks use the same GPU",
        r"Duplicate GPU detected",
        "the launcher started more ranks than GPUs, or every rank kept device 0 "
        "(LOCAL_RANK not used to pick the device)",
        "call torch.cuda.set_device(LOCAL_RANK) before init, or launch one rank per GPU",
        'src/init.cc ("Duplicate GPU detected")',
        exclusive=True,
    ),
    _sig(
        "shm-exhausted",
        "error",
        "NCCL could not create its shared-memory segments in /dev/shm (most often full or "
        "too small)",
        r"posix_fallocate failed|Error while creating shared memory segment"
        r"|shm_open|No space left on device|Unable to allocate shared memory",
        "the SHM transport (and NCCL's proxy) allocate buffers in /dev/shm: Docker gives a "
        "container 64 MiB and Kubernetes pods the node's default unless told otherwise, which "
        "a few GPUs' buffers exceed ('No space left on device', 'failed to extend'). Where "
        "only 'Error while creating shared memory segment' is shown (PyTorch's 'Last "
        "error:' keeps NCCL's last WARN alone), mapping the segment or registering it with "
        "CUDA may have failed instead: the WARN before it says which",
        "docker run --shm-size=8g (or --ipc=host); Kubernetes: mount an emptyDir with "
        "medium: Memory at /dev/shm; `hpnet doctor` (limits.shm) checks it",
        'src/include/shm.h / misc/shmutils.cc ("Call to posix_fallocate failed", "Error '
        'while creating shared memory segment")',
        exclusive=True,
    ),
    _sig(
        "invalid-rank",
        "error",
        "a process asked NCCL for a rank outside its communicator",
        r"Invalid rank requested",
        "the rank given to ncclCommInitRank is not below the communicator's size: the "
        "launcher's RANK / WORLD_SIZE (or the per-node rank arithmetic) is inconsistent",
        "make every process's RANK < WORLD_SIZE (check the launcher's nnodes x nproc-per-node "
        "and what each node passes as its node rank)",
        'src/init.cc ("Invalid rank requested : %d/%d")',
        exclusive=True,
    ),
    _sig(
        "bootstrap-duplicate-rank",
        "error",
        "two processes joined the bootstrap with the same rank",
        r"rank \d+ of \d+ ranks has already checked in",
        "the launcher gave the same RANK to two processes (a scheduler's rank variables "
        "and the framework's disagree, or a process restarted while its old self still ran)",
        "give every process a distinct RANK (check SLURM_PROCID / LOCAL_RANK handling in the "
        "launcher), and make sure no stale process of an earlier attempt is still running",
        'src/bootstrap.cc ("Bootstrap Root : rank %d of %d ranks has already checked in")',
        exclusive=True,
    ),
    _sig(
        "bootstrap-root-mismatch",
        "error",
        "the bootstrap root got a rank's hello that disagrees with the others' (its size, "
        "roots or offset)",
        r"Bootstrap Root : mismatch in (?:info|rank count) from procs",
        "the root compares each hello with its own view and stops at the first that differs "
        "(bootstrap.cc, 'goto out'): ranks launched with different world sizes or roots (a "
        "launcher's rank variables mixed up, a rank of another job on the same address), or "
        "processes of two NCCL releases whose hellos differ: 2.29 added 'offset' to it "
        "(struct extInfo), so a peer of 2.28 or older reads there as a garbage number while "
        "nranks, nroots and iroot agree. The other ranks' connects to the stopped root are "
        "then refused",
        "run one NCCL release on every node (`python -c 'import torch; print(torch.cuda.nccl."
        "version())'`, or the 'NCCL version' line of each rank) and one world size and "
        "NCCL_COMM_ID for every rank of the job",
        'src/bootstrap.cc ("Bootstrap Root : mismatch in info from procs, nranks %d vs %d, '
        'nroots %d vs %d, iroot %d vs %d[, offset %d vs %d]", offset from 2.29.2; before '
        '2.23: "mismatch in rank count from procs %d : %d")',
        exclusive=True,
    ),
    _sig(
        "topology-search-fallback",
        "warning",
        "NCCL found no ring or tree in the topology and fell back to a simple order",
        r"Could not find a path for pattern \d+, falling back to simple order"
        r"|falling back to simple order",
        "the topology NCCL detected (PCIe switches, NVLink, NICs) gave its search no graph "
        "that fits: usually a VM that hides the real PCIe tree; the fallback uses few "
        "channels and low bandwidth",
        "give NCCL the platform's topology (NCCL_TOPO_FILE; cloud images ship one, e.g. "
        "aws-ofi-nccl's p4d XML), or run on a platform that exposes the PCIe tree",
        'src/graph/search.cc ("Could not find a path for pattern %d, falling back to simple '
        'order")',
        exclusive=True,
    ),
    _sig(
        "topology-net-missing",
        "error",
        "NCCL's graph uses a network device the topology does not have",
        r"Could not find NET with id [0-9a-fA-F]+",
        "a ring or tree of the graph names a NET id that is none of the NICs in NCCL's "
        "topology (ncclTopoIdToNetDev, graph/topo.h, 2.21.5+). After 'Could not find a path "
        "for pattern N, falling back to simple order' it is the fallback's own: it sets the "
        "network to NET id 0 (graph/search.cc, graph->inter[0] = graph->inter[1] = 0), "
        "and where NIC fusion gave the NICs other ids there is no NET 0: an NCCL bug "
        "(NVIDIA/nccl#1748, on 2.25-2.26; reported gone with 2.27.3). Otherwise a graph "
        "or topology file (NCCL_GRAPH_FILE, NCCL_TOPO_FILE) names NICs this node lacks",
        "upgrade NCCL to 2.27.3 or later; to see why the search found no path, rerun with "
        "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,GRAPH,NET NCCL_TOPO_DUMP_FILE=/tmp/topo.xml; "
        "a graph or topology file must name this node's NICs",
        'src/graph/topo.h ("Could not find NET with id %lx", 2.21.5+), src/graph/search.cc',
        exclusive=True,
    ),
    _sig(
        "socket-bind-failed",
        "error",
        "NCCL could not open a listening socket (bind failed)",
        r"Call to bind failed",  # SYSCHECK(bind(...), "bind") in every release
        "the address NCCL listens on is not this host's, or its port is taken: NCCL_COMM_ID "
        "naming another host's address (or the host's, seen from inside a container on a "
        "bridge network), an IPv6 link-local address, or a fixed port another job holds; the "
        "system's error in the line says which",
        "let the process that creates the unique id listen on its own address: unset "
        "NCCL_COMM_ID or give it that host's reachable address and a free port; set "
        "NCCL_SOCKET_IFNAME to an interface with a routable IPv4 address",
        "src/misc/socket.cc ncclSocketListen (2.12+), include/socket.h createListenSocket "
        "(2.4-2.11), SYSCHECK's 'Call to %s failed : %s'; NVIDIA/nccl#331, "
        "rwth-i6/returnn#1466",
        exclusive=True,
    ),
    _sig(
        "comm-id-no-local-subnet",
        "warning",
        "NCCL_COMM_ID's address is on no network of this host",
        r"No interface found in the same subnet as remote address",
        "NCCL looked for an interface on the same subnet as the bootstrap root's address "
        "(NCCL_COMM_ID) and found none, and goes on with its default interface: harmless "
        "where the root's host is reached through a router, but on the root's own host it "
        "means the address is not this host's (the host's address seen from inside a "
        "container's bridge network), and the root cannot listen on it (a bind failure "
        "follows)",
        "give NCCL_COMM_ID the address of the root's host as every rank reaches it (the "
        "same value on every rank), or use the launcher's rendezvous instead of "
        "NCCL_COMM_ID; containers: host networking",
        "include/socket.h findInterfaceMatchSubnet (2.4-2.11), src/misc/socket.cc "
        "ncclFindInterfaceMatchSubnet; NVIDIA/nccl#331",
    ),
    _sig(
        "no-algorithm-available",
        "error",
        "no algorithm and protocol NCCL may use can run this collective",
        r"no algorithm/protocol available",
        "NCCL found no algorithm / protocol pair allowed for the collective: NCCL_ALGO or "
        "NCCL_PROTO left only choices that cannot run it here (CollNet or NVLS alone without "
        "the hardware or plugin, or for an operation or data type they lack)",
        "unset NCCL_ALGO and NCCL_PROTO, or keep Ring in NCCL_ALGO and Simple in NCCL_PROTO; "
        "`NCCL_DEBUG_SUBSYS=INIT,ENV,TUNING` shows what was allowed",
        "src/enqueue.cc topoGetAlgoInfo / getAlgoInfo ('Error : no algorithm/protocol "
        "available', ncclInternalError); NVIDIA/nccl#653",
        exclusive=True,
    ),
    _sig(
        "p2p-peer-access-unsupported",
        "error",
        "CUDA cannot map one GPU's memory into another here (peer access unsupported)",
        r"peer access is not supported between these two devices",
        "NCCL chose P2P between two GPUs and CUDA refused the mapping "
        "(cudaErrorPeerAccessUnsupported): the platform blocks peer-to-peer between them "
        "(PCIe ACS or an IOMMU in translation mode, a VM without P2P, a board or driver that "
        "does not allow it) while NCCL's view of the topology said it could",
        "NCCL_P2P_DISABLE=1 (traffic goes through host memory), or enable P2P on the "
        "platform (ACS off on the PCIe switches, iommu=pt); `nvidia-smi topo -p2p r` shows "
        "which GPU pairs CUDA allows",
        "CUDA runtime cudaErrorPeerAccessUnsupported (217); src/transport/p2p.cc "
        "('failed to open CUDA IPC handle'); ray-project/ray_lightning#24",
        exclusive=True,
    ),
    _sig(
        "net-size-mismatch",
        "error",
        "two ranks disagree on the size of a transfer between them (a collective mismatch)",
        r"collective mismatch error, local size \d+ remote size \d+",
        "NCCL's network transport found that what this rank sends does not fit the receive "
        "its peer posted (the local and remote sizes in the line): the two ranks called "
        "different collectives, sizes or orders (a program bug), or run NCCL differently "
        "(other releases, or settings that change how a collective is cut, such as "
        "NCCL_PROTO, NCCL_ALGO or NCCL_BUFFSIZE set on some nodes only)",
        "give every node the same NCCL and the same NCCL_* settings (`hpnet env` on each "
        "shows them); if they match, compare what the ranks call "
        "(TORCH_DISTRIBUTED_DEBUG=DETAIL checks each collective's op and sizes)",
        "src/transport/net_ib.cc ncclIbIsend ('collective mismatch error, local size %d "
        "remote size %d', ncclInvalidUsage); NVIDIA/nccl#969",
        exclusive=True,
    ),
    _sig(
        "connection-refused",
        "error",
        "a socket connection was refused",
        r"Connection refused|Call to connect returned",
        "the peer process was not listening (it had exited or not started), a firewall "
        "blocks the ports, or NCCL_SOCKET_IFNAME picked an address the peer cannot reach",
        "look for the first error on the peer's host; open the ports between the nodes; "
        "make NCCL_SOCKET_IFNAME name the same network on every node",
        "src/misc/socket.cc",
        exclusive=True,
        consequence=True,
    ),
    _sig(
        "collective-timeout",
        "error",
        "a collective timed out",
        r"Watchdog caught collective operation timeout|collective operation timeout"
        r"|Timed out|timed out waiting|NCCL timeout",
        "a rank stopped participating (it crashed, hangs, or waits on another "
        "collective) or the network stalled; the timeout is the symptom, the first error "
        "on another rank is the cause",
        "find the first failing rank in the per-rank logs; rerun with NCCL_DEBUG=INFO and "
        "TORCH_NCCL_ASYNC_ERROR_HANDLING=1",
        "PyTorch ProcessGroupNCCL watchdog",
        exclusive=True,
        consequence=True,
    ),
    _sig(
        "remote-error",
        "error",
        "a remote process exited or the network failed",
        r"remote process exited or there was a network error|ncclRemoteError",
        "NCCL's code for a peer that disappeared or a network error (it follows an RDMA "
        "completion error, a socket error or a crash of another rank)",
        "read the WARN lines before it and the other ranks' logs for the first failure",
        "src/init.cc (ncclGetErrorString)",
        consequence=True,
    ),
    _sig(
        "system-error",
        "error",
        "NCCL reported an unhandled system error",
        r"unhandled system error|ncclSystemError",
        "a system call or library call failed (socket, RDMA verbs, memory): the "
        "specific reason is in the WARN lines that precede it",
        "read the WARN lines before it; rerun with NCCL_DEBUG=INFO "
        "NCCL_DEBUG_SUBSYS=INIT,NET if there are none",
        "src/init.cc (ncclGetErrorString)",
        consequence=True,
    ),
    _sig(
        "libcuda-missing",
        "warning",
        "NCCL could not find the CUDA driver library (libcuda.so)",
        r"Failed to find CUDA library|libcuda\.so.*(?:cannot open|not found)",
        "the container does not have the NVIDIA driver's user-space libraries (started without "
        "the NVIDIA runtime / --gpus), or they are outside the library path",
        "start the container with the NVIDIA runtime (docker --gpus all); or point "
        "NCCL_CUDA_PATH at the directory holding libcuda.so",
        "src/misc/cudawrap.cc",
    ),
    _sig(
        "proxy-connect-failed",
        "error",
        "a connection could not be set up by the proxy thread",
        # the proxy's side, and the caller's ("Proxy Call to rank %d failed (%s)",
        # proxy.cc @v2.16.5-1)
        r"Failed to execute operation Connect|Socket recv failed while polling"
        r"|Proxy Call to rank \d+ failed \(Connect\)",
        "the peer's proxy failed to connect (the RDMA or socket error before it says why) "
        "and closed the socket",
        "fix the error logged before it",
        "src/proxy.cc",
        consequence=True,
    ),
    _sig(
        "invalid-usage",
        "error",
        "NCCL reported invalid usage",
        r"invalid usage|ncclInvalidUsage",
        "a setting or call NCCL rejects (an NCCL_* value, NCCL_SOCKET_IFNAME matching "
        "nothing since 2.24, two ranks on one GPU): the WARN before it names it",
        "read the WARN lines before it",
        "src/init.cc (ncclGetErrorString)",
        consequence=True,
    ),
    _sig(
        "peer-exited",
        "error",
        "a rank lost its connection to the job's rendezvous (another rank exited)",
        r"store->get\(.*got error|Connection was likely closed|Did the remote server shutdown",
        "rank 0 (or the rendezvous store) went away, usually because it failed first",
        "look at rank 0's log for the first error",
        "PyTorch c10d TCPStore",
        consequence=True,
    ),
    _sig(
        "efa-completion-error",
        "error",
        "a transfer to a peer failed on the network (a libfabric completion error in the "
        "OFI plugin)",
        # aws-ofi-nccl's completion-error WARNs (every form in data/nccl_formats.json:
        # "NET/OFI Request %p [seq %d] [(%s)] completed with error ...", "Remote write
        # completed with error", "... recv completed with error") and libfabric's EFA
        # provider lines for the same event (prov/efa efa_rdm_txe/rxe_handle_error
        # "err: %d, message: %s", the older rxr_cq_write_tx/rx_error; efa_strerror's
        # "Unresponsive receiver", "Destination address unreachable"...)
        r"NET/OFI (?:Request .*|Remote write |Fatal: .*|Operation .*)completed with error"
        r"|efa_rdm_[rt]xe_handle_error\(\).*err: \d+|rxr_cq_write_[rt]x_error.*err: \d+"
        r"|[Uu]nresponsive receiver|EFA.*handshake (?:failed|timed out)",
        "a send, receive or connection request of the OFI plugin (aws-ofi-nccl, over "
        "libfabric: AWS EFA, HPE Slingshot's cxi, ...) completed with an error: the peer "
        "could not be reached or its process is gone, not a setup problem on this node. "
        "On AWS EFA, an EC2 security group that does not allow all traffic to and from "
        "itself is the setup cause to rule out; libfabric's line names the peer (host id, "
        "address) where it knows it",
        "find the peer in its own log and check its host at that time; on AWS EFA, check "
        "that every instance's security group has inbound and outbound rules 'All "
        "traffic' with the security group itself as source and destination",
        "aws-ofi-nccl (NET/OFI ... completed with error), libfabric prov/efa; "
        "aws/aws-ofi-nccl#156, #663, #346",
        exclusive=True,
    ),
    _sig(
        "ofi-gpu-memory-registration",
        "error",
        "the AWS OFI plugin could not register GPU memory with libfabric",
        r"NET/OFI Unable to register memory \(type = 2\)",
        "libfabric refused to register a GPU buffer (type 2: NCCL_PTR_CUDA in NCCL's net "
        "plugin API) for the EFA device, so GPUDirect RDMA cannot move it; aws-ofi-nccl's "
        "maintainers name a libfabric older than the NCCL (NCCL 2.19 or later with an EFA "
        "installer before 1.29)",
        "upgrade the EFA installer (its libfabric) to 1.29 or later, or set "
        "FI_EFA_SET_CUDA_SYNC_MEMOPS=0, as the aws-ofi-nccl maintainers advise; compare "
        "the NCCL, aws-ofi-nccl and libfabric versions with an environment that works",
        "aws-ofi-nccl register_mr_buffers ('Unable to register memory (type = %d)'); NCCL "
        "net.h NCCL_PTR_CUDA 0x2; aws/aws-ofi-nccl#584",
        exclusive=True,
        survivable=True,
    ),
    _sig(
        "ib-device-not-opened",
        "warning",
        "NCCL could not open an RDMA device and left it out",
        r"NET/IB : Unable to open device \S+|Call to ibv_open_device failed",
        "the device is listed (/sys/class/infiniband) but opening it failed: its "
        "/dev/infiniband/uverbs* is not in this container, not accessible, or the device is "
        "not usable; NCCL skips it and uses the others it lists after 'NET/IB : Using'",
        "if the device should carry traffic, pass its /dev/infiniband/uverbs* into the "
        "container (the RDMA device plugin, or --device); if not, list the ones this "
        "container has in NCCL_IB_HCA so that NCCL stops trying the others",
        "src/transport/net_ib.cc ncclIbInit ('NET/IB : Unable to open device %s', then the "
        "next device), src/misc/ibvwrap.cc ('Call to ibv_open_device failed'); ImageReward#65",
        exclusive=True,
    ),
    _sig(
        "ofi-plugin-error",
        "error",
        "the AWS OFI (libfabric) network plugin failed",
        # "Unexpected ...": the plugin's RDMA protocol checks (remote rail count, a
        # completion matching no request), aws/aws-ofi-nccl#927, #990, NVIDIA/nccl#1921;
        # "OFI NCCL failure: N": its test programs' OFINCCLCHECK, a call that failed
        r"NET/OFI .*(?:Couldn't|[Ff]ailed|ERROR|RC: -\d+|[Uu]nable|Unexpected"
        r"|OFI NCCL failure: \d)",
        "aws-ofi-nccl could not set up libfabric (address vector, endpoint or memory "
        "registration): wrong provider, EFA not usable in this container, or a plugin / "
        "libfabric version mismatch",
        "check `fi_info -p efa` in the container, the plugin and libfabric versions, and "
        "that /dev/infiniband is passed in",
        "aws-ofi-nccl (NET/OFI messages)",
        survivable=True,
        # nccl_net_ofi_create_plugin: the plugin gave up; NCCL goes on with its own
        # network (no EFA: sockets), unless NCCL_NET forces the plugin
        escalate=(r"aws-ofi-nccl initiali[sz]ation failed", False),
    ),
    _sig(
        "efa-no-device",
        "error",
        "libfabric found no EFA device: the AWS OFI plugin cannot use EFA",
        r"provider efa output empty list|fi_getinfo.*efa.*(?:empty|not found)|"
        r"No NICs? (?:info|found) for (?:the )?EFA",
        "no EFA adapter is attached to the instance, or the container lacks /dev/infiniband "
        "and the EFA driver, so aws-ofi-nccl has no provider (NCCL then fails or falls back "
        "to sockets)",
        "attach EFA to the instance (or request vpc.amazonaws.com/efa in Kubernetes) and "
        "pass /dev/infiniband into the container",
        "libfabric fi_getinfo, aws-ofi-nccl",
        survivable=True,
    ),
    _sig(
        "internal-error",
        "error",
        "NCCL reported an internal error",
        r"internal error|ncclInternalError|Internal check failed",
        "NCCL hit a condition it checks for (often a bootstrap or topology problem): the "
        "reason is in the WARN lines or PyTorch's 'Last error:' text",
        "read the WARN / Last error lines; rerun with NCCL_DEBUG=INFO if there are none",
        "src/init.cc (ncclGetErrorString)",
        consequence=True,
    ),
    _sig(
        "comm-aborted",
        "error",
        "a communicator was aborted",
        r"NCCL communicator was aborted|communicator .*aborted|ncclCommAbort",
        "an error or a timeout made the framework abort the communicator",
        "the cause is the first error before it",
        "PyTorch ProcessGroupNCCL, src/init.cc",
        consequence=True,
    ),
    _sig(
        "cuda-not-supported",
        "error",
        "a CUDA call NCCL makes is not supported where it runs",
        r"(?:Cuda|CUDA) failure '(?:operation )?not supported'",
        "CUDA answered cudaErrorNotSupported ('operation not supported': the operation is not "
        "supported on the current system or device): a feature NCCL uses is missing there, "
        "as on a VM or vGPU without unified memory, a MIG instance, or an older driver; "
        "another NCCL release may not make the call",
        "confirm on a bare-metal host with the same NCCL; on a vGPU VM enable unified memory "
        "(pciPassthru<n>.cfg.enable_uvm = 1); an NCCL release that does not make the call "
        "(the WARN's file:line names it) is the fallback",
        "CUDA runtime cudaErrorNotSupported (801); NVIDIA/nccl#2101 (vGPU without UVM)",
        exclusive=True,
    ),
    _sig(
        "foreign-connection",
        "warning",
        "a connection that was not NCCL's reached a port NCCL listens on",
        r"socketFinalizeAccept: wrong magic",
        "something other than an NCCL peer (a port scanner, a metrics scraper, a health "
        "check) connected to a socket NCCL listens on (the bootstrap's or the proxy's) and "
        "sent bytes that are not NCCL's handshake; NCCL dropped it and waited for another "
        "connection, so a proxy thread woken by it stops serving until one comes: the job "
        "can hang (NVIDIA/nccl#1808; NCCL 2.30.7 no longer waits)",
        "find what probes the NCCL hosts' ports (what it sent says what it is) and keep it "
        "off them, or use NCCL 2.30.7 or later",
        "src/misc/socket.cc socketFinalizeAccept (2.16.2-2.26.6 WARN and accept again; 2.27.3 "
        "INFO); proxy.cc ncclSocketAccept(..., retry=false) from 2.30.7; NVIDIA/nccl#1808",
        exclusive=True,
    ),
    _sig(
        "cuda-out-of-memory",
        "error",
        "CUDA could not allocate the memory NCCL asked for",
        r"(?:Cuda|CUDA) failure (?:2 )?'out of memory'",
        "CUDA answered cudaErrorMemoryAllocation ('out of memory') to NCCL's allocation: the "
        "GPU's memory (or the pinned host memory NCCL also allocates) was used up; each "
        "communicator holds buffers of its own on its GPU, so many communicators per GPU, "
        "or a framework that keeps the GPU's memory in its cache, leave NCCL none",
        "leave NCCL memory on the GPU: destroy communicators no longer used and create fewer "
        "per GPU, cap the framework's share (PyTorch: torch.cuda.set_per_process_memory_"
        "fraction), or make NCCL's buffers smaller (NCCL_BUFFSIZE, NCCL_MAX_NCHANNELS); "
        "`nvidia-smi` shows what holds the GPU's memory",
        "CUDA runtime cudaErrorMemoryAllocation (2); NVIDIA/nccl#1485 (many communicators per GPU)",
        exclusive=True,
    ),
    _sig(
        "cuda-no-kernel-for-gpu",
        "error",
        "NCCL has no code for this GPU",
        r"(?:Cuda|CUDA) failure (?:\d+ )?'(?:named symbol not found"
        r"|no kernel image is available for execution on the device)'",
        "CUDA found no kernel for this GPU in NCCL (cudaErrorSymbolNotFound 'named symbol not "
        "found', cudaErrorNoKernelImageForDevice 'no kernel image is available'): the NCCL "
        "library, or the framework build that carries it, was compiled without this GPU's "
        "architecture, most often because it is older than the GPU (NCCL 2.14 with CUDA "
        "11.8 on an RTX 5090, sm_120) or built for other GPUs only",
        "install an NCCL, and a framework build, compiled for this GPU's compute capability "
        "(`nvidia-smi --query-gpu=compute_cap --format=csv`); PyTorch: a wheel whose "
        "`torch.cuda.get_arch_list()` lists it (for sm_120, a CUDA 12.8 build)",
        "CUDA runtime cudaErrorSymbolNotFound (500), cudaErrorNoKernelImageForDevice (209); "
        "pytorch/pytorch#152077 (RTX 5090, NCCL 2.14.3), NVIDIA/nccl#1372",
        exclusive=True,
    ),
    _sig(
        "cuda-system-not-ready",
        "error",
        "the GPUs' NVLink fabric was not ready: CUDA said 'system not yet initialized' (802)",
        r"(?:Cuda|CUDA) (?:failure|error) 802\b|'system not yet initialized'",
        "CUDA answered cudaErrorSystemNotReady (802): on NVSwitch systems (HGX, GB200) the "
        "GPUs' fabric is not set up until the Fabric Manager (and on GB200 the NVLink subnet "
        "manager and IMEX) has registered them, so the calls that use it fail: NCCL's NVLS "
        "multicast first (a job with NCCL_NVLS_ENABLE=0 often runs)",
        "check `nvidia-smi -q | grep -A3 Fabric` (State Completed, Status Success) and "
        "`systemctl status nvidia-fabricmanager` (nvidia-imex on GB200), restart it or wait "
        "for it after boot; NCCL_NVLS_ENABLE=0 runs without multicast meanwhile",
        "CUDA runtime cudaErrorSystemNotReady (802); src/transport/nvls.cc; NVIDIA/nccl#1769 "
        "(GB200, NCCL 2.26.2: passes with NVLS off)",
        exclusive=True,
    ),
    _sig(
        "cuda-driver-too-old",
        "error",
        "the GPU driver is older than the CUDA runtime NCCL runs with",
        r"(?:Cuda|CUDA) failure (?:35 )?'CUDA driver version is insufficient for CUDA runtime "
        r"version'",
        "CUDA answered cudaErrorInsufficientDriver: the CUDA runtime linked into NCCL (or the "
        "framework that carries it) is newer than the installed driver supports, so no CUDA "
        "call works; NCCL's first one fails, and the device number it printed may be "
        "garbage (cudaGetDevice failed before filling it)",
        "install a driver that supports the runtime (`nvidia-smi` shows the newest CUDA the "
        "driver supports), or a framework / NCCL build for the driver's CUDA version; on "
        "data-centre GPUs, the cuda-compat package lets a newer runtime run on an older driver",
        "CUDA runtime cudaErrorInsufficientDriver (35); src/misc/cudawrap.cc, src/init.cc "
        "(CUDACHECK); NVIDIA/cuml#5961 (NCCL 2.21.5 on a 470 driver)",
        exclusive=True,
    ),
    _sig(
        "nvml-peer-gpu-not-found",
        "error",
        "NCCL took a GPU of another container or machine for one of this host's",
        r"nvmlDeviceGetHandleByPciBusId\(\) failed: Not Found",
        "NCCL looks up in NVML the GPU of every rank it counts as on this host (the same "
        "host hash: the hostname and /proc/sys/kernel/random/boot_id, or NCCL_HOSTID) and "
        "NVML here has none at that bus id: ranks in two containers (or VMs) that share the "
        "hostname and the kernel, each seeing only its own GPUs, look like one host to NCCL",
        "make each container a host of its own for NCCL (a distinct hostname, or a distinct "
        "NCCL_HOSTID per container), or run the node's ranks in one container that sees all "
        "its GPUs; `hostname`, `cat /proc/sys/kernel/random/boot_id` and `nvidia-smi -L` in "
        "each container show it",
        "src/graph/topo.cc ncclTopoGetSystem (a GPU per rank of the same hostHash), "
        "src/graph/xml.cc ncclTopoFillGpu, src/misc/nvmlwrap.cc; src/misc/utils.cc getHostHash "
        "(2.21.5); NVIDIA/nccl#1529",
        exclusive=True,
    ),
    _sig(
        "comm-not-initialised",
        "error",
        "the program used a communicator that has no ranks (not initialised)",
        r"invalid root -?\d+ \(root should be in the 0\.\.0 range\)",
        "NCCL's argument check prints the communicator's number of ranks as the range's end "
        "(argcheck.cc: 'root should be in the 0..%d range', comm->nRanks), so '0..0' means "
        "nRanks 0: the communicator was used before its initialisation set it (a "
        "non-blocking init still in progress, or an init that failed and whose error was "
        "not checked)",
        "check every ncclCommInitRank* return code; with a non-blocking config, poll "
        "ncclCommGetAsyncError until it is no longer ncclInProgress before the first call; "
        "give each communicator its own ncclUniqueId",
        "src/misc/argcheck.cc ArgsCheck (every release: comm->nRanks printed); src/init.cc "
        "(the communicator is returned before its init job fills nRanks); NVIDIA/nccl#963",
        exclusive=True,
    ),
    _sig(
        "root-out-of-range",
        "error",
        "the program named a root or peer rank outside the communicator",
        r"invalid root -?\d+ \(root should be in the 0\.\.[1-9]\d* range\)",
        "a collective's root or a send / recv peer is not a rank of this communicator (the "
        "range's end is the communicator's number of ranks): most often a global rank passed "
        "to a sub-group's communicator, whose ranks count from 0",
        "pass the rank within the communicator (PyTorch: the group's rank, "
        "dist.get_group_rank(group, global_rank))",
        "src/misc/argcheck.cc ArgsCheck ('invalid root %d (root should be in the 0..%d "
        "range)', comm->nRanks)",
        exclusive=True,
    ),
    _sig(
        "shm-cumem-host-disagree",
        "error",
        "two ranks disagree on how to share host memory (cuMem or /dev/shm)",
        r"attaching to shared memory segment /dev/shm/nccl-\S* \(size 0\)",
        "a process opened a /dev/shm segment of size 0, its name empty or garbage: the peer "
        "had shared its buffer as cuMem host memory and this process, which fell back to "
        "/dev/shm, read the cuMem handle as a file name. NCCL 2.26.3 and later probe "
        "cuMem host allocation (cuMemCreate on the GPU's NUMA node) per process, so ranks "
        "whose NUMA nodes differ (a memory-only node, a container's CPU view) can disagree",
        "set NCCL_CUMEM_HOST_ENABLE=0 on every rank (all then use /dev/shm: give it room), "
        "or make cuMem host memory work for every rank (the container's NUMA view: "
        "`numactl -H`); `NCCL_DEBUG_SUBSYS=INIT,SHM` shows which ranks fell back",
        "src/transport/shm.cc ncclShmImportShareableBuffer (the cuMem or the legacy branch "
        "chosen by each side alone, 2.28.9), src/misc/cudawrap.cc (the host NUMA probe); "
        "NVIDIA/nccl#2190, PR #2388",
        exclusive=True,
    ),
    _sig(
        "topology-no-pci-sysfs",
        "error",
        "a GPU or NIC has no PCI device in this machine's sysfs",
        # a WARN up to 2.10.2; later releases print it at INFO and go on
        r"WARN (?:\S+ )?Could not find real path of /sys/class/pci_bus/",
        "NCCL places each GPU and NIC by its PCI path (realpath of /sys/class/pci_bus/<bus>/"
        "../../<busId>) and this one has none: WSL2 (its GPU is paravirtualised, not on the "
        "guest's PCI bus), a VM or a container whose /sys lacks the PCI tree; NCCL before "
        "2.10.3 stops initialising there, later releases skip the device's path",
        "use NCCL 2.10.3 or later (in PyTorch: a build that bundles one); in a container, "
        "mount the host's /sys; `ls /sys/class/pci_bus` shows what the machine exposes",
        "src/graph/xml.cc getPciPath (2.7.8: WARN and ncclSystemError; 2.10.3: "
        "ncclDebugNoWarn, a NULL path skipped); NVIDIA/nccl#573 (WSL2)",
        exclusive=True,
    ),
    _sig(
        "graph-file-mismatch",
        "error",
        "the graph file NCCL was given names a GPU this job does not have",
        r"XML Import Channel : dev \d+ not found",
        "NCCL_GRAPH_FILE imposes rings and trees read from an XML, and one names a device "
        "outside this communicator's GPUs: the file was written for a larger machine (a "
        "cloud image's file for every size of an instance family, set in /etc/nccl.conf, "
        "which NCCL reads into its environment and reports as 'set by environment')",
        "unset NCCL_GRAPH_FILE, or remove it from /etc/nccl.conf and ~/.nccl.conf; a graph "
        "file is an override that must match the GPUs; NCCL_TOPO_FILE can stay",
        "src/graph/search.cc ncclTopoImportGraph ('XML Import Channel : dev %d not found', "
        "2.18.6), src/misc/param.cc (nccl.conf files into the environment); "
        "Azure/azhpc-images#327",
        exclusive=True,
    ),
    _sig(
        "topology-reverse-path",
        "error",
        "a link in NCCL's view of this machine goes one way only",
        r"Failed to find reverse path from",
        "NCCL (or RCCL) found a link from one device to another (an NVLink or AMD XGMI link, "
        "or a PCI path) that the other does not list back, so it cannot compute the paths "
        "between them: the driver reports the links differently for each device (seen in "
        "VMs, with GPUs passed through as virtual functions) or a topology file disagrees "
        "with itself",
        "dump what NCCL saw (NCCL_TOPO_DUMP_FILE=/tmp/topo.xml, NCCL_DEBUG_SUBSYS=INIT,GRAPH) "
        "and compare each device's links (`nvidia-smi topo -m`, `rocm-smi --showtopo`); a "
        "newer driver / ROCm / NCCL, or a consistent NCCL_TOPO_FILE",
        "src/graph/paths.cc ncclTopoSetPaths ('Failed to find reverse path from remNode "
        "%d/%lx nlinks %d to node %d/%lx', ncclInternalError); ROCm/rccl#1728",
        exclusive=True,
    ),
    _sig(
        "topology-xml-attribute",
        "error",
        "the topology NCCL read lacks an attribute it needs (most likely a topology file "
        "given to it)",
        r"Attribute \w+ of node \w+ not found",
        "NCCL built its view of the machine from an XML whose node lacks an attribute NCCL "
        "requires (a <cpu> without arch / vendor): NCCL fills these itself where it detects "
        "the machine, so the node most likely came from a topology file given to it "
        "(NCCL_TOPO_FILE, set by hand or by a network plugin such as aws-ofi-nccl's static "
        "per-instance files), with none of this job's GPUs or NICs under it",
        "find which topology file was used (`NCCL_DEBUG_SUBSYS=INIT,ENV` prints "
        "NCCL_TOPO_FILE) and fix or drop it so NCCL detects the machine; aws-ofi-nccl "
        "1.11.0 and later write the file from the devices found",
        "src/graph/xml.h xmlGetAttrStr (WARN, ncclInternalError), src/graph/topo.cc "
        "ncclTopoAddCpu (2.21.5); NVIDIA/nccl#379, aws/aws-ofi-nccl#476 and #785",
        exclusive=True,
    ),
    _sig(
        "symmetric-space-exhausted",
        "error",
        "NCCL's address space for symmetric windows is used up",
        r"Allocation failed\. No suitable space found to accommodate size=",
        "registering a symmetric window (ncclCommWindowRegister) asked NCCL for more of its "
        "per-rank virtual address space than is left (the size and the limit in the line; "
        "the limit follows the GPU's memory by default): windows registered again without "
        "being deregistered each take a new range",
        "register each buffer once and reuse its window, or deregister it "
        "(ncclCommWindowDeregister) before registering again; NCCL_WIN_STRIDE raises the "
        "space per rank",
        "src/allocator.cc ncclSpaceAlloc ('Allocation failed. No suitable space found', "
        "ncclInternalError), src/dev_runtime.cc symMemoryObtain (2.30.7); NVIDIA/nccl#2331",
        exclusive=True,
    ),
    _sig(
        "proxy-append-out-of-bounds",
        "error",
        "NCCL's proxy thread got more operations on one connection than it holds",
        r"Proxy append out of bounds",
        "the proxy groups the operations it drives on one connection into at most "
        "NCCL_PROXY_MAX_SUBS (64, MAXCHANNELS) sub-operations, and this batch had more "
        "(large grouped all-to-all or send / recv batches): an NCCL limit, not a network "
        "or setup fault; the communicator fails with ncclInternalError",
        "report it to NCCL with its version and the collective; meanwhile fewer operations "
        "per ncclGroupStart / ncclGroupEnd, and without NCCL_PROFILER_PLUGIN where it is "
        "set (the report saw it with the profiler plugin on)",
        "src/proxy.cc ncclProxyOpToArgs ('Proxy append out of bounds', ncclInternalError), "
        "src/include/proxy.h NCCL_PROXY_MAX_SUBS (2.27.7); NVIDIA/nccl#2039",
        exclusive=True,
    ),
    _sig(
        "cuda-illegal-address",
        "error",
        "a GPU kernel touched invalid memory; CUDA fails every call after it",
        r"(?:Cuda|CUDA) failure (?:700 )?'an illegal memory access was encountered'",
        "cudaErrorIllegalAddress is sticky: once any kernel of the process (the framework's, "
        "a custom one, or NCCL's) accessed memory it must not, every later CUDA call in "
        "that context fails with it, so NCCL's lines are where the error surfaced, not "
        "where it happened",
        "find the first kernel that failed: rerun with CUDA_LAUNCH_BLOCKING=1 (the "
        "traceback then points at it) or under compute-sanitizer; check that each rank "
        "set its own device (torch.cuda.set_device) before touching tensors",
        "CUDA runtime cudaErrorIllegalAddress (700, sticky); src/include/checks.h "
        "(CUDACHECK); pytorch/pytorch#131755",
        exclusive=True,
    ),
    _sig(
        "cuda-kernel-fault",
        "error",
        "a GPU kernel faulted while running; CUDA fails every call after it",
        r"(?:Cuda|CUDA) failure (?:719 )?'unspecified launch failure'",
        "cudaErrorLaunchFailure (719) is an exception on the device while a kernel ran (an "
        "invalid device pointer, an out-of-bounds access; with other GPUs' memory mapped, "
        "as NCCL's P2P, NVLS and multi-node NVLink (MNNVL, IMEX) do, a mapping that broke "
        "under it). It is sticky: every later CUDA call of the process fails with it, so "
        "the NCCL line is where it surfaced, and the kernel may be another's",
        "look for Xid errors on the node (`dmesg | grep -i xid`, `nvidia-smi -q`); on a "
        "multi-node NVLink system, the IMEX domain's state (`nvidia-imex-ctl -N`); to find "
        "the kernel, rerun with CUDA_LAUNCH_BLOCKING=1 or under compute-sanitizer",
        "CUDA runtime cudaErrorLaunchFailure (719, sticky); src/include/checks.h (CUDACHECK)",
        exclusive=True,
    ),
    _sig(
        "process-crashed",
        "error",
        "a process was killed by a signal (a crash)",
        rf"\*\*\* Process received signal \*\*\*|{CRASH_REPORT}",
        "a process ended on a fatal signal: Open MPI's handler printed its banner (the lines "
        "after it name the signal, 'Signal: Segmentation fault (11)', and hold a backtrace), "
        "or the shell, Python's faulthandler, abseil's or TVM FFI's handler named it ('Bus "
        "error (core dumped)', '*** SIGSEGV received at time=...', its next line the function, "
        "'!!!!!!! Segfault encountered !!!!!!!', its frames after it); the NCCL "
        "lines of the same process before it say what NCCL was doing",
        "read the backtrace (after Open MPI's banner, or of the core: `gdb python core`, "
        "`ulimit -c unlimited` first): frames in libnccl are NCCL's (look for a known bug of "
        "its release), frames elsewhere the program's",
        "open-mpi opal/util/stacktrace.c (show_stackframe: '*** Process received signal "
        "***'); bash's report of a job a signal ended (jobs.c, strsignal and '(core dumped)'); "
        "CPython's faulthandler ('Fatal Python error: '); abseil's failure_signal_handler.cc "
        "('*** %s received at time=%ld%s ***'); tvm_ffi's backtrace.cc ('!!!!!!! Segfault "
        "encountered !!!!!!!')",
    ),
    _sig(
        "nccl-tests-wrong-data",
        "error",
        "nccl-tests found wrong results: its check of the collectives' data failed",
        TESTS_WRONG,
        "nccl-tests checks every result (-c 1, the default) against the values it expects "
        "and counts the elements that differ (#wrong on each row, in and out of place); a "
        "count above zero is a collective that returned wrong data, and nccl-tests exits "
        "with an error (mpirun then aborts the job): a GPU, NVLink, PCIe or memory fault, "
        "or a bug in NCCL or in the test of that operation",
        "find the rows with #wrong above 0 (sizes, in or out of place): one operation "
        "failing where the others pass on the same GPUs points at that operation's code "
        "(NVIDIA/nccl-tests#356: hypercube) before the hardware; every operation failing "
        "points at a GPU or link: `dcgmi diag -r 3`, `nvidia-smi -q -d ECC`, Xid lines in "
        "dmesg, and `hpnet isolate` over the nodes",
        "nccl-tests src/util.cu writeResultFooter ('# %-20s : %d %s', 'Out of bounds values', "
        "FAILED); before 2.13 src/common.cu (' Out of bounds values : %d %s')",
    ),
    _sig(
        "launcher-reported-failure",
        "error",
        "the launcher reports a process of the job failed, and ended the job",
        LAUNCHER_FAILED,
        "the launcher (torchrun's agent, mpirun, srun, vLLM's executor) saw a process exit "
        "with an error or a signal and stopped the job: a negative exit code is the signal "
        "that ended it (-9 SIGKILL: the OOM killer or a scheduler; -6 SIGABRT: PyTorch's "
        "watchdog after a timeout or an NCCL error; -11 SIGSEGV: a crash), a positive one "
        "the program's own error; the lines before it say what failed first",
        "read the first failing process's own output (torchrun: its 'Root Cause (first "
        "observed failure)' record names it; `torchrun --redirects 3 --log-dir DIR` keeps "
        "each rank's output); for SIGKILL check `dmesg` on its node; `hpnet hang` on the "
        "ranks' logs joins the launcher's report with their watchdog lines",
        "torch.distributed.elastic multiprocessing/api.py ('failed (exitcode: %s) local_rank: "
        "%s (pid: %s) of binary: %s') and errors (ChildFailedError); Open MPI orterun's "
        "help-orterun.txt (proc-aborted-signal, non-zero-exit); vLLM multiproc_worker_utils.py; "
        "Slurm srun",
        consequence=True,
    ),
    _sig(
        "watchdog-teardown",
        "error",
        "PyTorch's watchdog found an NCCL operation failed or timed out and took the process down",
        # and its next line, "To avoid data inconsistency, we are taking the entire
        # process down." (ProcessGroupNCCL.cpp, torch 1.x-2.x)
        r"Some NCCL operations have failed or timed out"
        r"|To avoid data inconsistency, we are taking the entire process down",
        "ProcessGroupNCCL's watchdog saw a work of this rank fail or time out (its line before "
        "this one names which: 'Watchdog caught collective operation timeout: WorkNCCL(...)' "
        "or an NCCL error), aborted the rank's communicators and ends the process; the abort "
        "stops NCCL's sockets and proxy threads, whose return codes ('misc/socket.cc:N -> 3', "
        "'Abort COMPLETE') follow from it and are not a network failure",
        "find each rank's watchdog line naming the work: a timeout is a hang (`hpnet hang` "
        "with every rank's log and Flight Recorder dumps says which rank is behind), an NCCL "
        "error names its own cause",
        "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp (WorkNCCL::handleException, 'Some "
        "NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA "
        "kernels, ...')",
        # it follows the failure or timeout the watchdog saw: a named one leads
        consequence=True,
    ),
    _sig(
        "socket-family-unsupported",
        "error",
        "NCCL could not create a socket: its address family is not supported here",
        # "Net : Socket creation failed : %s" (include/socket.h), "ncclSocketInit: Socket
        # creation failed : %s" (2.16+): socket() with the address's family, EAFNOSUPPORT
        r"Socket creation failed : Address family not supported by protocol"
        r"|with family \d+ is neither AF_INET\(\d+\) nor AF_INET6",
        "the address NCCL was to use has a family no socket can be made for here: an IPv6 "
        "address (an "
        "interface with only IPv6, or NCCL_SOCKET_FAMILY=AF_INET6) on a host or container "
        "where IPv6 is off, or no address at all (the interface NCCL looked for was not "
        "found and the address stayed empty: the NET/IB out-of-band or bootstrap "
        "interface). No connection was tried: not the peer, not the network",
        "name an interface with an IPv4 address on every node (NCCL_SOCKET_IFNAME, "
        "NCCL_SOCKET_FAMILY=AF_INET); `ip -o addr` on each node shows the interfaces and "
        "their addresses",
        "src/include/socket.h:318 @v2.4.2-1, src/misc/socket.cc ncclSocketInit "
        "(2.16.2-2.23.4; socket(family, SOCK_STREAM, 0); 2.16.2+ refuse a family that is "
        "neither before trying); NVIDIA/nccl#224",
        exclusive=True,
    ),
    _sig(
        "comm-used-after-destroy",
        "error",
        "the program used a communicator NCCL had already destroyed",
        # commPoison() writes -1 into a freed communicator's rank, nRanks, cudaDev and
        # busId; ncclCommDestroy/Abort refuse it, and argcheck prints its nRanks
        r"comm 0x[0-9a-fA-F]+ has already been destroyed|root should be in the 0\.\.-1 range",
        "the calls name a communicator NCCL had freed (its rank count reads -1, the value "
        "NCCL writes into a freed communicator): the framework kept calling NCCL with it "
        "after destroying or aborting it, most often after an earlier error made it tear "
        "the communicator down (NCCL destroys one whose init failed). These lines follow "
        "that error; they are not it",
        "find each rank's first WARN before these lines (NCCL_DEBUG=WARN shows it); the "
        "framework must stop using a communicator it destroyed (a framework bug where no "
        "error came first)",
        "src/init.cc commPoison and ncclCommDestroy's check ('comm %p has already been "
        "destroyed') @v2.13.4-1..v2.28.9-1, src/misc/argcheck.cc ('root should be in the "
        "0..%d range', the communicator's nRanks); horovod#3625",
        exclusive=True,
    ),
    _sig(
        "nccl-library-not-loaded",
        "error",
        "the process could not load the NCCL library: no NCCL ran",
        # XLA's NCCL stub (xla/tsl/cuda/nccl_stub.cc) answers every call with this text
        # when libnccl.so.2 cannot be loaded; the loader's own message otherwise
        r"Unable to load NCCL library|libnccl\.so[.\d]*: cannot open shared object file",
        "the framework loads libnccl.so.2 at run time and it was not found (not installed, "
        "or not on the library path) or would not load (built for another CUDA major): "
        "every NCCL call fails at once, so NCCL printed nothing and NCCL_DEBUG would show "
        "nothing either",
        "install an NCCL built for the framework's CUDA major (pip: nvidia-nccl-cu12 for "
        "CUDA 12; JAX: the jax[cuda12] extra) and make it visible to the process "
        "(LD_LIBRARY_PATH); `ldconfig -p | grep nccl` shows what the loader finds",
        "openxla/xla xla/tsl/cuda/nccl_stub.cc ('Unable to load NCCL library. Multi-GPU "
        "collectives will not work.'); LargeWorldModel/LWM#44",
        exclusive=True,
    ),
    _sig(
        "ib-collective-mismatch",
        "error",
        "the two ends of an RDMA connection were not in the same collective",
        # NCCL 2.4-2.19 net_ib.cc ncclIbIsend's sanity check of the receive the peer posted
        r"NET/IB : (?:req \d+/\d+ tag \w+ peer \S+ )?collective mismatch error",
        "this rank sent more than the receive its peer had posted for the same step (NCCL "
        "checks it before each RDMA write): the two ranks were not running the same "
        "collective with the same size there (a different op, count or order between "
        "ranks), or ran different NCCL settings or builds (protocol, buffer size: "
        "NCCL_PROTO, NCCL_BUFFSIZE, NCCL_LL_THRESHOLD, the NCCL version)",
        "make every rank issue the same collectives in the same order with the same counts "
        "(TORCH_DISTRIBUTED_DEBUG=DETAIL checks it in PyTorch); give every node the same "
        "NCCL_* settings and the same NCCL release",
        "src/transport/net_ib.cc ncclIbIsend ('collective mismatch error') @v2.4.7-1, "
        "@v2.19.3-1; tensorflow#34375",
        exclusive=True,
    ),
    _sig(
        "rccl-iommu-not-passthrough",
        "warning",
        "the kernel's IOMMU is not in pass-through mode: RCCL's P2P between GPUs may stall",
        # RCCL's check of /proc/cmdline (src/init.cc, rocm-5.5 on): "Missing \"iommu=pt\"
        # from kernel command line which can lead to system instablity or hang!", and
        # "amd_iommu=on"
        r'Missing "(?:amd_)?iommu=(?:pt|on)" from kernel command line',
        "RCCL read /proc/cmdline and found no iommu=pt (or amd_iommu=on): with the IOMMU "
        "translating, peer-to-peer traffic between GPUs over PCIe can stall or hang the "
        "node, so an init that stops at P2P setup, or a collective that never ends, is "
        "likely this",
        "add iommu=pt (and amd_iommu=on on AMD CPUs) to the kernel command line and reboot; "
        "NCCL_P2P_DISABLE=1 goes around it meanwhile (through host memory)",
        "ROCm/rccl src/init.cc (the kernel command line check; RCCL 2.18.3 built for HIP 5.5 "
        "and 6.0 print it, recorded here); ROCm/rccl#1129",
        exclusive=True,
    ),
    _sig(
        "nccl-config-header-newer-than-library",
        "error",
        "the program's NCCL config came from a newer nccl.h than the libnccl it loaded",
        # NCCL_CONFIG_INITIALIZER from 2.17.1 leaves unset attributes at INT_MIN
        # (NCCL_CONFIG_UNDEF_INT); 2.14-2.16 accept only 0 or 1 ("Invalid config blocking
        # attribute value %d", init.cc)
        r"Invalid config \w+ attribute value -2147483648",
        "the program (or framework) was built against NCCL 2.17 or later, whose config "
        "initializer leaves unset attributes at INT_MIN for the library to fill in, and at "
        "run time it loaded an older libnccl (2.14-2.16) that takes INT_MIN as an invalid "
        "value: communicator init refuses it (invalid argument)",
        "load an NCCL at least as new as the one the program was built with: look for an "
        "older libnccl.so.2 on LD_LIBRARY_PATH or LD_PRELOAD, or an older nvidia-nccl wheel "
        "(`pip list | grep nccl`), that the loader finds first",
        "src/nccl.h.in NCCL_CONFIG_INITIALIZER @v2.16.5-1 (blocking 1) and @v2.17.1-1 "
        "(NCCL_CONFIG_UNDEF_INT = INT_MIN); src/init.cc 'Invalid config blocking attribute "
        "value' @v2.14.3-1; NVIDIA/Megatron-LM#596",
        exclusive=True,
    ),
    _sig(
        "cxi-no-service",
        "error",
        "libfabric's Slingshot provider (cxi) has no CXI service for this process",
        # libfabric prov/cxi cxip_nic_get_rgroup_vni(): no service and VNI it may use
        r"Failed to find valid default rgroup and vni for cxi\d+",
        "on HPE Slingshot a process may use the NIC only through a CXI service (a resource "
        "group and VNI) that the launcher allocates for its job: none was given to this "
        "process and the NIC's default service is not enabled for it, so the OFI plugin "
        "cannot open its libfabric domain and NCCL cannot use the network",
        "launch with srun under Slurm's HPE Slingshot switch plugin (it allocates the VNI; "
        "`--network=single_node_vni` for a single-node step), or have the administrators "
        "enable the default CXI service; use the aws-ofi-nccl the site builds for its "
        "libfabric",
        "libfabric prov/cxi cxip_nic_get_rgroup_vni ('Failed to find valid default rgroup "
        "and vni'); aws/aws-ofi-nccl#801",
        exclusive=True,
    ),
    _sig(
        "graph-capture-unsupported",
        "error",
        "this NCCL cannot run inside a CUDA graph capture: built with a CUDA runtime older "
        "than 11.3, or the driver is older than R465",
        r"NCCL cannot be captured in a graph",
        "the framework launched an NCCL collective while capturing a CUDA graph (vLLM and "
        "SGLang capture their decode steps, PyTorch's torch.cuda.graph), and this libnccl "
        "can only be captured when it was built with CUDA 11.3 or later and the driver is "
        "R465 or later: it returns invalid usage instead. With a CUDA 12 framework the "
        "driver is new enough, so the library is: an NCCL built for CUDA 11.0 (the "
        "nvidia-nccl-cu11 wheel, whose version line reads '+cuda11.0') loaded instead of "
        "the framework's own",
        "load an NCCL built for the framework's CUDA (`python -c 'import torch; "
        "print(torch.cuda.nccl.version(), torch.version.cuda)'`, `pip list | grep nccl`; "
        "the nvidia-nccl-cu12 wheel for CUDA 12; vLLM: VLLM_NCCL_SO_PATH), or upgrade a "
        "driver older than R465; to go on meanwhile, run without CUDA graphs (vLLM "
        "--enforce-eager)",
        "src/misc/strongstream.cc ncclCudaGetCapturingGraph @v2.20.5-1 (CUDART_VERSION < "
        "11030 or driver < 11030: WARN, ncclInvalidUsage); vllm-project/vllm#5679, #3069, "
        "#6201",
        exclusive=True,
    ),
    _sig(
        "cuda-too-many-peers",
        "error",
        "the CUDA driver refused another peer mapping: a GPU was to be opened to more peers "
        "than the driver allows",
        # CUDA_ERROR_TOO_MANY_PEERS / cudaErrorTooManyPeers are both 711, "peer mapping
        # resources exhausted" (cuda.h, driver_types.h)
        r"(?:Cuda|CUDA) failure 711\b|peer mapping resources exhausted"
        r"|cudaErrorTooManyPeers|CUDA_ERROR_TOO_MANY_PEERS",
        "one process sees more GPUs that can reach each other by P2P than the driver lets "
        "one GPU map (commonly 8 peers over PCIe): NCCL's cuMem allocator (ncclMemAlloc, "
        "2.19+) opens each buffer to every visible GPU that can access it, whatever "
        "NCCL_P2P_DISABLE says, and older releases enable peer access between every pair "
        "of a process's GPUs",
        "NCCL_CUMEM_ENABLE=0 (buffers from cudaMalloc, opened only to the peers NCCL "
        "connects), or fewer GPUs per process (CUDA_VISIBLE_DEVICES; 9 where the limit is "
        "8), or one process per GPU",
        "src/allocator.cc ncclMemAlloc's cuMemSetAccess loop @v2.27.3-1; CUDA cuda.h "
        "CUDA_ERROR_TOO_MANY_PEERS = 711; NVIDIA/nccl#1874, nccl-tests#324",
        exclusive=True,
    ),
    _sig(
        "shared-mem-exceeds-gpu",
        "error",
        "NCCL's kernels need more shared memory than this GPU gives them: a GPU this NCCL "
        "release does not size its kernels for",
        # 2.25.1: INFO, the attribute clamped and the launch left to fail; 2.26.2 on: WARN
        # "cudaArch %d ncclMaxSharedMem %d exceeds ...", ncclSystemError at init
        r"ncclMaxSharedMem \d+ exceeds device/fn maxSharedMem \d+",
        "NCCL sizes each kernel's dynamic shared memory for the GPU's architecture "
        "(ncclShmemDynamicSize, enqueue.cc ncclInitKernelsForDevice); a release older than "
        "the GPU asks for more than the device allows (2.25.1 on sm_120, the RTX 5090 and RTX "
        "PRO Blackwell: 82240 bytes against 79856). 2.25.1 clamps the attribute and its "
        "collectives then fail to launch; 2.26 on refuse at init",
        "use an NCCL release built for this GPU: 2.26.2 sized sm_120 (ncclCollUnroll 6), "
        "e.g. `pip install -U nvidia-nccl-cu12` or a PyTorch build with NCCL 2.26.2 or later; "
        "NCCL_P2P_DISABLE does not help (the kernels are the same for every transport)",
        "src/enqueue.cc ncclInitKernelsForDevice @v2.25.1-1 (INFO, clamps) and @v2.26.2-1 "
        "(WARN, ncclSystemError); src/include/device.h ncclCollUnroll @v2.26.2-1; "
        "NVIDIA/nccl#1637, nccl-tests#287",
        exclusive=True,
    ),
    _sig(
        "cumem-alloc-failed",
        "error",
        "NCCL could not allocate its GPU buffers through the CUDA driver's memory API (cuMem)",
        # CUCHECK prints the driver's error number ("Cuda failure %d '%s'"), CUDACHECK the
        # runtime's text only: a driver call in alloc.h is the cuMem allocator's
        r"alloc\.h:\d+\b.*\bCuda failure \d+ '",
        "NCCL allocates its buffers with the CUDA driver's virtual memory calls (cuMemCreate, "
        "cuMemMap, cuMemSetAccess in ncclCuMemAlloc; NCCL_CUMEM_ENABLE, on by default since "
        "2.19) and the driver refused: 'invalid argument' or 'not supported' where the driver, "
        "GPU, VM or vGPU does not take the allocation's properties (the handle type that "
        "shares it between processes, GPUDirect RDMA), 'out of memory' where the GPU is full",
        "NCCL_CUMEM_ENABLE=0 (cudaMalloc and legacy CUDA IPC instead) tells whether cuMem is "
        "what fails; then a newer GPU driver, or the VM's or container's cuMem support; for "
        "'out of memory', GPU memory left for NCCL (or a smaller NCCL_BUFFSIZE)",
        "src/include/alloc.h ncclCuMemAlloc, src/include/checks.h CUCHECK @v2.19.3-1",
    ),
    _sig(
        "cuda-failure",
        "error",
        "a CUDA call failed inside NCCL",
        # ncclUnhandledCudaError: torch's "ncclUnhandledCudaError: Call to CUDA function
        # failed." (2.19+ ncclGetErrorString with the code's name), the same error
        r"Cuda failure|CUDA failure|cudaError|unhandled cuda error|ncclUnhandledCudaError",
        "a GPU fault, an out-of-memory, a driver / runtime mismatch or an earlier "
        "kernel error surfaced inside NCCL",
        "check `nvidia-smi`, dmesg (Xid errors) and the CUDA error text in the line",
        "src/include/checks.h (CUDACHECK)",
        consequence=True,
    ),
    _sig(
        "nccl-tests-failure",
        "error",
        "nccl-tests reported a failure",
        r"Test NCCL failure|Test CUDA failure|Test failure"
        r"|(?:^|: )(?:NCCL|Cuda|CUDA) failure \S+\.(?:cu|cc|c|h):\d+ '",
        "the collective returned an error; the NCCL error text follows in the line",
        "read the WARN lines before it",
        "nccl-tests src/common.h (CUDACHECK / NCCLCHECK; without 'Test' before 2.x)",
        consequence=True,
    ),
    _sig(
        "socket-size-mismatch",
        "error",
        "a peer sent more than this rank posted: the ranks' sizes (or NCCL_PROTO / NCCL_ALGO) "
        "differ",
        r"NET/Socket : (?:peer \S+ )?message truncated : receiving \d+ bytes instead of \d+",
        "NCCL's Socket transport checks the size each peer sends against the receive this "
        "rank posted, and returns ncclInvalidUsage when the peer sends more: the ranks called "
        "the same collective or send/recv pair with different sizes (a pipeline stage's shapes "
        "differ, a desync), or run with different NCCL_PROTO / NCCL_ALGO; the connection itself "
        "is healthy (the size arrived over it)",
        "compare what the two ranks called at that point (the peer's address is in the line): "
        "the tensors' shapes and dtypes of the send/recv or collective, and NCCL_PROTO, "
        "NCCL_ALGO and the NCCL version on every rank; TORCH_DISTRIBUTED_DEBUG=DETAIL checks "
        "collective sizes across ranks",
        "src/transport/net_socket.cc (2.4.8: 'message truncated : receiving %d bytes instead "
        "of %d'; 2.11: 'peer %s message truncated ...'; 2.12+ adds 'there may be a mismatch in "
        "collective sizes or environment settings (e.g. NCCL_PROTO, NCCL_ALGO) between "
        "ranks'; return ncclInvalidUsage)",
    ),
    _sig(
        "net-socket-error",
        "error",
        "a TCP connection between ranks broke",
        # socket.cc's socketProgress(Opt) WARNs ("Connection closed by remote peer",
        # "Call to recv from <addr> failed : Broken pipe"), their 2.10-2.17 form "Net :
        # Call to recv from ... failed", and the same text repeated in PyTorch's "Last
        # error:" (NET/Socket's "message truncated" is socket-size-mismatch)
        # ("socketProgressOpt: abort called" is no break: the communicator's abort flag
        # was set, its socket calls stop, socket.cc:38 @v2.22.3-1, an INFO line)
        r"socketProgress\w*:(?! abort called)|Connection reset by peer"
        r"|Connection closed by remote peer|Broken pipe|Net : Call to (?:recv|send) from"
        r"|NET/Socket.*(?:failed|error)",
        "a peer's process exited (crashed, killed, out of memory) or the network dropped the "
        "TCP connection (the Socket transport, or NCCL's bootstrap and proxy sockets); on a "
        "port NCCL listens on, NCCL 2.16-2.26 also fail when a client that is not NCCL's (a "
        "port scanner, a health check) connects and closes before NCCL's handshake",
        "find the first failure in the peer's log (the address in the line names it); if "
        "every peer is alive, check the network between the hosts (MTU, firewalls, drops); "
        "an address that is none of the job's hosts is such a client: keep it off the NCCL "
        "hosts' ports, or use NCCL 2.27.3 or later, which drops it and accepts again",
        "src/misc/socket.cc, src/transport/net_socket.cc; socketFinalizeAccept (2.16.2-2.26.6 "
        "fail on a connection closed before the magic, 2.27.3 on reset and accept again: "
        "NVIDIA/nccl#1612)",
    ),
)


#: "Error while creating shared memory segment" where the error NCCL returned is
#: ncclUnhandledCudaError: in ncclShmOpen a failed fallocate or mmap of the /dev/shm file
#: returns ncclSystemError, a failed cudaHostRegister of the mapped segment (or
#: cudaHostGetDevicePointer) ncclUnhandledCudaError (src/misc/shmutils.cc @v2.20.5-1):
#: the segment was made; CUDA could not pin it. Read with its context (:func:`in_context`)
SHM_REGISTER_FAILED = _sig(
    "shm-cuda-register-failed",
    "error",
    "NCCL made its /dev/shm segment, and CUDA could not register it (pin the host memory)",
    r"Error while creating shared memory segment",
    "the segment was created and mapped (those failures return a system error); "
    "cudaHostRegister, which pins it for the GPU, failed, so NCCL returned 'unhandled cuda "
    "error': not /dev/shm's space. Pinned host memory is what ran out or is refused: WSL2's "
    "limits on pinned memory, a locked-memory limit, or a driver in a bad state",
    "NCCL_SHM_DISABLE=1 goes around it (peers of one host then use P2P or the network); "
    "on WSL2 fewer GPUs per group, or native Linux; check `ulimit -l` and the driver "
    "(`nvidia-smi`)",
    "src/misc/shmutils.cc ncclShmOpen (fallocate, mmap: ncclSystemError; cudaHostRegister "
    "under CUDACHECKGOTO: ncclUnhandledCudaError) @v2.20.5-1; microsoft/WSL#12467",
    exclusive=True,
)
#: the signatures a line's context gives it (:func:`in_context`), beside SIGNATURES
IN_CONTEXT = (SHM_REGISTER_FAILED,)
_SHM_EXHAUSTED = "shm-exhausted"
_CUDA_ERROR = re.compile(r"unhandled cuda error|ncclUnhandledCudaError")
_SYSTEM_ERROR = re.compile(r"unhandled system error|ncclSystemError")


def in_context(
    signatures: Sequence[Signature], message: str, process: ProcessLog | None, log: NcclLog
) -> Sequence[Signature]:
    """The signatures of a line as its log reads them: a /dev/shm segment NCCL could not
    make, where the error it returned is a CUDA error (its process's trail codes, or the
    framework's error), was made and not registered (:data:`SHM_REGISTER_FAILED`)."""
    if not any(sig.id == _SHM_EXHAUSTED for sig in signatures):
        return signatures
    if "Error while creating shared memory segment" not in message:
        return signatures
    if process is not None and process.trail_codes:
        cuda = set(process.trail_codes) == {1}  # ncclUnhandledCudaError only
    else:
        said = [s.text for s in log.signals]
        cuda = any(_CUDA_ERROR.search(t) for t in said) and not any(
            _SYSTEM_ERROR.search(t) for t in said
        )
    if not cuda:
        return signatures
    return [SHM_REGISTER_FAILED if sig.id == _SHM_EXHAUSTED else sig for sig in signatures]
