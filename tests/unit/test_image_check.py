"""`hpnet image check` and `hpnet image run-flags` over image roots laid out from real
listings and the recorded nodes; the check and the Dockerfile's verify step agree."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import kubernetes_validate
import pytest
import yaml

from hpnet.cli.main import main
from hpnet.detect import DetectOptions, detect
from hpnet.distros import get_distro
from hpnet.doctor.model import Report
from hpnet.image.check import IMAGE_CHECKS, check_image
from hpnet.image.dockerfile import plan_dockerfile
from hpnet.image.facts import gather_image_facts
from hpnet.image.runflags import plan_run_flags
from hpnet.profiles import get_profile
from hpnet.render.image import render_run_flags
from hpnet.result import Status
from hpnet.runner import RecordedRunner
from tests.conftest import DATA
from tests.image_roots import debian_rdma_core, device_image, image_root, os_release
from tests.unit.test_doctor import assert_pasteable

Tree = Callable[[str], Path]
GOLDEN = Path(__file__).parents[1] / "golden" / "image-run-flags"


def image_report(root: Path, profile: str | None, stage: str = "build") -> Report:
    facts = gather_image_facts(
        root=str(root),
        profile=profile,
        stage=stage,
        environment={},
        python_path=[],  # type: ignore[arg-type]
    )
    assert facts.stage == stage
    return check_image(facts)


def statuses(report: Report) -> dict[str, Status]:
    for check in report.checks:
        if check.status in (Status.WARN, Status.FAIL):
            assert check.fix or check.fix_note, f"{check.id} {check.status} without a fix"
        assert_pasteable(check.fix)
    return {c.id: c.status for c in report.checks}


def by_id(report: Report, check_id: str) -> object:
    return next(c for c in report.checks if c.id == check_id)


# ------------------------------------------------------------------ build stage


def test_debian_rdma_core_image_has_what_erdma_needs(tmp_path: Path) -> None:
    report = image_report(image_root(tmp_path, debian_rdma_core()), "pai-dlc-erdma")
    found = statuses(report)
    assert found == {
        "image.libibverbs": Status.PASS,
        "image.providers": Status.PASS,
        "image.librdmacm": Status.PASS,
        "image.cuda": Status.WARN,  # nothing brought CUDA yet: said, not failed
        "image.nccl": Status.WARN,
    }
    assert report.verdict is Status.WARN


def test_an_image_without_the_provider_fails_with_the_guides_steps(tmp_path: Path) -> None:
    root = image_root(tmp_path, debian_rdma_core(skip=("liberdma-rdmav34.so",)))
    os_release(root, "ubuntu", "22.04")
    report = image_report(root, "pai-dlc-erdma")
    check = report.checks[1]
    assert check.id == "image.providers" and check.status is Status.FAIL
    assert "no verbs provider for erdma" in check.summary
    # the fix is the PAI-DLC guide's own steps for this distribution
    assert check.fix is not None and "jammy/erdma main" in check.fix
    assert "hpnet image dockerfile" in (check.fix_note or "")
    assert report.verdict is Status.FAIL


def test_a_provider_without_its_driver_file_fails(tmp_path: Path) -> None:
    root = image_root(tmp_path, debian_rdma_core(skip=("mlx5.driver",)))
    check = image_report(root, "pai-lingjun").checks[1]
    assert check.status is Status.FAIL and "no .driver file for mlx5" in check.summary
    assert any("/etc/libibverbs.d/mlx5.driver missing" in e for e in check.evidence)


def test_versions_of_the_gpu_machines_image(tmp_path: Path) -> None:
    root = image_root(tmp_path, device_image())
    dlc = statuses(image_report(root, "pai-dlc-erdma"))
    assert dlc["image.nccl"] is Status.PASS and dlc["image.providers"] is Status.PASS
    ecs = image_report(root, "ecs-erdma")
    nccl = by_id(ecs, "image.nccl")
    assert nccl.status is Status.FAIL  # type: ignore[attr-defined]
    assert "outside 2.8 to 2.16.x" in nccl.summary  # type: ignore[attr-defined]
    evidence = " ".join(nccl.evidence)  # type: ignore[attr-defined]
    assert "2.28.3 (/usr/lib/x86_64-linux-gnu/libnccl.so.2.28.3)" in evidence
    assert "2.28.9 (wheel nvidia-nccl-cu13)" in evidence


def test_cuda_from_version_json(tmp_path: Path) -> None:
    root = image_root(tmp_path, debian_rdma_core())
    (root / "usr/local/cuda").mkdir(parents=True)
    shutil.copy(DATA / "images" / "cuda-11.5.2-version.json", root / "usr/local/cuda/version.json")
    cuda = by_id(image_report(root, "pai-dlc-erdma"), "image.cuda")
    assert cuda.status is Status.FAIL and "11.5.2" in " ".join(cuda.evidence)  # type: ignore[attr-defined]
    assert by_id(image_report(root, "pai-lingjun"), "image.cuda").status is Status.PASS  # type: ignore[attr-defined]


def test_an_empty_image_fails_for_rdma_and_passes_for_sockets(tmp_path: Path) -> None:
    root = image_root(tmp_path, ["/etc/hostname"])
    assert image_report(root, "roce").verdict is Status.FAIL
    socket = statuses(image_report(root, "socket"))
    assert socket["image.libibverbs"] is Status.SKIP and Status.FAIL not in socket.values()


# ------------------------------------------------------------------ the verify step agrees


SH = shutil.which("sh")


def scenarios(tmp_path: Path) -> dict[str, Path]:
    roots = {
        "debian": image_root(tmp_path, debian_rdma_core(), "debian"),
        "no-erdma": image_root(tmp_path, debian_rdma_core(("liberdma-rdmav34.so",)), "no-erdma"),
        "no-driver": image_root(tmp_path, debian_rdma_core(("mlx5.driver",)), "no-driver"),
        "no-verbs": image_root(tmp_path, debian_rdma_core(("libibverbs.so.1",)), "no-verbs"),
        "device": image_root(tmp_path, device_image(), "device"),
    }
    old = image_root(tmp_path, debian_rdma_core(), "old-cuda")
    (old / "usr/local/cuda").mkdir(parents=True)
    shutil.copy(DATA / "images" / "cuda-11.5.2-version.json", old / "usr/local/cuda/version.json")
    roots["old-cuda"] = old
    return roots


@pytest.mark.skipif(SH is None, reason="no sh")
@pytest.mark.parametrize(
    ("profile", "distro"),
    [("pai-dlc-erdma", "ubuntu22.04"), ("pai-lingjun", "ubuntu22.04"), ("ecs-erdma", "centos7")],
)
def test_the_dockerfile_step_and_the_check_agree(tmp_path: Path, profile: str, distro: str) -> None:
    plan = plan_dockerfile(
        get_profile(profile), get_distro(distro), base=None, command_line="t", version="t"
    )
    script = plan.steps[-1].instruction.split("\n", 1)[1].rsplit("\n", 1)[0]
    assert SH is not None
    for name, root in scenarios(tmp_path).items():
        env = {"PATH": os.environ["PATH"], "HPNET_IMAGE_ROOT": str(root)}
        done = subprocess.run(
            [SH, "-c", script], capture_output=True, text=True, env=env, timeout=60, check=False
        )
        failed_in_shell = done.returncode == 1
        failed_in_python = image_report(root, profile).verdict is Status.FAIL
        assert failed_in_shell == failed_in_python, (profile, name, done.stdout)


# ------------------------------------------------------------------ run stage


def test_container_without_uverbs_fails_with_the_device_flags(sysfs_tree: Tree) -> None:
    report = image_report(sysfs_tree("container-no-uverbs"), "ib", stage="run")
    uverbs = by_id(report, "devices.uverbs")
    assert uverbs.status is Status.FAIL  # type: ignore[attr-defined]
    assert "--device=/dev/infiniband/uverbs0" in (uverbs.fix_note or "")  # type: ignore[attr-defined]
    assert by_id(report, "image.devices").status is Status.PASS  # type: ignore[attr-defined]


def test_container_without_any_rdma_device(sysfs_tree: Tree) -> None:
    report = image_report(sysfs_tree("no-rdma-vm"), "pai-dlc-erdma", stage="run")
    devices = by_id(report, "image.devices")
    assert devices.status is Status.FAIL  # type: ignore[attr-defined]
    assert "hpnet image run-flags --profile pai-dlc-erdma" in (devices.fix_note or "")  # type: ignore[attr-defined]


def test_auto_stage(sysfs_tree: Tree) -> None:
    build = gather_image_facts(
        root=str(sysfs_tree("no-rdma-vm")), profile="roce", environment={}, python_path=[]
    )
    run = gather_image_facts(
        root=str(sysfs_tree("cx6-ib-dgx")), profile="ib", environment={}, python_path=[]
    )
    assert (build.stage, run.stage) == ("build", "run")
    assert {c.id for c in check_image(run).checks} > {"devices.uverbs", "limits.memlock"}


def test_cli(sysfs_tree: Tree, capsys: pytest.CaptureFixture[str]) -> None:
    root = str(sysfs_tree("container-no-uverbs"))
    assert main(["image", "check", "--sysfs-root", root, "--profile", "ib"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("hpnet image check: FAIL") and "stage run" in out
    assert main(["image", "check", "--sysfs-root", root, "--profile", "ib", "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["schema_version"] == 1 and data["stage"] == "run" and data["verdict"] == "FAIL"
    assert {"id", "status", "summary", "evidence", "fix", "fix_note"} <= set(data["checks"][0])
    assert main(["image", "check", "--profile", "nope"]) == 2
    assert "error[unknown-profile]" in capsys.readouterr().err


def test_image_alone_says_which_subcommand(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["image"]) == 2
    assert "dockerfile | run-flags | check" in capsys.readouterr().err
    assert main(["image", "chek"]) == 2
    assert "did you mean `hpnet image check`" in capsys.readouterr().err


# ------------------------------------------------------------------ run flags

#: the recorded node each profile's flags are shown on (as for hpnet env's goldens)
NODES = {
    "ecs-erdma": "erdma-alibaba",
    "pai-dlc-erdma": "erdma-alibaba",
    "pai-lingjun": "cx-roce-mixed-gids",
    "scnet": "cx6-ib-dgx",
    "modelarts": "cx6-ib-dgx",
    "roce": "container-no-uverbs",
    "socket": "no-rdma-vm",
}


def node(sysfs_tree: Tree, name: str) -> object:
    return detect(
        DetectOptions(sysfs_root=str(sysfs_tree(name))),
        runner=RecordedRunner({}),
        env={},
        python_path=[],
    )


@pytest.mark.parametrize("profile", sorted(NODES))
def test_run_flags_golden(sysfs_tree: Tree, profile: str) -> None:
    flags = plan_run_flags(get_profile(profile), node(sysfs_tree, NODES[profile]))  # type: ignore[arg-type]
    text = render_run_flags(flags).replace(str(sysfs_tree(NODES[profile])), "<root>")
    path = GOLDEN / f"{profile}.{NODES[profile]}.txt"
    if os.environ.get("HPNET_UPDATE_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert text == path.read_text()


def test_run_flags_follow_the_nodes_devices(sysfs_tree: Tree) -> None:
    dgx = plan_run_flags(get_profile("ib"), node(sysfs_tree, "cx6-ib-dgx"))  # type: ignore[arg-type]
    assert dgx.devices == ("mlx5_0", "mlx5_1", "mlx5_2")  # mlx5_3's port is down
    assert dgx.left_out == ("mlx5_3: no ACTIVE port",)
    assert dgx.argv[:3] == ["--gpus", "all", "--device=/dev/infiniband/rdma_cm"]
    assert "--device=/dev/infiniband/uverbs2" in dgx.argv
    assert "--device=/dev/infiniband/uverbs3" not in dgx.argv
    assert dgx.argv[dgx.argv.index("--ulimit") :][:2] == ["--ulimit", "memlock=-1"]
    # the ECS guide's own flag set, with this node's devices for the guide's two
    ecs = plan_run_flags(get_profile("ecs-erdma"), node(sysfs_tree, "erdma-alibaba"))  # type: ignore[arg-type]
    assert ecs.argv[0] == "--runtime=nvidia" and "--shm-size=8g" in ecs.argv
    assert {"--net=host", "--ipc=host", "--device=/dev/infiniband/rdma_cm"} <= set(ecs.argv)
    # a container without uverbs nodes: nothing to pass, and it says so
    bare = plan_run_flags(get_profile("roce"), node(sysfs_tree, "container-no-uverbs"))  # type: ignore[arg-type]
    assert bare.devices == () and any("no RDMA device" in n for n in bare.notes)


def test_run_flags_pod_is_a_valid_pod(sysfs_tree: Tree) -> None:
    flags = plan_run_flags(
        get_profile("pai-dlc-erdma"),
        node(sysfs_tree, "erdma-alibaba"),  # type: ignore[arg-type]
        rdma_resource="aliyun/erdma=1",
    )
    spec = yaml.safe_load(render_run_flags(flags, "k8s"))["spec"]
    spec["containers"][0]["image"] = "example/image:1"
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "w"}, "spec": spec}
    kubernetes_validate.validate(pod, kubernetes_validate.latest_version(), strict=True)
    container = spec["containers"][0]
    assert container["securityContext"]["capabilities"]["add"] == ["IPC_LOCK"]
    assert container["resources"]["limits"]["aliyun/erdma"] == 1
    assert spec["volumes"][0]["emptyDir"]["medium"] == "Memory" and spec["hostNetwork"] is True


def test_run_flags_cli(sysfs_tree: Tree, capsys: pytest.CaptureFixture[str]) -> None:
    root = str(sysfs_tree("cx6-ib-dgx"))
    assert main(["image", "run-flags", "--sysfs-root", root, "--format", "docker"]) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith("--gpus all --device=/dev/infiniband/rdma_cm")  # auto -> ib here
    assert main(["image", "run-flags", "--sysfs-root", root, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["profile"] == "ib" and data["argv"] == line.split()
    bad = ["image", "run-flags", "--sysfs-root", root, "--rdma-resource", "rdma/hca"]
    assert main(bad) == 2
    assert "error[usage]" in capsys.readouterr().err


# ------------------------------------------------------------------ review regressions


def with_torch(root: Path, site: str = "usr/local/lib/python3.12/dist-packages") -> Path:
    """The GPU machine's real PyTorch 2.11.0+cu130 files: version.py (CUDA 13.0) and the
    wheel's METADATA (pins nvidia-nccl-cu13==2.28.9)."""
    (root / site / "torch").mkdir(parents=True)
    (root / site / "torch-2.11.0.dist-info").mkdir()
    shutil.copy(DATA / "images" / "torch-2.11.0+cu130-version.py", root / site / "torch/version.py")
    shutil.copy(
        DATA / "images" / "torch-2.11.0+cu130-METADATA",
        root / site / "torch-2.11.0.dist-info/METADATA",
    )
    return root


def shell_verdict(root: Path, profile: str, distro: str) -> tuple[bool, str]:
    plan = plan_dockerfile(
        get_profile(profile), get_distro(distro), base=None, command_line="t", version="t"
    )
    script = plan.steps[-1].instruction.split("\n", 1)[1].rsplit("\n", 1)[0]
    assert SH is not None
    env = {"PATH": os.environ["PATH"], "HPNET_IMAGE_ROOT": str(root)}
    done = subprocess.run(
        [SH, "-c", script], capture_output=True, text=True, env=env, timeout=60, check=False
    )
    return done.returncode == 1, done.stdout


@pytest.mark.skipif(SH is None, reason="no sh")
def test_torchs_pinned_nccl_decides(tmp_path: Path) -> None:
    """A system libnccl 2.16.5 fits AIACC's 2.8-2.16, but PyTorch loads its pin, 2.28.9."""
    files = [*debian_rdma_core(), "/usr/lib/x86_64-linux-gnu/libnccl.so.2.16.5"]
    root = with_torch(image_root(tmp_path, files))
    nccl = by_id(image_report(root, "ecs-erdma"), "image.nccl")
    assert nccl.status is Status.FAIL  # type: ignore[attr-defined]
    assert "2.28.9 (torch 2.11.0+cu130 pins it)" in nccl.summary  # type: ignore[attr-defined]
    failed, out = shell_verdict(root, "ecs-erdma", "centos7")
    assert failed and "FAIL  NCCL found: 2.28.9(torch-pin)" in out, out


@pytest.mark.skipif(SH is None, reason="no sh")
def test_torch_2s_annotated_cuda_line_counts(tmp_path: Path) -> None:
    """/usr/local/cuda 11.5.2 is too old for PAI-DLC, torch's CUDA 13.0 is not."""
    root = with_torch(image_root(tmp_path, debian_rdma_core()))
    (root / "usr/local/cuda").mkdir(parents=True)
    shutil.copy(DATA / "images" / "cuda-11.5.2-version.json", root / "usr/local/cuda/version.json")
    assert by_id(image_report(root, "pai-dlc-erdma"), "image.cuda").status is Status.PASS  # type: ignore[attr-defined]
    failed, out = shell_verdict(root, "pai-dlc-erdma", "ubuntu22.04")
    assert not failed and "ok    CUDA 13.0(torch)" in out, out


@pytest.mark.skipif(SH is None, reason="no sh")
def test_no_provider_at_all_fails_for_a_profile_that_names_none(tmp_path: Path) -> None:
    root = image_root(tmp_path, debian_rdma_core(skip=("-rdmav34.so",)))
    check = by_id(image_report(root, "ib"), "image.providers")
    assert check.status is Status.FAIL  # type: ignore[attr-defined]
    assert shell_verdict(root, "ib", "ubuntu22.04")[0]


@pytest.mark.skipif(SH is None, reason="no sh")
def test_a_link_to_nothing_is_no_library(tmp_path: Path) -> None:
    root = image_root(tmp_path, debian_rdma_core(skip=("liberdma-rdmav34.so",)))
    (root / "usr/lib/x86_64-linux-gnu/libibverbs/liberdma-rdmav34.so").symlink_to("gone.so")
    check = by_id(image_report(root, "pai-dlc-erdma"), "image.providers")
    assert check.status is Status.FAIL  # type: ignore[attr-defined]
    assert shell_verdict(root, "pai-dlc-erdma", "ubuntu22.04")[0]


def test_a_library_that_does_not_load_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    """On the live image the libraries are loaded; one whose dependency is missing fails
    (its dlopen error is the evidence). This machine's real libibverbs loads."""
    from hpnet.image import facts as image_facts

    assert image_facts._load_errors([None]) == {}
    err = image_facts._load_errors(["/nonexistent/libibverbs.so.1"])
    assert "/nonexistent/libibverbs.so.1" in err
    facts = gather_image_facts(profile="pai-dlc-erdma", stage="build", python_path=[])
    if facts.libibverbs is None:
        pytest.skip("no libibverbs on this machine")
    assert facts.libibverbs not in facts.load_errors
    broken = dataclasses.replace(facts, load_errors={facts.libibverbs: "libnl-3.so.200: not found"})
    check = check_image(broken).checks[0]
    assert check.status is Status.FAIL and "does not load" in check.summary
    assert check.evidence == ("libnl-3.so.200: not found",)


def test_socket_profile_in_a_container_runs_no_rdma_checks(sysfs_tree: Tree) -> None:
    report = image_report(sysfs_tree("container-no-uverbs"), "socket", stage="run")
    assert report.verdict is not Status.FAIL
    assert {c.id for c in report.checks} == set(IMAGE_CHECKS)


def test_a_build_on_an_rdma_host_is_the_build_stage(sysfs_tree: Tree) -> None:
    """`docker build` sees the host's sys/class/infiniband but no /dev/infiniband."""
    root = sysfs_tree("cx6-ib-dgx")
    shutil.rmtree(root / "dev" / "infiniband")
    facts = gather_image_facts(root=str(root), profile="ib", environment={}, python_path=[])
    assert facts.stage == "build"


def test_damaged_torch_version_file_is_no_crash(tmp_path: Path) -> None:
    root = image_root(tmp_path, debian_rdma_core())
    site = root / "usr/lib/python3/dist-packages/torch"
    site.mkdir(parents=True)
    (site / "version.py").write_bytes(b"\xff\xfe cuda = '\x00")
    report = image_report(root, "pai-dlc-erdma")
    assert by_id(report, "image.cuda").status is Status.WARN  # type: ignore[attr-defined]


def test_run_flags_leave_out_a_missing_rdma_cm(sysfs_tree: Tree) -> None:
    inventory = node(sysfs_tree, "erdma-alibaba")
    flags = plan_run_flags(get_profile("ecs-erdma"), inventory, dev_infiniband=("uverbs0",))  # type: ignore[arg-type]
    assert "--device=/dev/infiniband/rdma_cm" not in flags.argv
    assert any("modprobe rdma_ucm" in n for n in flags.notes)


def test_dockerfile_json_and_output_together_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ["image", "dockerfile", "--profile", "roce", "--fragment", "--distro", "rocky9"]
    assert main([*args, "--json", "-o", "x"]) == 2
    assert "error[usage]" in capsys.readouterr().err
