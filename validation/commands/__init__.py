"""Subcommands of `icl-verify`, one module each (see `validation.cli`)."""
