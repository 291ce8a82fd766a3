"""The Debian sid chroot where the 3.14 and 3.15 jobs run: built under ``.matrix/`` with what the
suite needs, and always unmounted before it is removed."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

from matrix_steps import CannotStart, StepFailed, run, say, uv

ROOT = Path(__file__).resolve().parents[1]
SID_MIRROR = "http://deb.debian.org/debian"
CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
MOUNTS = (
    ("proc", "proc", ["-t", "proc"]),
    ("/sys", "sys", ["--rbind"]),
    ("/dev", "dev", ["--rbind"]),
)
"""What the chroot mounts of the host's, besides uv's cache (``UV_CACHE``)."""
UV_CACHE = "root/.cache/uv"


class Sid:
    """A Debian sid chroot under ``.matrix/``: its Pythons are 3.14 and 3.15."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.ready = False
        self.failure: str | None = None

    def mounts(self) -> list[str]:
        """What is mounted inside the chroot, deepest first."""
        inside = str(self.root) + "/"
        with open("/proc/mounts", encoding="utf-8") as table:
            points = [line.split()[1] for line in table]
        return sorted((point for point in points if point.startswith(inside)), reverse=True)

    def mounted(self) -> bool:
        """Whether each of the host's directories is mounted inside, as ``_build`` leaves them."""
        points = set(self.mounts())
        targets = [target for _, target, _ in MOUNTS] + [UV_CACHE]
        return all(str(self.root / target) in points for target in targets)

    @property
    def built(self) -> Path:
        """Written once the chroot is whole: a chroot left by ``--prepare`` is used as it is."""
        return self.root / "matrix-built"

    def build(self, log: Path) -> None:
        """Bootstrap sid with what the tests run (PostgreSQL, PgBouncer, faketime, chattr and
        make), then copy the project in; or, where a whole chroot is left in place and mounted,
        copy the project into it again. Once: a failure fails the next job at once, too."""
        if self.failure:
            raise CannotStart(self.failure)
        if self.ready:
            return
        try:
            if self.built.exists() and self.mounted():
                say(f"using the sid chroot already built in {self.root}")
                self._copy_project()
            else:
                self._build(log)
        except (StepFailed, CannotStart, OSError) as error:
            self.failure = f"the sid chroot cannot be built: {error}"
            raise CannotStart(self.failure) from error
        self.ready = True

    def _build(self, log: Path) -> None:
        sudo = [] if os.geteuid() == 0 else ["sudo"]
        if shutil.which("mmdebstrap") is None:
            say("installing mmdebstrap (apt-get) for the 3.14 and 3.15 jobs")
            # another apt-get may be running: make test's, for its own tools
            apt_get = [*sudo, "apt-get", "-o", "DPkg::Lock::Timeout=600"]
            run([*apt_get, "update", "-qq"], step="apt-get update", log=log)
            run(
                [
                    *apt_get,
                    "install",
                    "-y",
                    "-qq",
                    "--no-install-recommends",
                    "mmdebstrap",
                ],
                step="apt-get install mmdebstrap",
                log=log,
            )
        self.teardown()
        self.root.mkdir(parents=True)
        started = time.monotonic()
        # mmdebstrap, not debootstrap: one apt run installs every package at once, in about a
        # third of debootstrap's CPU (36 CPU-seconds against 84, measured on this machine kind)
        run(
            [
                *sudo,
                "mmdebstrap",
                "--variant=minbase",
                # the mirror may be a snapshot whose Release file has expired; debootstrap never
                # checked, and the chroot's own apt keeps this setting (99mmdebstrap)
                '--aptopt=Acquire::Check-Valid-Until "false"',
                "--skip=cleanup/apt/lists",  # the jobs' apt-get install reads them
                "--include=ca-certificates,postgresql,pgbouncer,faketime,e2fsprogs,make",
                "sid",
                str(self.root),
                SID_MIRROR,
            ],
            step="mmdebstrap sid",
            log=log,
        )
        say(f"sid bootstrapped in {time.monotonic() - started:.0f} s")
        for device, target, options in MOUNTS:
            run(
                [*sudo, "mount", *options, device, str(self.root / target)],
                step=f"mount {target}",
                log=log,
            )
        # uv's cache is the host's: the wheels the host's jobs fetched are not fetched again
        cache = Path(
            run([str(uv()), "cache", "dir"], step="uv cache dir", log=log, echo=False).strip()
        )
        cache.mkdir(parents=True, exist_ok=True)
        (self.root / UV_CACHE).mkdir(parents=True, exist_ok=True)
        run(
            [*sudo, "mount", "--bind", str(cache), str(self.root / UV_CACHE)],
            step="mount uv's cache",
            log=log,
        )
        if CA_BUNDLE.exists():  # the host's trust, which may include a proxy's CA
            shutil.copy(CA_BUNDLE, self.root / CA_BUNDLE.relative_to("/"))
        for name in ("resolv.conf", "hosts"):
            shutil.copy(Path("/etc") / name, self.root / "etc" / name)
        shutil.copy(uv(), self.root / "usr/local/bin/uv")
        self._copy_project()
        self.built.touch()

    def _copy_project(self) -> None:
        """The working tree, as git sees it (tracked and new files), into ``/src``."""
        source = self.root / "src"
        shutil.rmtree(source, ignore_errors=True)
        tracked = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT,
            check=True,
            capture_output=True,
        ).stdout.split(b"\0")
        for name in filter(None, (entry.decode() for entry in tracked)):
            if (ROOT / name).is_file():
                (source / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(ROOT / name, source / name)

    def install(self, package: str, log: Path) -> None:
        """``apt-get install`` a Debian package inside the chroot."""
        self.chroot(
            [
                *("apt-get", "-o", "DPkg::Lock::Timeout=600", "install", "-y", "-qq"),
                *("--no-install-recommends", package),
            ],
            step=f"apt-get install {package} (sid)",
            log=log,
        )

    def chroot(
        self, argv: Sequence[str], *, step: str, log: Path, cwd: str = "/", echo: bool = True
    ) -> str:
        """Run ``argv`` inside the chroot, from ``cwd``, with a clean environment."""
        sudo = [] if os.geteuid() == 0 else ["sudo"]
        return run(
            [
                *sudo,
                "chroot",
                str(self.root),
                "/usr/bin/env",
                "-i",
                f"--chdir={cwd}",
                "HOME=/root",
                "LANG=C.UTF-8",
                "PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
                f"SSL_CERT_FILE={CA_BUNDLE}",
                "DEBIAN_FRONTEND=noninteractive",
                *argv,
            ],
            step=step,
            log=log,
            echo=echo,
        )

    def teardown(self) -> None:
        """Unmount everything inside the chroot, then remove it; never remove while mounted."""
        sudo = [] if os.geteuid() == 0 else ["sudo"]
        for point in self.mounts():
            subprocess.run([*sudo, "umount", "--lazy", point], check=False)
        left = self.mounts()
        if left:
            raise RuntimeError(f"still mounted, so {self.root} is left in place: {left}")
        if self.root.exists():
            subprocess.run([*sudo, "rm", "-rf", "--one-file-system", str(self.root)], check=True)
