#!/usr/bin/env bash
# The action's first step: install mkdocs-syndicate from the action's own checkout (the ref the
# workflow pinned, `uses: …@v1`), so the version that runs is the one the workflow names, into a
# virtual environment of its own that also sees the job's Python packages (a mkdocs.yml names its
# theme and plugins, which must load). Prints `bin=<the command>` to $GITHUB_OUTPUT.
set -euo pipefail
action="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="${INPUT_PYTHON:-python3}"
venv="${SYNDICATE_VENV:-${RUNNER_TEMP:-${TMPDIR:-/tmp}}/mkdocs-syndicate-action}"
if ! command -v "$python" >/dev/null; then
  echo "::error title=mkdocs-syndicate::input python: '$python' is not a command (run actions/setup-python first, or name one)"
  exit 1
fi
# A second use of the action in the same job (site-files, then announce) installs nothing again.
if [ ! -x "$venv/bin/mkdocs-syndicate" ] || [ "$(cat "$venv/.installed-from" 2>/dev/null)" != "$action" ]; then
  "$python" -m venv --system-site-packages "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$action"
  printf '%s' "$action" >"$venv/.installed-from"
fi
"$venv/bin/mkdocs-syndicate" --version
echo "bin=$venv/bin/mkdocs-syndicate" >>"${GITHUB_OUTPUT:-/dev/null}"
