"""`hpnet image dockerfile`: golden files for every profile x distribution, parsed by
BuildKit's own Dockerfile parser, package names checked against recorded package
lists, the guides' steps present (and nothing they forbid), and the verify step run
by a real shell against image roots laid out from real listings.

Regenerate the goldens after a deliberate change with
``HPNET_UPDATE_GOLDEN=1 pytest tests/unit/test_image_dockerfile.py`` and review the diff.
"""

from __future__ import annotations

import gzip
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import dockerfile
import pytest

from hpnet.cli.main import main
from hpnet.distros import DISTROS, distro_from_image, get_distro
from hpnet.errors import InputError, UsageError
from hpnet.image.dockerfile import Dockerfile, choose_package_set, plan_dockerfile
from hpnet.profiles import PROFILES, get_profile
from tests.conftest import DATA
from tests.image_roots import debian_rdma_core, device_image, image_root

GOLDEN = Path(__file__).parents[1] / "golden" / "image"
IMAGE_PROFILES = sorted(p for p in PROFILES if p not in ("socket", "auto"))
SH = shutil.which("sh")


def covered() -> list[tuple[str, str]]:
    pairs = []
    for profile in IMAGE_PROFILES:
        for distro in DISTROS.values():
            try:
                choose_package_set(get_profile(profile), distro)
            except InputError:
                continue
            pairs.append((profile, distro.name))
    return pairs


COVERED = covered()


def plan(profile: str, distro: str, *, base: str | None = "example/base:1") -> Dockerfile:
    return plan_dockerfile(
        get_profile(profile),
        get_distro(distro),
        base=base,
        command_line=f"hpnet image dockerfile --profile {profile} --distro {distro}",
        version="TEST",
    )


def parse(text: str) -> tuple[dockerfile.Command, ...]:
    return dockerfile.parse_string(text)


def verify_of(text: str) -> str:
    """The verify step's script, as BuildKit's parser reads the heredoc."""
    (run,) = [c for c in parse(text) if c.heredocs]
    assert run.cmd == "RUN" and run.heredocs[0].name == "HPNET_VERIFY"
    content: str = run.heredocs[0].content
    return content


# ------------------------------------------------------------------ coverage and goldens


def test_each_guide_covers_what_it_says() -> None:
    by_profile: dict[str, set[str]] = {}
    for profile, distro in COVERED:
        by_profile.setdefault(profile, set()).add(distro)
    # seed 004: Ubuntu 22.04 only; seed 002: CentOS / Alibaba Cloud Linux and Ubuntu 18/20
    assert by_profile["pai-dlc-erdma"] == {"ubuntu22.04"}
    assert by_profile["ecs-erdma"] == {
        "centos7",
        "centos8",
        "alinux2",
        "alinux3",
        "ubuntu18.04",
        "ubuntu20.04",
    }
    # seed 000's installer is for Ubuntu; seed 001 names a Debian-family package
    assert by_profile["pai-lingjun"] == {d for d in DISTROS if d.startswith("ubuntu")}
    assert by_profile["scnet"] == {d for d in DISTROS if DISTROS[d].manager == "apt"}
    # no packages in the guide: the distribution's rdma-core, everywhere
    assert by_profile["modelarts"] == set(DISTROS)


@pytest.mark.parametrize(("profile", "distro"), COVERED)
def test_golden(profile: str, distro: str) -> None:
    text = plan(profile, distro).render()
    path = GOLDEN / f"{profile}.{distro}.Dockerfile"
    if os.environ.get("HPNET_UPDATE_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert path.exists(), f"no golden file {path}: run with HPNET_UPDATE_GOLDEN=1"
    assert text == path.read_text()


def test_no_stale_goldens() -> None:
    expected = {f"{p}.{d}.Dockerfile" for p, d in COVERED}
    assert {p.name for p in GOLDEN.iterdir()} == expected


@pytest.mark.parametrize(("profile", "distro"), COVERED)
def test_parses_and_every_step_says_where_it_comes_from(profile: str, distro: str) -> None:
    text = plan(profile, distro).render()
    commands = parse(text)
    assert commands[0].cmd == "FROM" and commands[0].value == ("example/base:1",)
    assert {c.cmd for c in commands} <= {"FROM", "ARG", "RUN"}
    assert text.startswith("# syntax=docker/dockerfile:1\n")
    lines = text.splitlines()
    for command in commands:
        above = lines[command.start_line - 2]
        assert re.match(r"# (guide|hpnet|rdma-core): \S", above), (command.original, above)
    # the build ends by verifying what it built
    assert commands[-1].heredocs and commands[-1].heredocs[0].name == "HPNET_VERIFY"


def test_fragment_has_no_from_and_parses() -> None:
    text = plan("ecs-erdma", "centos7", base=None).render()
    commands = parse(text)
    assert commands and all(c.cmd != "FROM" for c in commands)
    assert "append it to a Dockerfile" in text


# ------------------------------------------------------------------ package names

DEBIAN_NAMES = set(
    gzip.decompress((DATA / "packages" / "debian12-bookworm-main-amd64.names.gz").read_bytes())
    .decode()
    .split()
)
RPM_NAMES = set((DATA / "packages" / "rdma-core-rpm-packages.txt").read_text().split())
RHEL_BASE = {"wget", "ca-certificates"}


def installed_packages(text: str) -> tuple[str, list[str]]:
    """(manager, every package a RUN installs or removes)."""
    names: list[str] = []
    manager = ""
    for command in parse(text):
        if command.cmd != "RUN" or command.heredocs:
            continue
        for part in re.split(r"&&|\|", command.value[0]):
            words = shlex.split(part)
            if words[:2] in (["apt-get", "install"], ["yum", "install"], ["yum", "remove"]):
                manager = "apt" if words[0] == "apt-get" else "yum"
                names += [w for w in words[2:] if not w.startswith("-")]
            if words[:1] == ["dpkg-query"]:  # the removal of what is installed
                names += [w for w in words[2:] if not w.startswith("-") and ">" not in w]
    return manager, names


@pytest.mark.parametrize(("profile", "distro"), COVERED)
def test_every_package_exists(profile: str, distro: str) -> None:
    manager, names = installed_packages(plan(profile, distro).render())
    assert names, "no package installed"
    assert manager == DISTROS[distro].manager
    known = DEBIAN_NAMES if manager == "apt" else RPM_NAMES | RHEL_BASE
    unknown = [n for n in names if n not in known]
    assert not unknown, f"not in the recorded {manager} package list: {unknown}"


def test_the_package_check_catches_a_misspelling() -> None:
    text = plan("pai-dlc-erdma", "ubuntu22.04").render().replace("librdmacm1", "librdmacm")
    _, names = installed_packages(text)
    assert "librdmacm" in names and "librdmacm" not in DEBIAN_NAMES


# ------------------------------------------------------------------ what the guides ask


def test_pai_dlc_erdma_is_the_guides_dockerfile() -> None:
    text = plan("pai-dlc-erdma", "ubuntu22.04").render()
    # seed 004, "Example Dockerfile": remove the OFED list and libraries, add the key and
    # the repository, install the four packages
    assert "rm -f /etc/apt/sources.list.d/mellanox_mlnx_ofed.list" in text
    assert "libibverbs1 ibverbs-providers ibverbs-utils librdmacm1 2>/dev/null" in text
    assert (
        "wget -qO - http://mirrors.aliyun.com/erdma/GPGKEY | gpg --dearmour -o "
        "/etc/apt/trusted.gpg.d/erdma.gpg" in text
    )
    assert "'deb [ ] http://mirrors.aliyun.com/erdma/apt/ubuntu jammy/erdma main'" in text
    assert "apt-get install -y libibverbs1 ibverbs-providers ibverbs-utils librdmacm1" in text
    # the removal comes before the install, which comes before the check
    assert text.index("mellanox_mlnx_ofed") < text.index("apt-get install -y libibverbs1")
    assert "cuda_min=12.1" in text and "nccl_min=2.19" in text and "for prov in erdma" in text
    # what the guide says does not apply, and what belongs to the job, is not baked in
    assert "ENV" not in {c.cmd for c in parse(text)}
    assert "NCCL_IB_TC" not in text and "mlx5" not in verify_of(text)


def test_lingjun_runs_the_vendor_installer_after_its_packages() -> None:
    text = plan("pai-lingjun", "ubuntu22.04").render()
    assert (
        "apt-get install -y --allow-downgrades --allow-change-held-packages "
        "--no-install-recommends libnl-3-dev libnl-route-3-dev libnl-3-200 libnl-route-3-200 "
        "iproute2 udev dmidecode ethtool" in text
    )
    assert "nic-libs-mellanox-rdma-5.2-2/nic-lib-rdma-core-installer-ubuntu.tar.gz" in text
    assert "echo Y | /bin/bash install.sh" in text
    assert text.index("dmidecode ethtool") < text.index("install.sh")
    assert "for prov in mlx5" in text and "cuda_min=11.2" in text and "nccl_min=2.12.10" in text
    assert "erdma" not in text


def test_ecs_erdma_adds_the_repository_and_the_aiacc_plugin() -> None:
    centos = plan("ecs-erdma", "centos7").render()
    assert "baseurl=https://mirrors.aliyun.com/erdma/yum/redhat/$releasever/erdma/x86_64" in centos
    assert "gpgkey=https://mirrors.aliyun.com/erdma/GPGKEY" in centos
    assert "yum makecache" in centos
    assert "yum install -y libibverbs rdma-core librdmacm libibverbs-utils" in centos
    assert "rpm -i aiacc-nccl-plugin-1.0.2.rpm" in centos
    # the plugin supports NCCL 2.8 to 2.16 only
    assert "nccl_min=2.8" in centos and "nccl_max=2.16" in centos
    focal = plan("ecs-erdma", "ubuntu20.04").render()
    assert "'deb [ arch=amd64 ] https://mirrors.aliyun.com/erdma/apt/ubuntu focal/erdma main'" in (
        focal
    )
    assert "dpkg -i aiacc-nccl-plugin-1.0.2.deb" in focal


def test_scnet_installs_the_verbs_headers_and_its_check_tools() -> None:
    text = plan("scnet", "ubuntu22.04").render()
    assert "apt-get install -y libibverbs-dev ibverbs-utils infiniband-diags" in text


def test_uncovered_release_is_an_error_not_a_guess(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(InputError) as raised:
        plan("pai-dlc-erdma", "ubuntu20.04")
    assert raised.value.code == "distro-not-covered" and "ubuntu22.04" in raised.value.fix
    code = main(["image", "dockerfile", "--profile", "ecs-erdma", "--base", "ubuntu:22.04"])
    err = capsys.readouterr().err
    assert code == 2 and "error[distro-not-covered]" in err and "ubuntu20.04" in err


@pytest.mark.parametrize("profile", ["socket", "auto"])
def test_profiles_without_an_image(profile: str) -> None:
    with pytest.raises(UsageError, match="no image steps"):
        plan(profile, "ubuntu22.04")


# ------------------------------------------------------------------ the command line


def test_cli_reads_the_distribution_from_the_base(capsys: pytest.CaptureFixture[str]) -> None:
    base = "nvidia/cuda:12.4.1-cudnn-devel-ubuntu22.04"
    assert main(["image", "dockerfile", "--profile", "pai-dlc-erdma", "--base", base]) == 0
    out = capsys.readouterr().out
    assert f"FROM {base}" in out and "jammy/erdma" in out


@pytest.mark.parametrize(
    ("args", "code", "needle"),
    [
        (["--profile", "pai-dlc-erdma"], "usage", "--fragment"),
        (
            ["--profile", "pai-dlc-erdma", "--base", "nvcr.io/nvidia/pytorch:24.01-py3"],
            "usage",
            "--distro",
        ),
        (["--profile", "pai-dlc-erdma", "--base", "x\nRUN rm -rf /"], "bad-image", "--base"),
        (
            ["--profile", "pai-dlc-erdma", "--base", "ubuntu:20.04", "--distro", "ubuntu22.04"],
            "usage",
            "is ubuntu20.04",
        ),
        (
            ["--profile", "pai-dlc-erdma", "--fragment", "--distro", "ubuntu2204"],
            "unknown-distro",
            "ubuntu22.04",
        ),
        (
            ["--profile", "pai-dlc-erdm", "--fragment", "--distro", "ubuntu22.04"],
            "unknown-profile",
            "pai-dlc-erdma",
        ),
    ],
)
def test_cli_bad_input(
    capsys: pytest.CaptureFixture[str], args: list[str], code: str, needle: str
) -> None:
    assert main(["image", "dockerfile", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error[{code}]") and needle in err and "Traceback" not in err


def test_cli_writes_the_file_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "Dockerfile"
    args = ["image", "dockerfile", "--profile", "roce", "--fragment", "--distro", "rocky9"]
    assert main([*args, "-o", str(out)]) == 0
    assert "yum install -y rdma-core libibverbs librdmacm libibverbs-utils" in out.read_text()
    assert main([*args, "--json"]) == 0
    import json

    data = json.loads(capsys.readouterr().out)
    written = out.read_text()
    assert data["schema_version"] == 1
    # the same Dockerfile, but for the command line in its first comment
    assert data["dockerfile"].split("\n", 1)[1] == written.split("\n", 1)[1]
    assert [s["origin"] for s in data["steps"]][-1] == "hpnet"
    assert any(s["origin"] == "rdma-core" for s in data["steps"])


def test_distro_from_image_names() -> None:
    assert distro_from_image("nvidia/cuda:11.8.0-devel-centos7") == "centos7"
    assert distro_from_image("nvidia/cuda:12.2.0-runtime-rockylinux8") == "rocky8"
    assert distro_from_image("debian:bookworm-slim") == "debian12"
    assert distro_from_image("ubuntu:21.04") is None  # not a release hpnet builds for


# ------------------------------------------------------------------ the verify step, run


def run_verify(script: str, root: Path) -> tuple[int, str]:
    assert SH is not None
    env = {"PATH": os.environ["PATH"], "HPNET_IMAGE_ROOT": str(root)}
    done = subprocess.run(
        [SH, "-c", script], capture_output=True, text=True, env=env, timeout=60, check=False
    )
    return done.returncode, done.stdout + done.stderr


@pytest.mark.skipif(SH is None, reason="no sh")
def test_verify_passes_on_debian_rdma_core_and_warns_about_missing_cuda(tmp_path: Path) -> None:
    script = verify_of(plan("pai-dlc-erdma", "ubuntu22.04").render())
    code, out = run_verify(script, image_root(tmp_path, debian_rdma_core()))
    assert code == 0, out
    assert (
        "ok    verbs provider erdma: /usr/lib/x86_64-linux-gnu/libibverbs/liberdma-rdmav34.so"
        in out
    )
    assert "warn  no CUDA found" in out and "warn  no NCCL found" in out
    assert out.rstrip().endswith("ready for pai-dlc-erdma")


@pytest.mark.skipif(SH is None, reason="no sh")
@pytest.mark.parametrize(
    ("skip", "needle"),
    [
        (("liberdma-rdmav34.so",), "no erdma verbs provider"),
        (("erdma.driver",), "the erdma provider is at /usr/lib/x86_64-linux-gnu/libibverbs/"),
        (("libibverbs.so.1", "libibverbs.so.1.14.44.0"), "libibverbs.so.1 is missing"),
    ],
)
def test_verify_fails_without_the_provider(
    tmp_path: Path, skip: tuple[str, ...], needle: str
) -> None:
    script = verify_of(plan("pai-dlc-erdma", "ubuntu22.04").render())
    code, out = run_verify(script, image_root(tmp_path, debian_rdma_core(skip)))
    assert code == 1, out
    assert f"FAIL  {needle}" in out and "NOT READY for pai-dlc-erdma" in out


@pytest.mark.skipif(SH is None, reason="no sh")
def test_verify_judges_the_versions_of_a_real_image(tmp_path: Path) -> None:
    root = image_root(tmp_path, device_image())
    code, out = run_verify(verify_of(plan("pai-dlc-erdma", "ubuntu22.04").render()), root)
    assert code == 0, out
    assert "ok    NCCL 2.28.3(/usr/lib/x86_64-linux-gnu/libnccl.so.2.28.3)" in out
    # the AIACC plugin's 2.8..2.16: the image's 2.28.3 and its wheel's 2.28.9 are too new
    code, out = run_verify(verify_of(plan("ecs-erdma", "ubuntu20.04").render()), root)
    assert code == 1, out
    assert "FAIL  NCCL found: 2.28.3(" in out and "2.28.9(pip)" in out and "2.8 to 2.16.x" in out


@pytest.mark.skipif(SH is None, reason="no sh")
def test_verify_reads_cuda_version_json(tmp_path: Path) -> None:
    root = image_root(tmp_path, debian_rdma_core())
    (root / "usr/local/cuda").mkdir(parents=True)
    shutil.copy(DATA / "images" / "cuda-11.5.2-version.json", root / "usr/local/cuda/version.json")
    code, out = run_verify(verify_of(plan("pai-dlc-erdma", "ubuntu22.04").render()), root)
    assert code == 1 and "FAIL  CUDA found: 11.5.2(/usr/local/cuda)" in out, out
    code, out = run_verify(verify_of(plan("pai-lingjun", "ubuntu22.04").render()), root)
    assert "ok    CUDA 11.5.2(/usr/local/cuda) (11.2 or later required)" in out, out
