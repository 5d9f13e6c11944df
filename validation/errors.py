"""The one error type of the command-line boundary."""


class CommandLineError(Exception):
    """Bad input at the command line: printed as one line, exit status 2."""
