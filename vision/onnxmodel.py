"""One onnxruntime session per model file per process, shared by every reader.

The readers' models are small: each runs on one intra-op thread (the live loop reads dice and
sigils on the newest frame while the capture thread decodes the next), and loading a model once
per process is enough however many readers use it.
"""

from __future__ import annotations

import functools
import platform
import threading
from pathlib import Path

__all__ = ["int8_exact", "onnx_session", "session_options", "vnni"]

_SESSIONS: dict[tuple[str, str], object] = {}
_LOCK = threading.Lock()


def session_options() -> object:
    """The ``onnxruntime.SessionOptions`` every model of the project runs with: one intra-op
    and one inter-op thread, warnings and below not logged."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 3
    return opts


def onnx_session(path: str | Path, what: str = "model", *, role: str = "") -> object:
    """The ``onnxruntime.InferenceSession`` of the ONNX file at ``path`` (CPU, one thread),
    made on first use and kept for the process. Raises ``FileNotFoundError`` naming ``what``
    when the file is missing. Each ``role`` has a session of its own: a caller that runs one
    model on inputs of two sizes in turn gives each size its own session, as onnxruntime
    plans its memory for the last shape it ran (alternating two shapes on one session cost
    the dice detector ~15% per pass)."""
    key = str(path)
    with _LOCK:
        sess = _SESSIONS.get((key, role))
        if sess is None:
            import onnxruntime as ort

            if not Path(key).is_file():
                raise FileNotFoundError(f"{key}: {what} missing")
            sess = ort.InferenceSession(key, session_options(),
                                        providers=["CPUExecutionProvider"])
            _SESSIONS[key, role] = sess
        return sess


def vnni(cpuinfo: str) -> bool:
    """Whether the first ``flags`` line of a Linux ``/proc/cpuinfo`` text names VNNI
    (``avx512_vnni`` or ``avx_vnni``)."""
    for line in cpuinfo.splitlines():
        if line.startswith("flags"):
            return bool({"avx512_vnni", "avx_vnni"} & set(line.partition(":")[2].split()))
    return False


@functools.lru_cache(maxsize=1)
def int8_exact() -> bool:
    """Whether onnxruntime's 8-bit kernels compute exactly on this CPU, so that an int8 net
    reads here as it was measured: an x86-64 CPU with VNNI (its dot products sum in 32
    bits), told from ``/proc/cpuinfo``. Without VNNI the u8s8 kernels sum pairs of products
    in 16 bits, which can saturate; the exact u8u8 kernels (``session.x64quantprecision``)
    made the dice classifier slower than its float net. False wherever this cannot be told
    (other CPUs and systems): the float nets are read there."""
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return False
    try:
        return vnni(Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return False
