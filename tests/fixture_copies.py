"""The numkit fixture is imported from a private copy without any built image, so tests
that exercise the in-process compiler never pick up an image someone built into fixtures/ (the README's
first command does)."""

from __future__ import annotations

import atexit
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_COPY = Path(tempfile.mkdtemp(prefix="aot-numkit-"))
atexit.register(shutil.rmtree, _COPY, True)
NUMKIT_COPY = _COPY / "numkit"
shutil.copytree(ROOT / "fixtures" / "numkit", NUMKIT_COPY, ignore=shutil.ignore_patterns("__aot__", "__pycache__"))
sys.path.insert(0, str(NUMKIT_COPY))
