"""Synapse (the Matrix reference homeserver) as a test fixture: run from the venv that
tests/realserver/install put in its cache folder, on 127.0.0.1 only, with SQLite, no federation
listener and no key servers (it never reaches the network), users registered with the shared
secret, and a room they are all in.

Rate limits: `rc_message` (which Synapse applies to every event a client sends, redactions
included) is low, 0.5 a second with a burst of 2, so a 429 is quick to meet; every user but
`slow` has the limit lifted with the admin API's per-user override
(`POST /_synapse/admin/v1/users/{userId}/override_ratelimit`, https://element-hq.github.io/synapse/v1.163/admin_api/user_admin_api.html).

Where the software is missing, the tier is skipped saying why, or fails in CI and under `.ci/run`
unless the install skipped it for want of PyPI (tests/realserver_pds.py's rule).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

import httpx
from realserver_pds import cached_install, unavailable

HERE = Path(__file__).parent / "realserver"
SERVER_NAME = "syndicate.test"
USERS = ("admin", "alice", "bob", "slow")  # `slow` keeps rc_message's low limit
STARTED_WITHIN = 120.0  # seconds: a loaded machine runs its database migrations slowly


@dataclass(frozen=True)
class User:
    user_id: str
    token: str
    device_id: str

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


@dataclass
class Synapse:
    url: str
    room_id: str  # a room every user is joined to
    users: dict[str, User]
    log: Path
    timings: dict[str, float] = field(default_factory=dict)  # seconds each start-up step took

    def client(self, path: str) -> str:
        return f"{self.url}/_matrix/client/v3{path}"

    def event(self, event_id: str, user: str = "alice", room_id: str | None = None) -> httpx.Response:
        """GET /rooms/{roomId}/event/{eventId}: the event as the spec's client endpoint serves it."""
        room = quote(room_id or self.room_id, safe="")
        return httpx.get(self.client(f"/rooms/{room}/event/{quote(event_id, safe='')}"), headers=self.users[user].auth)


def install_dir() -> Path:
    """Where tests/realserver/install puts Synapse (the same rule as that script)."""
    return cached_install("SYNDICATE_SYNAPSE_DIR", "synapse", HERE / "synapse-requirements.txt")


def free_port() -> int:
    """A port free on 127.0.0.1 now (the servers the tier starts bind it)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _signing_key() -> str:
    """A signing key in Synapse's file format (`ed25519 <version> <unpadded base64 seed>`)."""
    seed = base64.b64encode(secrets.token_bytes(32)).decode().rstrip("=")
    return f"ed25519 a_test {seed}\n"


def config(folder: Path, port: int, shared_secret: str) -> str:
    """homeserver.yaml: Synapse's documented options (https://element-hq.github.io/synapse/v1.163/usage/configuration/config_documentation.html)."""
    return f"""
server_name: {SERVER_NAME}
public_baseurl: http://127.0.0.1:{port}/
pid_file: {folder}/homeserver.pid
listeners:
  - port: {port}
    bind_addresses: ["127.0.0.1"]
    type: http
    tls: false
    x_forwarded: false
    resources:
      - names: [client]
        compress: false
database:
  name: sqlite3
  args:
    database: {folder}/homeserver.db
log_config: {folder}/log.yaml
media_store_path: {folder}/media
signing_key_path: {folder}/signing.key
registration_shared_secret: {shared_secret}
macaroon_secret_key: {secrets.token_hex(16)}
form_secret: {secrets.token_hex(16)}
report_stats: false
bcrypt_rounds: 4  # registration hashes a password: the default 12 takes seconds on a loaded machine
enable_metrics: false
trusted_key_servers: []
suppress_key_server_warning: true
federation_domain_whitelist: []
url_preview_enabled: false
presence:
  enabled: false
rc_message:
  per_second: 0.5
  burst_count: 2
rc_registration:
  per_second: 1000
  burst_count: 1000
rc_login:
  address: {{per_second: 1000, burst_count: 1000}}
  account: {{per_second: 1000, burst_count: 1000}}
  failed_attempts: {{per_second: 1000, burst_count: 1000}}
rc_joins:
  local: {{per_second: 1000, burst_count: 1000}}
  remote: {{per_second: 1000, burst_count: 1000}}
rc_invites:
  per_room: {{per_second: 1000, burst_count: 1000}}
  per_user: {{per_second: 1000, burst_count: 1000}}
"""


LOG_CONFIG = """
version: 1
formatters:
  plain: {format: "%(asctime)s %(name)s %(levelname)s %(request)s %(message)s"}
filters:
  context: {(): synapse.logging.context.LoggingContextFilter, request: ""}
handlers:
  file:
    class: logging.FileHandler
    filename: LOGFILE
    formatter: plain
    filters: [context]
root: {level: WARNING, handlers: [file]}
disable_existing_loggers: false
"""


def register(url: str, shared_secret: str, name: str, *, admin: bool) -> User:
    """Shared-secret registration (Synapse's admin API, https://element-hq.github.io/synapse/v1.163/admin_api/register_api.html): a nonce,
    then the user with an HMAC-SHA1 of nonce, name, password and admin flag under the secret."""
    endpoint = f"{url}/_synapse/admin/v1/register"
    nonce = httpx.get(endpoint, timeout=30).json()["nonce"]
    password = secrets.token_hex(8)
    mac = hmac.new(shared_secret.encode(), digestmod=hashlib.sha1)
    mac.update(b"\x00".join([nonce.encode(), name.encode(), password.encode(), b"admin" if admin else b"notadmin"]))
    body = {"nonce": nonce, "username": name, "password": password, "admin": admin, "mac": mac.hexdigest()}
    answer = httpx.post(endpoint, json=body, timeout=30)
    answer.raise_for_status()
    made = answer.json()
    return User(made["user_id"], made["access_token"], made["device_id"])


def start_synapse(folder: Path) -> Iterator[Synapse]:
    """Synapse started in `folder` (its config, database, log), the users registered, the room
    made; stopped with SIGTERM at the end."""
    venv = install_dir() / "venv"
    python = venv / "bin" / "python"
    if not (install_dir() / ".installed").exists() or not python.exists():
        unavailable("synapse", f"Synapse is not installed in {install_dir()}")
    timings: dict[str, float] = {}
    began = time.monotonic()
    folder.mkdir(parents=True, exist_ok=True)
    port, shared_secret = free_port(), secrets.token_hex(16)
    (folder / "homeserver.yaml").write_text(config(folder, port, shared_secret))
    (folder / "log.yaml").write_text(LOG_CONFIG.replace("LOGFILE", str(folder / "homeserver.log")))
    (folder / "signing.key").write_text(_signing_key())
    output = (folder / "stdout.log").open("w")
    process = subprocess.Popen(
        [str(python), "-m", "synapse.app.homeserver", "-c", str(folder / "homeserver.yaml")],
        cwd=folder,
        stdin=subprocess.DEVNULL,
        stdout=output,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTED_WITHIN
        while True:
            if process.poll() is not None:
                raise RuntimeError(
                    f"Synapse exited {process.returncode}: {(folder / 'stdout.log').read_text()[-3000:]}"
                )
            try:
                if httpx.get(f"{url}/_matrix/client/versions", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"Synapse did not answer within {STARTED_WITHIN:.0f} s")
            time.sleep(0.2)
        timings["start"] = time.monotonic() - began
        users = {name: register(url, shared_secret, name, admin=name == "admin") for name in USERS}
        for name, user in users.items():
            if name != "slow":  # 0: no limit (Synapse's override_ratelimit)
                lifted = httpx.post(
                    f"{url}/_synapse/admin/v1/users/{quote(user.user_id, safe='')}/override_ratelimit",
                    json={"messages_per_second": 0, "burst_count": 0},
                    headers=users["admin"].auth,
                    timeout=30,
                )
                lifted.raise_for_status()
        timings["users"] = time.monotonic() - began - timings["start"]
        synapse = Synapse(url, make_room(url, users), users, folder / "homeserver.log", timings)
        timings["room"] = time.monotonic() - began - timings["start"] - timings["users"]
        report_timings(timings)
        yield synapse
    finally:
        stop(process)
        output.close()


def stop(process: subprocess.Popen[bytes]) -> None:
    """A server started by the tier: SIGTERM, and SIGKILL when it has not exited within 20 s."""
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def report_timings(timings: dict[str, float]) -> None:
    """Where a start's time went: printed (seen with -s), and summed in the session's summary."""
    from crashlab import STATS

    print("Synapse start: " + ", ".join(f"{step} {seconds:.1f} s" for step, seconds in timings.items()))
    STATS["realserver Synapse starts"] += 1
    for step, seconds in timings.items():
        STATS[f"realserver Synapse start-up seconds, {step} (all starts, rounded)"] += round(seconds)


def make_room(url: str, users: dict[str, User], owner: str = "admin") -> str:
    """A private room the owner makes, every other user invited and joined."""
    client = f"{url}/_matrix/client/v3"
    made = httpx.post(f"{client}/createRoom", json={"preset": "private_chat"}, headers=users[owner].auth, timeout=30)
    made.raise_for_status()
    room = str(made.json()["room_id"])
    path = quote(room, safe="")
    for name, user in users.items():
        if name == owner:
            continue
        invited = httpx.post(
            f"{client}/rooms/{path}/invite", json={"user_id": user.user_id}, headers=users[owner].auth, timeout=30
        )
        invited.raise_for_status()
        httpx.post(f"{client}/rooms/{path}/join", json={}, headers=user.auth, timeout=30).raise_for_status()
    return room
