"""The cover model's network (used by ``python -m models.sigil_cover.train fit``)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from vision.sigil.ink import COVER_CHANNELS


class CoverNet(nn.Module):
    """A small fully convolutional net: cover inputs (COVER_CHANNELS, h, w) at 1 cell/mm ->
    one logit per cell "covered". One layer at full resolution, three (dilated) at half
    resolution for about 30 mm of context, the two joined for sharp edges: about 2 k
    multiply-adds per cell."""

    def __init__(self) -> None:
        super().__init__()
        self.c1 = nn.Conv2d(COVER_CHANNELS, 8, 3, padding=1)
        self.pool = nn.AvgPool2d(2, ceil_mode=True)
        self.c2 = nn.Conv2d(8, 16, 3, padding=1)
        self.c3 = nn.Conv2d(16, 16, 3, padding=2, dilation=2)
        self.c4 = nn.Conv2d(16, 16, 3, padding=4, dilation=4)
        self.c5 = nn.Conv2d(24, 8, 1)
        self.c6 = nn.Conv2d(8, 1, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = F.relu(self.c1(x))
        b = F.relu(self.c2(self.pool(a)))
        b = F.relu(self.c3(b))
        b = F.relu(self.c4(b))
        u = F.interpolate(b, size=a.shape[-2:], mode="bilinear", align_corners=False)
        return self.c6(F.relu(self.c5(torch.cat([a, u], dim=1))))
