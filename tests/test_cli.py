from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

import pytest

from companion.cli import build_parser, int_list, main


def test_python_dash_m_companion_prints_help():
    out = subprocess.run([sys.executable, "-m", "companion", "--help"], capture_output=True,
                         text=True, check=True)
    assert "doomcompanion" in out.stdout
    for command in ("serve", "dice", "sigil", "layouts", "score", "cat", "machine", "eval",
                    "bench", "render", "cards"):
        assert command in out.stdout


@pytest.mark.parametrize("argv", [
    ["dice", "a.jpg", "--json"],
    ["sigil", "a.jpg", "--layout", "A"],
    ["score", "s.json", "--goals", "1,2,3", "--familiar", "F03", "--json"],
    ["cat", "simulate", "--games", "10", "--goals", "1,2,3", "--policy", "greedy", "--seed", "1"],
    ["machine", "simulate", "--games", "10", "--policy", "random", "--seed", "1", "--hard"],
    ["eval", "dice", "DIR", "--json"], ["bench", "sigil", "DIR"],
    ["render", "dice", "OUT", "--count", "3", "--seed", "4"],
    ["cards", "print", "--layout", "A", "--out", "card.pdf"],
    ["cards", "register", "p.jpg", "--layout", "l.json", "--name", "mine"],
    ["serve"], ["layouts", "--json"],
])
def test_every_command_of_the_design_parses(argv):
    args = build_parser().parse_args(argv)
    assert ":" in args.handler


@pytest.mark.parametrize("argv", [
    ["cat", "simulate", "--games", "0", "--goals", "1"],
    ["score", "s.json", "--goals", "one"],
    ["sigil", "a.jpg"],
    ["nonsense"],
])
def test_bad_arguments_exit_2(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert "error" in capsys.readouterr().err


@pytest.mark.parametrize("kind", ["dice", "sigil"])
def test_a_negative_seed_is_refused_before_the_folder_is_made(kind, tmp_path, capsys):
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as exc:
        main(["render", kind, str(out), "--count", "1", "--seed", "-3"])
    assert exc.value.code == 2
    assert "argument --seed: must be 0 or more, got -3" in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.parametrize("kind", ["dice", "sigil"])
@pytest.mark.parametrize(("where", "message"), [
    ("afile/sub", "afile/sub: cannot create the folder: Not a directory"),
    ("afile", "afile: exists and is not a folder"),
])
def test_render_into_a_folder_that_cannot_be_made_exits_2(kind, where, message, tmp_path,
                                                          capsys):
    (tmp_path / "afile").write_text("not a folder")
    assert main(["render", kind, str(tmp_path / where), "--count", "1"]) == 2
    err = capsys.readouterr().err
    assert err == f"doomcompanion: error: {tmp_path}/{message}\n"


@pytest.mark.parametrize("kind", ["dice", "sigil"])
@pytest.mark.parametrize(("labels", "where", "message"), [
    ("[]", "$", "expected a non-empty list"),
    ('[{"image": "../a.png", "%s": %s}]', "$[0].image", "'../a.png' is outside the labelled"),
    ('[{"image": "/etc/passwd", "%s": %s}]', "$[0].image", "'/etc/passwd' is outside"),
    ('[{"image": "a.png", "%s": %s}, {"image": "b.png", "%s": %s}]', "$[1].image",
     "no such file 'b.png'"),
    ('[{"image": "a.png", "%s": %s, "x": NaN}]', "$[0].x", "NaN is not a number JSON allows"),
])
def test_eval_refuses_bad_labels_alike_for_dice_and_sigil(kind, labels, where, message,
                                                          tmp_path, capsys):
    folder = tmp_path / "set"
    folder.mkdir()
    (folder / "a.png").write_bytes(b"")
    (tmp_path / "a.png").write_bytes(b"")
    label = '[]' if kind == "dice" else '{"layout": "A"}'
    (folder / "labels.json").write_text(labels.replace("%s", kind, 1).replace("%s", label, 1)
                                        .replace("%s", kind, 1).replace("%s", label, 1))
    assert main(["eval", kind, str(folder)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"doomcompanion: error: {folder / 'labels.json'}: at {where}: ")
    assert message in err and err.count("\n") == 1


def test_int_list():
    assert int_list("1, 2,3") == [1, 2, 3]


def _leaves(parser, path=()):
    """Every command that runs a handler, with its parser: (("cat", "simulate"), parser)."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield path, parser
        return
    for name, child in subs[0].choices.items():
        yield from _leaves(child, (*path, name))


@pytest.mark.parametrize("path, parser", list(_leaves(build_parser())),
                         ids=lambda v: " ".join(v) if isinstance(v, tuple) else "")
def test_every_option_says_what_it_is_and_its_default(path, parser):
    # a newcomer reads --help: each option explains itself, and one with a default names it
    for action in parser._actions:
        if not action.option_strings or action.dest == "help":
            continue
        assert action.help, f"{' '.join(path)} {action.option_strings[0]}: no help text"
        if action.default not in (None, False) and not action.required:
            assert "default" in action.help, (
                f"{' '.join(path)} {action.option_strings[0]}: default {action.default!r} "
                f"not named in its help")


README = Path(__file__).resolve().parents[1] / "README.md"
_PLACEHOLDER = {"IMAGE...": "a.jpg", "IMAGE": "a.jpg", "STATE.json...": "s.json", "DIR": "d",
                "OUT": "o", "PHOTO": "p.jpg", "LAYOUT.json": "l.json", "FILE": "f.pdf",
                "SRC": "0", "H": "127.0.0.1", "P": "greedy", "N": "3", "S": "1", "L": "A",
                "NAME": "mine", "1,2,3": "1,2,3", "F03": "F03"}


def _readme_commands() -> list[list[str]]:
    text = README.read_text()
    section = text.split("## Command line", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    out = []
    for row in rows:
        for command in re.findall(r"`([^`]+)`", row.split("|")[1]):
            words = command.replace("[", "").replace("]", "").split()
            argv = [_PLACEHOLDER.get(w, w) for w in words]
            if argv[0] == "serve":   # --port P is a number, not a policy
                argv = ["8321" if a == "greedy" else a for a in argv]
            out.append(argv)
    return out


def test_the_readme_command_table_is_the_command_line():
    commands = _readme_commands()
    for argv in commands:
        args = build_parser().parse_args(argv)   # every option shown exists
        assert ":" in args.handler, argv
    shown = {tuple(a for a in argv[:2] if not a.startswith("-") and a.islower()
                   and a.isalpha()) for argv in commands}
    for path, _ in _leaves(build_parser()):
        assert path in shown or path[:1] in shown, f"{' '.join(path)} missing from README.md"


@pytest.mark.parametrize("game", [["cat", "simulate", "--goals", "1,2,3"],
                                  ["machine", "simulate"]], ids=["cat", "machine"])
def test_both_simulate_commands_word_an_unknown_policy_alike(game, capsys):
    assert main([*game, "--games", "1", "--policy", "smart"]) == 2
    err = capsys.readouterr().err
    assert err == ("doomcompanion: error: --policy: unknown policy 'smart' "
                   "(known: greedy, random)\n")
