"""The top-box digit model: synthetic training data (``synth``), trainer (``train``)."""
