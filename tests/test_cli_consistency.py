"""The command line speaks one way: every subcommand's --help opens with what it does, and every command that
writes a file takes it as -o / --out."""
import argparse

import pytest

from mechfmu.cli.parser import make_parser

PARSER = make_parser()
COMMANDS = next(a for a in PARSER._actions if isinstance(a, argparse._SubParsersAction)).choices
#: per command that writes a file: its arguments besides the output, and the attribute the output lands in
WRITERS = {"run": (["s"], "out"), "sweep": (["s"], "out"), "plot-study": (["t.csv", "m", "x"], "out"),
           "export-ssp": (["s"], "output"), "draw": (["s"], "output")}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_subcommand_help_opens_with_a_description(name):
    text = COMMANDS[name].format_help()
    description = text.split("\n\n")[1].strip()
    assert not description.startswith(("positional arguments", "options")), text
    assert description[0].isupper() and description.endswith("."), description
    listed = next(a for a in PARSER._actions if isinstance(a, argparse._SubParsersAction))
    summary = next(c.help for c in listed._choices_actions if c.dest == name)
    assert " ".join(description.split()).rstrip(".").lower() == summary.lower()  # the list's summary, as a sentence


def test_the_commands_that_write_a_file_are_all_the_commands_with_an_output_option():
    has_output = {name for name, sub in COMMANDS.items()
                  if any(o in ("--out", "--output") for a in sub._actions for o in a.option_strings)}
    assert has_output == set(WRITERS)


@pytest.mark.parametrize("name", sorted(WRITERS))
@pytest.mark.parametrize("spelling", ["-o", "--out"])
def test_the_output_is_o_or_out_in_every_command(name, spelling):
    arguments, attribute = WRITERS[name]
    args = PARSER.parse_args([name, *arguments, spelling, "x.file"])
    assert getattr(args, attribute) == "x.file"


@pytest.mark.parametrize("name", ["export-ssp", "draw"])
def test_the_earlier_output_name_is_still_taken_but_not_shown(name):
    args = PARSER.parse_args([name, "s", "--output", "x.file"])
    assert args.output == "x.file" and "--output" not in COMMANDS[name].format_help()
