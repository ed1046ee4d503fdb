from click.testing import CliRunner

from mkdocs_syndicate.cli import main
from mkdocs_syndicate.ledger import Ledger, PostRef
from mkdocs_syndicate.ledger_format import Record


def test_check_reports_counts(tmp_path):
    path = tmp_path / "ledger.yml"
    with Ledger.open_for_writing(path) as ledger:
        ledger.set(PostRef("a/", "https://e.com/a/", "A"), "m", Record("in_flight", 1, "2026-12-02T07:00:00Z"))
    result = CliRunner().invoke(main, ["check", str(path)])
    assert result.exit_code == 0, result.output
    assert "1 posts, 1 records (1 in_flight)" in result.output


def test_check_names_file_and_line(tmp_path):
    path = tmp_path / "ledger.yml"
    path.write_text("version: 3\nposts: {}\n...\n")
    result = CliRunner().invoke(main, ["check", str(path)])
    assert result.exit_code == 1
    assert f"{path}:1: unknown version" in result.output
