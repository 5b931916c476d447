"""One onnxruntime session per model file per process, shared by every reader.

The readers' models are small: each runs on one intra-op thread (the live loop reads dice and
sigils on the newest frame while the capture thread decodes the next), and loading a model once
per process is enough however many readers use it.
"""

from __future__ import annotations

import threading
from pathlib import Path

__all__ = ["onnx_session", "session_options"]

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
