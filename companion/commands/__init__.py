"""Handlers of the ``doomcompanion`` commands, one module per area (see ``companion.cli``)."""
