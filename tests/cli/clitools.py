"""Helpers of the command-line tests: hash the files a command may touch."""

from __future__ import annotations

import hashlib
from pathlib import Path


def digests(folder: Path) -> dict[str, str]:
    """SHA-256 of every file under ``folder``, by relative name."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(Path(folder).rglob("*"))
        if p.is_file() and not p.is_symlink()
    }
