"""The documentation stays true to the code."""

from __future__ import annotations

import re

import click
from click.testing import CliRunner
from conftest import REPO

from ckptdiag.cli import cli
from ckptdiag.cli.options import connection_options
from ckptdiag.model import catalogue
from ckptdiag.status import ExitStatus


def test_metrics_doc_is_the_generated_catalogue() -> None:
    text = (REPO / "docs" / "metrics.md").read_text()
    table = text.split("<!-- catalogue:start -->\n", 1)[1].split("<!-- catalogue:end -->", 1)[0]
    assert table == catalogue.markdown_table(), "regenerate: ckptdiag metrics --format md"


def test_every_command_has_help_with_an_example() -> None:
    runner = CliRunner()
    for name, command in cli.commands.items():
        result = runner.invoke(cli, [name, "--help"])
        assert result.exit_code == 0, name
        assert "Example:" in result.output, f"{name} --help has no Example block"
        assert command.help, name


def test_every_exit_status_is_documented() -> None:
    text = (REPO / "docs" / "exit-codes.md").read_text()
    for status in ExitStatus:
        assert re.search(rf"^\| {status.value} \| {status.name} \|", text, re.M), status


def test_readme_starts_with_the_two_setup_commands() -> None:
    lines = (REPO / "README.md").read_text().splitlines()
    block = lines[lines.index("```sh") + 1 : lines.index("```")]
    assert [line.split("#")[0].strip() for line in block] == ["make demo", "make test"]
    ci = (REPO / ".ci" / "run").read_text()
    assert "make test" in ci


def _commands(command: click.Command, path: tuple[str, ...]) -> list[tuple[tuple[str, ...], click.Command]]:
    if isinstance(command, click.Group):
        return [c for name, sub in command.commands.items() for c in _commands(sub, (*path, name))]
    return [(path, command)]


def test_every_option_of_every_command_has_help() -> None:
    missing = [
        f"{' '.join(path)} {param.opts[0]}"
        for path, command in _commands(cli, ("ckptdiag",))
        for param in command.params
        if isinstance(param, click.Option) and not param.hidden and not param.help
    ]
    assert missing == []


def test_diagnose_help_names_exactly_the_options_it_takes() -> None:
    command = cli.commands["diagnose"]
    text = " ".join((command.help or "").split())
    own = {"--duration", "--save", "--log", "--hosts", "--jobs"}
    from_record = {"--interval", "--device", "--source", "--rows", "--discover"}
    from_report = {"--format", "--output", "--fail-on", "--top", "--episodes"}
    names = {p.opts[-1] for p in command.params if isinstance(p, click.Option) and not p.hidden}
    probe = click.command()(connection_options(lambda **kw: None))
    connection = {p.opts[-1] for p in probe.params if isinstance(p, click.Option) and not p.hidden}
    assert names == own | from_record | from_report | connection
    for name in from_record | from_report | {"--log", "--hosts", "--jobs"}:
        assert name in text, name
    assert "every option" not in text  # it does not take --overwrite, --ndjson, --since or --until


def test_user_facing_text_cites_only_what_a_dba_can_look_up() -> None:
    """No string the program prints names this project's internal material (the articles it was
    built from, unverified notes): a DBA can look up MongoDB's docs and WT-/SERVER- tickets only."""
    import ast

    internal = re.compile(r"\bseeds?\b|unverified|shared/|tests/", re.I)
    found = []
    for path in sorted((REPO / "ckptdiag").rglob("*.py")):
        tree = ast.parse(path.read_text())
        docstrings = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef)
            and node.body
            and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant)
        }
        for node in ast.walk(tree):
            text = node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else ""
            if id(node) not in docstrings and internal.search(text):
                found.append(f"{path.relative_to(REPO)}:{node.lineno}: {node.value[:60]}")
    assert found == []


def test_the_readme_first_screen_is_what_to_run_on_your_server() -> None:
    """#32: after the two set-up commands, what to run on a DBA's own server comes first; the
    README stays short, its figures are not benchmark claims (those live in docs/benchmarks.md,
    one number per claim), and the test suite's time it gives is the one measured there."""
    text = (REPO / "README.md").read_text()
    lines = text.splitlines()
    assert len(lines) <= 150
    first_heading = next(line for line in lines if line.startswith("## "))
    assert first_heading == "## On your server"
    screen = "\n".join(lines[: lines.index(first_heading) + 16])
    for command in (
        "ckptdiag report /var/lib/mongodb/diagnostic.data",
        "ckptdiag diagnose --uri",
        "ckptdiag report /var/lib/mongodb/diagnostic.data --since -1d -o",
    ):
        assert command in screen, command
    # speeds and memory are benchmark figures: none in the README (they disagreed with each other there)
    assert not re.search(r"\d[\d.,–-]*\s*(MB/s|GB|ms\b|x faster)", text.replace("16 MB/s", "")), (
        "see docs/benchmarks.md"
    )
    minutes = re.search(r"about (\d+) minutes on 2 cores", text)
    bench = (REPO / "docs" / "benchmarks.md").read_text()
    assert minutes and f'"about {minutes.group(1)} minutes on 2 cores"' in bench
