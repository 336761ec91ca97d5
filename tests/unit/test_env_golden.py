"""Golden files: every profile in every format, on a recorded node that suits it.

Regenerate after a deliberate change with
``HPNET_UPDATE_GOLDEN=1 pytest tests/unit/test_env_golden.py`` and review the diff like code.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from hpnet.detect import DetectOptions, detect
from hpnet.errors import UsageError
from hpnet.nccl.env import resolve_env
from hpnet.nccl.formats import FORMATS, render
from hpnet.profiles import PROFILES, get_profile
from hpnet.runner import RecordedRunner

GOLDEN = Path(__file__).parents[1] / "golden" / "env"
#: the recorded node each profile is shown on
NODES = {
    "pai-lingjun": "cx-roce-mixed-gids",
    "scnet": "cx6-ib-dgx",
    "ecs-erdma": "erdma-alibaba",
    "pai-dlc-erdma": "erdma-alibaba",
    "modelarts": "cx6-ib-dgx",
    "ib": "cx6-ib-dgx",
    "roce": "cx-roce-mixed-gids",
    "erdma": "erdma-alibaba",
    "socket": "no-rdma-vm",
    "auto": "cx6-ib-dgx",
}
NCCL_VERSION = "2.21.5"


def test_every_profile_has_a_node() -> None:
    assert set(NODES) == set(PROFILES)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_golden(sysfs_tree: Callable[[str], Path], profile: str, fmt: str) -> None:
    root = sysfs_tree(NODES[profile])
    inventory = detect(
        DetectOptions(sysfs_root=str(root)), runner=RecordedRunner({}), env={}, python_path=[]
    )
    resolution = resolve_env(get_profile(profile), inventory, nccl_version=NCCL_VERSION)
    try:
        text = render(resolution, fmt)
    except UsageError as exc:  # e.g. Slurm's --export cannot carry a comma
        text = exc.render() + "\n"
    text = text.replace(str(root), f"<{NODES[profile]}>")
    path = GOLDEN / f"{profile}.{fmt}"
    if os.environ.get("HPNET_UPDATE_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert path.exists(), f"no golden file {path}: run with HPNET_UPDATE_GOLDEN=1"
    assert text == path.read_text()
