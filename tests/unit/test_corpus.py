"""Every real input's note against hpnet: each check of tests/corpus.py must agree, except
the few listed in KNOWN, each with the reason hpnet cannot (yet) reach the note's
conclusion. A KNOWN entry that starts to agree fails too, so the list only shrinks."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.corpus import DATA, grade, inputs, table

#: (input, check) -> why hpnet does not conclude what the note does
KNOWN: dict[tuple[str, str], str] = {
    (
        "artefacts/rccl-2.18.3-hip5.5-rccl-tests-hipipcgetmemhandle-invalid-argument.log",
        "fatal",
    ): "RCCL's transport/p2p.cc hipIpcGetMemHandle WARN is the failure (the tests fail on "
    "ncclGroupEnd), but the excerpt ends at it: the log pipeline reads an unfollowed WARN "
    "as a warning, and RCCL's call sites are not in NCCL's format table",
    (
        "nccl-logs/gcp-a3-gpudirecttcpx-rx-ctrl-timeout-warn-rank-prefix-ncclunknown.log",
        "nics",
    ): "the GPUDirect-TCPX plugin names its NICs only inside its own WARN texts, whose "
    "form no NCCL release prints; hpnet reads NIC names from NCCL's NIC-list lines only",
    (
        "nccl-logs/glued-lines-concurrent-writes-ib-gdrdma-send-nvls-tree-commsplit-"
        "nccl2.21-or-later.log",
        "processes",
    ): "the third process's lines are glued to another's with their pid cut off; no "
    "line of that process carries host:pid:tid, so it cannot be told apart",
    (
        "nccl-logs/ib-async-event-local-access-violation-then-completion-status9-nccl2.2x.log",
        "network",
    ): "no line says which network NCCL chose; hpnet infers NET/IB from the completion "
    "error of NCCL's IB module (net_ib.cc, 'NET/IB : Got completion') and says it is "
    "inferred, where the note grades only a stated choice",
    (
        "nccl-logs/roce-gid-autoselect-addr-range-sysfs-read-fail-k8s-nccl2.21.5.log",
        "versions",
    ): "the note dates the log by the file:line of NCCLCHECK error-trail lines; the "
    "format table holds the sites of log calls, not of every NCCLCHECK",
    (
        "nccl-logs/sglang-plugin-socket-connect-software-caused-abort-init-trail-"
        "traceback-nccl2.21.5.log",
        "versions",
    ): "dated by error-trail sites too (see above)",
    (
        "nccl-logs/mnnvl-imex-fabric-cumemcreate-800-not-permitted-unprivileged-pod-gb200-"
        "nccl2.28.9.log",
        "processes",
    ): "the second process (pid 3769903) is named only by nccl-tests' own failure line "
    "(' .. host pid N: Test failure'), which hpnet reads as a signal, not as a process",
    (
        "nccl-logs/mnnvl-imex-fabric-cumemcreate-800-not-permitted-unprivileged-pod-gb200-"
        "nccl2.28.9.log",
        "leads",
    ): "the note names the NVLS subsystem's id (mnnvl.cc is grouped with transport/nvls.cc); "
    "hpnet leads with mnnvl-failed, its own finding for mnnvl.cc's 'MNNVL ... not working' "
    "(IMEX channel), a narrower name for the same cause",
    (
        "nccl-logs/p2p-ipc-open-failed-peer-access-unsupported-cross-socket-k80-horovod-"
        "nccl2.3.log",
        "leads",
    ): "the note names the P2P subsystem's id; hpnet leads with p2p-peer-access-unsupported, "
    "its own finding for CUDA's 'peer access is not supported between these two devices', "
    "a narrower name for the cause the note states (NCCL_P2P_DISABLE=1 its fix)",
    (
        "nccl-logs/topology-reverse-path-bare-message-vllm-driver-535-nccl2.19-2.20.log",
        "leads",
    ): "the note names the topology subsystem's id; hpnet leads with topology-reverse-path, "
    "its own finding for 'Failed to find reverse path' (a link listed one way only), a "
    "narrower name for the cause the note states",
    (
        "nccl-logs/net-mismatch-socket-accept-wrong-type-4-ib-peer-same-hostname-"
        "nccl2.18.3-2.18.6.log",
        "hosts",
    ): "both machines are named 'user': the line prefix is all hpnet has to tell hosts apart",
    **{
        (f"nccl-logs/{name}.log", "versions"): "the version is said in the post or dated by "
        "the file:line of a CUDACHECK / NCCLCHECK trail, which the format table does not "
        "hold (it holds the sites of log calls)"
        for name in (
            "nvls-cumulticastbindmem-invalid-argument-after-fabricmanager-restart-h100-nccl2.23.4",
            "ofi-plugin-init-failed-endpoint-invalid-argument-gdr-disabled-p4d-cloudwatch-"
            "doubled-nccl2.21.5",
            "p2p-legacy-ipc-open-invalid-argument-proxy-setup-trace-sglang-broadcast-nccl2.21.5",
        )
    },
    **{
        (f"nccl-logs/{name}.log", "versions"): "the version is said in the post, not in the "
        "lines: a CUCHECK / CUDACHECK WARN stands at its caller's file:line, which the format "
        "table does not hold"
        for name in (
            "nvls-cumulticastadddevice-401-illegal-state-vllm-h100-nccl2.26.2",
            "nvls-invalid-argument-timestamped-single-line-nccl2.26.2",
            "p2p-cuda-failure-101-invalid-device-ordinal-title-line-nccl2.28.9",
        )
    },
}

CASES = inputs()


@pytest.mark.parametrize(
    ("path", "values"),
    [(path, values) for path, _note, values in CASES],
    ids=[str(path.relative_to(DATA)) for path, _note, _values in CASES],
)
def test_hpnet_concludes_what_the_note_says(path: Path, values: dict[str, str]) -> None:
    name = str(path.relative_to(DATA))
    checks = grade(path, values)
    assert checks, f"{name}: its note's Expected block gives no check"
    for check in checks:
        known = KNOWN.get((name, check.key))
        if known:
            assert not check.ok, f"{name}: {check.key} now agrees; drop it from KNOWN"
            continue
        assert check.ok, f"{name}: {check.key}: note says {check.expected!r}, hpnet {check.got!r}"


def test_the_corpus_is_large_and_every_known_gap_names_an_input() -> None:
    names = {str(path.relative_to(DATA)) for path, _note, _values in CASES}
    assert len(CASES) >= 75
    for name, _key in KNOWN:
        assert name in names, name


def test_the_grade_table_in_tests_data_and_the_docs_is_current() -> None:
    # both hold what `python -m tests.corpus` prints (the docs' copy moved from the
    # README to docs/development.md, issue 26)
    current = table()
    written = (DATA / "CORPUS.md").read_text()
    assert written.split("<!-- table -->\n", 1)[1] == current
    page = (DATA.parents[1] / "docs" / "development.md").read_text()
    assert "<!-- corpus table -->\n" + current + "<!-- end corpus table -->" in page
