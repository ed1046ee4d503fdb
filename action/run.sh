#!/usr/bin/env bash
# The action's second step: one mkdocs-syndicate command from the action's inputs (INPUT_*, set by
# action.yml from `with:`). Its exit status is the job's: 1 when pairs are left undone or feed
# entries were left out, so the job fails and says which. The channels' credentials come from the
# step's `env:`; the summary of the run goes to $GITHUB_STEP_SUMMARY from the command itself.
set -euo pipefail
bin="${SYNDICATE_BIN:-mkdocs-syndicate}"
command="${INPUT_COMMAND:-announce}"
mode="${INPUT_MODE:-send}"

refuse() {  # an input that is wrong: named, with what it may be, in the log and the job summary
  local message="input ${1//[$'\r\n']/ }"  # one line: a value cannot start another command
  echo "::error title=mkdocs-syndicate::${message//'%'/%25}"
  if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
    printf '### mkdocs-syndicate\n\nNothing was run: %s\n' "$message" >>"$GITHUB_STEP_SUMMARY" || true
  fi
  exit 2
}

without_userinfo() {  # https://user:token@host/x.git as https://***@host/x.git: never printed whole
  printf '%s' "$1" | sed -E 's#^([A-Za-z][A-Za-z0-9+.-]*://)?[^/]*@#\1***@#'
}

args=()
if [ -n "${INPUT_CONFIG:-}" ]; then args+=(-f "$INPUT_CONFIG"); fi

case "$command" in
  site-files)
    if [ -n "${INPUT_SITE_DIR:-}" ]; then args+=(--site-dir "$INPUT_SITE_DIR"); fi
    exec "$bin" site-files "${args[@]}"
    ;;
  inject)  # the channels' files (IndexNow's key), then each announced post's page rewritten in place
    site=()
    if [ -n "${INPUT_SITE_DIR:-}" ]; then site=("$INPUT_SITE_DIR"); fi
    "$bin" site-files "${args[@]}" ${site[@]+--site-dir "${site[@]}"}
    exec "$bin" inject "${args[@]}" ${site[@]+"${site[@]}"}
    ;;
  announce) ;;
  *) refuse "command: '$command' is none of announce, inject, site-files" ;;
esac

if [ -n "${INPUT_FEED:-}" ]; then args+=(--feed "$INPUT_FEED"); fi
case "$mode" in
  off)
    echo "mkdocs-syndicate: mode off, nothing sent"
    exit 0
    ;;
  plan) exec "$bin" plan "${args[@]}" ;;
  auto)
    case "${GITHUB_EVENT_NAME:-}" in
      pull_request | pull_request_target)  # a pull request's code never gets to send
        echo "mkdocs-syndicate: mode auto on a $GITHUB_EVENT_NAME event: only the plan, nothing sent"
        exec "$bin" plan "${args[@]}"
        ;;
    esac
    ;;
  send) ;;
  *) refuse "mode: '$mode' is none of send, auto, plan, off" ;;
esac

case "${INPUT_GIT_PUSH:-true}" in
  true) args+=(--git-push) ;;
  false) args+=(--no-git-push) ;;
  *) refuse "git-push: '${INPUT_GIT_PUSH}' is neither true nor false" ;;
esac
case "${INPUT_GIT_REMOTE:-}" in
  *@\{*) ;;  # not a URL: the command says what git refuses in a name
  *@*) refuse "git-remote: '$(without_userinfo "$INPUT_GIT_REMOTE")' has credentials in it; give a remote's name (origin): the checkout's credentials push to it" ;;
esac
if [ -n "${INPUT_GIT_REMOTE:-}" ]; then args+=(--git-remote "$INPUT_GIT_REMOTE"); fi
if [ -n "${INPUT_GIT_BRANCH:-}" ]; then args+=(--git-branch "$INPUT_GIT_BRANCH"); fi
exec "$bin" run "${args[@]}"
