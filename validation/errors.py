"""The one error type of the command-line boundary."""


class CommandLineError(Exception):
    """Bad input at the command line: printed as one line, exit status 2."""


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread like SIGINT's KeyboardInterrupt (exit status 143)."""
