"""Flask-WebSub's hub (flask_websub.hub), served on 127.0.0.1 for the realserver tier:
`python websub_hub.py PORT DATABASE`. The hub as its README sets one up, with its publish
endpoint on (PUBLISH_SUPPORTED: a form POST of hub.mode=publish and hub.topic) and Celery running
its tasks in the request (task_always_eager: no broker to start), so a publish has fetched the
topic and notified its subscribers by the time it answers 202."""

from __future__ import annotations

import sys

from celery import Celery
from flask import Flask
from flask_websub.hub import Hub, SQLite3HubStorage


def main() -> None:
    port, database = int(sys.argv[1]), sys.argv[2]
    app = Flask("websub-hub")
    app.config["PUBLISH_SUPPORTED"] = True
    celery = Celery("websub-hub")
    celery.conf.task_always_eager = True
    hub = Hub(SQLite3HubStorage(database), celery, PUBLISH_SUPPORTED=True, REQUEST_TIMEOUT=5, MAX_ATTEMPTS=1)
    app.register_blueprint(hub.build_blueprint(url_prefix="/hub"))
    app.run(host="127.0.0.1", port=port, threaded=True)


if __name__ == "__main__":
    main()
