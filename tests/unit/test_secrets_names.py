"""Secret names a rank started on this node inherited (issue 23): ``MY_PASS`` and the
other spellings of a password or credential, while the shell's own ``PWD`` and
``OLDPWD`` (directories) and names that merely hold the letters (``PASS_THROUGH``,
``GIT_ASKPASS``, ``BYPASS``) stay ordinary variables.

The launch runs for real (the env engine, one local rank that records its
environment), so what is checked is what the rank saw.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hpnet.localrun import inheritable_env
from hpnet.secrets import is_secret, looks_secret

HPNET = [sys.executable, "-m", "hpnet"]
SECRETS = {
    "MY_PASS": "pass-1", "DB_PASS": "pass-2", "PASS": "pass-3", "my_pass": "pass-4",
    "PASSWD": "pass-5", "MY_PASSWD": "pass-6", "MY_PWD": "pass-7",
    "MY_CREDENTIALS": "pass-8", "MY_CREDENTIAL": "pass-9", "SSH_PASSPHRASE": "pass-10",
}  # fmt: skip
ORDINARY = {
    "OLDPWD": "/srv/old", "PASS_THROUGH": "1", "GIT_ASKPASS": "/usr/bin/true",
    "BYPASS_CACHE": "1", "COMPASS_HOME": "/opt/compass",
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(SECRETS))
def test_a_password_or_credential_name_is_secret(name: str) -> None:
    assert looks_secret(name) and is_secret(name, "plain")


@pytest.mark.parametrize("name", ["PWD", *sorted(ORDINARY)])
def test_the_shells_directories_and_lookalikes_are_not(name: str) -> None:
    assert not looks_secret(name)


def test_inheritable_env_keeps_pwd_and_drops_passwords() -> None:
    environ = {"PATH": "/bin", "PWD": "/work", **ORDINARY, **SECRETS}
    assert inheritable_env(environ) == {"PATH": "/bin", "PWD": "/work", **ORDINARY}


def _environment(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NCCL_", "SLURM_"))}
    env.update(SECRETS)
    env.update(ORDINARY, PWD=str(tmp_path), HOME=str(tmp_path))
    return env


def test_a_local_rank_does_not_inherit_a_password(tmp_path: Path) -> None:
    record = tmp_path / "rank.json"
    code = f"import json, os; json.dump(dict(os.environ), open({str(record)!r}, 'w'))"
    done = subprocess.run(
        [*HPNET, "launch", "--engine", "env", "--", sys.executable, "-c", code],
        cwd=tmp_path, env=_environment(tmp_path), capture_output=True, text=True,
        timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    seen = json.loads(record.read_text())
    assert not set(SECRETS) & set(seen), sorted(set(SECRETS) & set(seen))
    assert not any(value in done.stdout + done.stderr for value in SECRETS.values())
    assert {name: seen.get(name) for name in ORDINARY} == ORDINARY
    assert seen["PWD"] == str(tmp_path)


def test_dry_run_names_the_withheld_and_redacts_a_named_one(tmp_path: Path) -> None:
    args = [*HPNET, "launch", "--engine", "env", "--dry-run"]
    done = subprocess.run(
        [*args, "--", "true"], cwd=tmp_path, env=_environment(tmp_path),
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    withheld = next(line for line in done.stdout.splitlines() if "not forwarded" in line)
    assert set(withheld.split(": ", 1)[1].split(", ")) >= set(SECRETS)
    assert "PWD" not in withheld.split(": ", 1)[1].split(", ")
    done = subprocess.run(
        [*args, "--json", "--env", "MY_PASS", "--", "true"], cwd=tmp_path,
        env=_environment(tmp_path), capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    assert plan["env"]["MY_PASS"] == "<redacted>"
    assert "MY_PASS" not in plan["withheld"] and "DB_PASS" in plan["withheld"]
    assert not any(value in done.stdout for value in SECRETS.values())
