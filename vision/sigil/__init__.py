"""The sigil card reader (``read_sigil``): lines, crossed candles and top-box digits."""

from vision.sigil.pose import NoCard, WrongLayout
from vision.sigil.reader import SigilConfig, SigilReading, read_sigil

__all__ = ["NoCard", "SigilConfig", "SigilReading", "WrongLayout", "read_sigil"]
