"""The `icl-verify` command line: one entry point, one subcommand per module.

Each subcommand lives in its own module of `validation.commands` exposing
`register(subparsers)`, which adds its parser and sets `func(args) -> int`.
Bad input anywhere at this boundary raises `CommandLineError`; `main` prints
it as one line and exits 2, never with a traceback.

Exit status: 0 success (every claim run agrees), 1 a claim disagrees, 2 bad input, 3 stopped
at `run --budget`, 130 interrupted (SIGINT, Ctrl-C), 143 terminated (SIGTERM): an interrupted
run saves every record finished before the signal, stops its workers and says how to resume.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import os
import signal
import sys
import threading

from icl_verify.validation.errors import CommandLineError, Terminated

# Subcommand modules under validation.commands, in the order `--help` lists them.
COMMANDS = ("list", "show", "run", "stability", "sweep", "report", "figures", "publish", "derive",
            "flow")


#: Failures of the machine, not the program: reported in one line, never a traceback.
_ENVIRONMENT_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EACCES, errno.EROFS, errno.EPERM}


class _Parser(argparse.ArgumentParser):
    """argparse that reports bad usage as one line and exit status 2."""

    def error(self, message: str) -> None:  # pragma: no cover - exercised via main
        raise CommandLineError(message)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="icl-verify",
        description="Check the theory of multi-head softmax attention for in-context "
        "regression against simulation, claim by claim.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    subparsers.required = True
    for name in COMMANDS:
        importlib.import_module(f"icl_verify.validation.commands.{name}").register(subparsers)
    return parser


def _terminated(signum, frame) -> None:
    raise Terminated()


def main(argv: list[str] | None = None) -> int:
    in_main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _terminated) if in_main_thread else None
    try:
        args = build_parser().parse_args(argv)
        status = int(args.func(args))
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's last flush
        return status
    except CommandLineError as error:
        print(f"icl-verify: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as interrupt:  # the command said what it saved, where it could
        return 143 if isinstance(interrupt, Terminated) else 130
    except BrokenPipeError:
        # The reader went away (`icl-verify list | head`): stop quietly, as Unix tools do;
        # stdout is pointed at devnull so the interpreter's final flush cannot fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, the shell's status for a writer killed by a closed pipe
    except OSError as error:
        if error.errno not in _ENVIRONMENT_ERRNOS:
            raise
        # A full disk or a folder taken away mid-run: what was written stays (atomic
        # writes); rerunning the same --run-id resumes once the cause is mended.
        where = f"{error.filename}: " if error.filename else ""
        print(f"icl-verify: error: {where}{error.strerror}", file=sys.stderr)
        return 2
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":
    sys.exit(main())
