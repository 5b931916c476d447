"""Camera calibration, card registration (layout files from a photo of a blank printed card),
colour profiles and printable companion cards."""
