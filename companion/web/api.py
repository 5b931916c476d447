"""The JSON API, the server-sent-event stream and the MJPEG stream."""

from __future__ import annotations

import hmac
import json
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

from flask import Flask, Response, jsonify, request, stream_with_context
from werkzeug.exceptions import HTTPException

from companion.datafiles import parse_json
from companion.errors import BadInput
from companion.session.campaigns import choose_familiar, standings
from companion.session.core import GameSession, schema_error
from companion.session.hub import _CARD_ID, EngineUnavailable, Hub, NoSuchGame, wait_any
from companion.store import EXPORT_FORMAT, Damaged, Store, StoreUnavailable
from companion.web import schemas

STATE_CHANGING = ("POST", "PUT", "PATCH", "DELETE")
VIEWS = ("live", "cat", "machine", "history")


class ApiError(Exception):
    def __init__(self, status: int, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.extra = extra


def _rt() -> Any:
    from flask import current_app
    return current_app.extensions["doom"]


def body(schema: dict[str, Any], check: Callable[[Any], None] | None = None) -> dict[str, Any]:
    """The request's JSON body, checked against ``schema`` (400 with the reason otherwise);
    ``check`` sees it first, to refuse a body in the request's own words."""
    if not request.is_json:
        raise ApiError(415, "send the body as JSON (Content-Type: application/json)")
    raw = request.get_data(cache=True)
    try:
        doc = parse_json(raw or b"{}", "the body")
    except (BadInput, UnicodeDecodeError) as exc:
        raise ApiError(400, f"{exc}") from None
    if check is not None:
        check(doc)
    problem = schema_error(doc, schema, "body")
    if problem:
        raise ApiError(400, problem)
    return doc


def game_list(hub: Hub) -> list[dict[str, Any]]:
    current = {k: hub.store.get_meta(f"current.{k}") for k in ("cat", "machine")}
    out = []
    for g in hub.store.games():
        if g.setup.get("demo") and current.get(g.kind) != str(g.id):
            continue   # the demo's past loops
        try:
            events = len(hub.store.log(g.id).active)
        except Damaged as exc:   # listed, marked, the others unharmed
            g, events = replace(g, damaged=g.damaged or str(exc)), 0
        out.append({**g.to_json(), "events": events,
                    "current": current.get(g.kind) == str(g.id)})
    return out


def campaign_list(store: Store) -> list[dict[str, Any]]:
    """Every campaign with its standings; a damaged one says why in its standings' error."""
    out = []
    for c in store.campaigns():
        try:
            table = standings(store, c.id)
        except Damaged as exc:
            table = {"error": str(exc)}
        out.append({**c.to_json(), "standings": table})
    return out


def game_view(hub: Hub, kind: str) -> dict[str, Any]:
    """The page of a game kind: its engine, its current game (or why it cannot be opened in
    ``problem``), what the camera watches."""
    status = hub.engine_status()[kind]
    session, problem = hub.opened(kind) if status["available"] else (None, "")
    out = {"engine": status, "current": None if session is None else session.view(),
           "problem": problem, "camera_feeds": hub.active_kind() == kind}
    if kind == "cat":
        player, card = hub.camera_choice()
        out["camera_card"] = {"player": player, "card": card}
    else:   # the page asks for a roll area while the camera feeds a machine game without one
        out["roll_area"] = hub.roll_area()
    return out


def live_summary(rt: Any) -> dict[str, Any]:
    status = rt.live.status()
    return {**status, "server_time": time.time()}


def view_payload(rt: Any, view: str, cache: dict[str, Any]) -> dict[str, Any]:
    """What a page's stream carries: the game view (cached per games version) and live data."""
    hub: Hub = rt.hub
    version = hub.games_bus.version
    if cache.get("version") != version:
        if view in ("cat", "machine"):
            cache["game"] = game_view(hub, view)
        elif view == "history":
            cache["game"] = {"games": game_list(hub), "campaigns": campaign_list(hub.store)}
        else:
            views = {k: game_view(hub, k) for k in ("cat", "machine")}
            cache["game"] = {**{k: {**v["engine"], "problem": v["problem"]}
                                for k, v in views.items()},
                             "feeds": hub.active_kind(), "roll_area": hub.roll_area()}
        cache["version"] = version
    return {"view": view, "games_version": version, **cache["game"], "live": live_summary(rt),
            "error": ""}


def register(app: Flask) -> None:
    @app.before_request
    def _guard() -> Any:
        if request.method not in STATE_CHANGING:
            return None
        token = _rt().config.token
        if token:
            given = request.headers.get("X-Doom-Token", "")
            if not hmac.compare_digest(given.encode(), token.encode()):
                return _error(403, "this server needs the access token printed at its start "
                                   "(open the page with ?token=... once)")
        return None

    @app.errorhandler(ApiError)
    def _api_error(exc: ApiError) -> Any:
        return _error(exc.status, exc.message, **exc.extra)

    # each error's status (Flask takes the most specific class: Damaged before BadInput)
    for kind, status in ((BadInput, 400), (Damaged, 422), (StoreUnavailable, 503),
                         (NoSuchGame, 404), (EngineUnavailable, 503)):
        app.register_error_handler(kind, lambda exc, status=status: _error(status, str(exc)))

    @app.errorhandler(HTTPException)
    def _http(exc: HTTPException) -> Any:
        if request.path.startswith("/api") or request.path.endswith(".mjpg"):
            message = {413: f"request body too large (limit "
                            f"{app.config['MAX_CONTENT_LENGTH']} bytes)"}.get(
                exc.code or 500, exc.description or exc.name)
            return _error(exc.code or 500, message)
        return exc

    def hub() -> Hub:
        return _rt().hub

    def session_of(game_id: int) -> GameSession:
        return hub().session(game_id)

    def game_response(session: GameSession, status: int = 200, **extra: Any) -> Any:
        return jsonify({**session.view(), **extra}), status

    # -- status and streams --------------------------------------------------------------
    @app.get("/api/status")
    def status() -> Any:
        rt = _rt()
        return jsonify({"engines": rt.hub.engine_status(), "live": live_summary(rt),
                        "token_required": bool(rt.config.token)})

    @app.get("/api/stream")
    def stream() -> Any:
        view = request.args.get("view", "live")
        if view not in VIEWS:
            raise ApiError(400, f"view must be one of {', '.join(VIEWS)}, got {view!r}")
        rt = _rt()

        def events() -> Iterator[str]:
            cache: dict[str, Any] = {}
            games_seen, live_seen = -1, -1
            keepalive = rt.config.sse_keepalive_s
            yield "retry: 1000\n\n"
            while not rt.hub.games_bus.closed:
                changed = (rt.hub.games_bus.version != games_seen
                           or (rt.hub.live_bus.version != live_seen))
                if changed:
                    games_changed = rt.hub.games_bus.version != games_seen
                    games_seen = rt.hub.games_bus.version
                    live_seen = rt.hub.live_bus.version
                    try:
                        payload = view_payload(rt, view, cache)
                    except BadInput as exc:   # a damaged or locked database: say so, go on
                        cache.clear()
                        payload = {"view": view, "error": str(exc)}
                    else:
                        if not games_changed:
                            # a new camera frame only: the page keeps the game it has
                            payload = {"view": view, "games_version": payload["games_version"],
                                       "live": payload["live"]}
                    yield f"data: {json.dumps(payload, separators=(',', ':'))}\n\n"
                    continue
                got = wait_any([rt.hub.games_bus, rt.hub.live_bus], [games_seen, live_seen],
                               keepalive)
                if not got:
                    yield ": keepalive\n\n"

        return Response(stream_with_context(events()), mimetype="text/event-stream",
                        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    @app.get("/video.mjpg")
    def video() -> Any:
        rt = _rt()

        def frames() -> Iterator[bytes]:
            seq = -1
            while not rt.hub.live_bus.closed:
                frame = rt.live.wait_frame(seq, rt.config.sse_keepalive_s)
                if frame.seq != seq or seq == -1:
                    seq = frame.seq
                    yield part(frame.jpeg)
                if rt.live.source is None or rt.live.finished:
                    # a still frame (no camera, or the notice of a source that has ended): send
                    # it once more (a browser shows a multipart part when the next one starts)
                    # and end, not to hold a server thread nor leave the page loading
                    yield part(frame.jpeg) + b"--frame--\r\n"
                    return

        def part(jpeg: bytes) -> bytes:
            return (b"--frame\r\nContent-Type: image/jpeg\r\nContent-Length: "
                    + str(len(jpeg)).encode() + b"\r\n\r\n" + jpeg + b"\r\n")

        return Response(stream_with_context(frames()),
                        mimetype="multipart/x-mixed-replace; boundary=frame",
                        headers={"Cache-Control": "no-cache"})

    @app.get("/api/live/frame.jpg")
    def still() -> Any:
        return Response(_rt().live.frame().jpeg, mimetype="image/jpeg",
                        headers={"Cache-Control": "no-store"})

    # -- games ---------------------------------------------------------------------------
    @app.get("/api/games")
    def games() -> Any:
        return jsonify({"games": game_list(hub())})

    @app.post("/api/games")
    def create_game() -> Any:
        doc = body(schemas.CREATE_GAME)
        session = hub().create_game(doc["kind"], doc.get("title", ""), doc["setup"],
                                    campaign_id=doc.get("campaign_id"))
        return game_response(session, 201)

    @app.get("/api/games/current/<kind>")
    def current_game(kind: str) -> Any:
        if kind not in ("cat", "machine"):
            raise ApiError(404, f"no game kind {kind!r}")
        return jsonify(game_view(hub(), kind))

    @app.get("/api/games/<int:game_id>")
    def get_game(game_id: int) -> Any:
        return game_response(session_of(game_id))

    @app.post("/api/games/<int:game_id>/current")
    def make_current(game_id: int) -> Any:
        body(schemas.EMPTY)
        return game_response(hub().make_current(game_id))

    @app.post("/api/games/<int:game_id>/events")
    def submit(game_id: int) -> Any:
        doc = body(schemas.SUBMIT_EVENT)
        session = session_of(game_id)
        outcome = session.submit(doc["event"])
        return game_response(session, 200 if outcome.ok else 409, outcome=outcome.to_json())

    @app.post("/api/games/<int:game_id>/events/<int:event_id>")
    def amend(game_id: int, event_id: int) -> Any:
        doc = body(schemas.SUBMIT_EVENT)
        session = session_of(game_id)
        outcome = session.amend(event_id, doc["event"])
        return game_response(session, 200 if outcome.ok else 409, outcome=outcome.to_json())

    def _undo_redo(game_id: int, fn: Callable[[GameSession], str], what: str) -> Any:
        body(schemas.EMPTY)
        session = session_of(game_id)
        done = fn(session)
        if not done:
            raise ApiError(409, f"nothing to {what}")
        return game_response(session, done=done)

    @app.post("/api/games/<int:game_id>/undo")
    def undo(game_id: int) -> Any:
        return _undo_redo(game_id, GameSession.undo, "undo")

    @app.post("/api/games/<int:game_id>/redo")
    def redo(game_id: int) -> Any:
        return _undo_redo(game_id, GameSession.redo, "redo")

    @app.get("/api/games/<int:game_id>/export")
    def export(game_id: int) -> Any:
        try:
            doc = hub().store.export_game(game_id)
        except KeyError:
            raise NoSuchGame(f"no game {game_id}") from None
        return Response(json.dumps(doc, indent=1), mimetype="application/json",
                        headers={"Content-Disposition":
                                 f'attachment; filename="doom-game-{game_id}.json"'})

    @app.post("/api/games/import")
    def import_game() -> Any:
        doc = body(schemas.IMPORT_GAME, check=_an_export)
        if doc["game"]["kind"] not in hub().engines:
            raise ApiError(400, f"unknown game kind {doc['game']['kind']!r}")
        gid = hub().import_game(doc)
        return jsonify({"id": gid}), 201

    @app.get("/api/games/<int:game_id>/share.png")
    def share(game_id: int) -> Any:
        session = session_of(game_id)
        maker = getattr(session.engine, "share_png", None)
        if maker is None:
            raise ApiError(404, f"{session.engine.title} games have no share image")
        rectified = getattr(_rt().live.process, "rectified", {})
        photos = {}
        for key, image in list(rectified.items()):
            found = _CARD_ID.match(key)
            if found and int(found.group(1)) == game_id:
                photos[(int(found.group(2)), int(found.group(3)))] = image
        png = maker(session.state, session.record, photos=photos)
        return Response(png, mimetype="image/png", headers={
            "Content-Disposition": f'inline; filename="doom-sigils-{game_id}.png"'})

    @app.get("/api/catalogue/<kind>")
    def catalogue(kind: str) -> Any:
        """The cards of a game (goals, familiars...); ``{}`` while its engine is missing."""
        if kind not in hub().engines:
            raise ApiError(404, f"no game kind {kind!r}")
        try:
            engine = hub().engine(kind)
        except EngineUnavailable:
            return jsonify({})
        maker = getattr(engine, "catalogue", None)
        return jsonify(maker() if maker is not None else {})

    @app.post("/api/cat/camera")
    def camera_card() -> Any:
        doc = body(schemas.CAMERA_CARD)
        hub().set_camera_choice(doc["player"], doc["card"])
        return jsonify({"player": doc["player"], "card": doc["card"]})

    @app.post("/api/live/feeds")
    def camera_feeds() -> Any:
        doc = body(schemas.CAMERA_FEEDS)
        hub().set_active_kind(doc["kind"])
        return jsonify({"kind": doc["kind"]})

    @app.post("/api/live/roll-area")
    def roll_area() -> Any:
        """Where the dice are rolled: ``[x0, y0, x1, y1]`` fractions of the image, or null."""
        doc = body(schemas.ROLL_AREA)
        hub().set_roll_area(doc["area"])
        return jsonify({"area": hub().roll_area()})

    # -- campaigns -----------------------------------------------------------------------
    @app.get("/api/campaigns")
    def campaigns() -> Any:
        return jsonify({"campaigns": campaign_list(hub().store)})

    @app.post("/api/campaigns")
    def create_campaign() -> Any:
        doc = body(schemas.CREATE_CAMPAIGN)
        cid = hub().store.create_campaign(doc["title"], {
            "goals": doc["goals"], "players": doc.get("players", []),
            "familiars": bool(doc.get("familiars", False))})
        hub().games_bus.publish()
        return jsonify(hub().store.campaign(cid).to_json()), 201

    @app.get("/api/campaigns/<int:campaign_id>")
    def campaign(campaign_id: int) -> Any:
        try:
            record = hub().store.campaign(campaign_id)
        except KeyError:
            raise ApiError(404, f"no campaign {campaign_id}") from None
        games_ = [g.to_json() for g in hub().store.games(campaign_id=campaign_id)]
        return jsonify({**record.to_json(), "games": games_,
                        "standings": standings(hub().store, campaign_id)})

    @app.post("/api/campaigns/<int:campaign_id>/familiar")
    def campaign_familiar(campaign_id: int) -> Any:
        """Between games of a campaign with familiars: a player keeps or changes familiar."""
        doc = body(schemas.FAMILIAR_CHOICE)
        store = hub().store
        try:
            store.campaign(campaign_id)
        except KeyError:
            raise ApiError(404, f"no campaign {campaign_id}") from None
        from companion.doomcat.game import IllegalMove
        try:
            choose_familiar(store, campaign_id, doc["player"], doc["familiar"])
        except IllegalMove as exc:
            raise ApiError(409, str(exc), standings=standings(store, campaign_id)) from None
        hub().games_bus.publish()
        return jsonify({"standings": standings(store, campaign_id)})

    methods = ("GET", "POST", "PUT", "PATCH", "DELETE")

    @app.route("/api/<path:rest>", methods=methods)
    def unknown(rest: str) -> Any:
        # an endpoint asked with another method, or no endpoint: say which, not Flask's
        # "The requested URL was not found on the server..."
        adapter = app.url_map.bind_to_environ(request.environ)
        allowed = []
        for method in methods:
            try:
                rule, _ = adapter.match(request.path, method=method, return_rule=True)
            except HTTPException:
                continue
            if rule.endpoint != "unknown":
                allowed.append(method)
        if allowed:
            res, status = _error(405, f"{request.method} is not allowed on {request.path}: "
                                      f"use {' or '.join(allowed)}")
            res.headers["Allow"] = ", ".join(allowed)
            return res, status
        ids = re.findall(r"/(?:games|campaigns|events)/([^/]+)", request.path)
        hint = (" (a game's, an event's or a campaign's id is a whole number)"
                if any(not x.isdigit() and x not in ("current", "import") for x in ids) else "")
        raise ApiError(404, f"no API endpoint {request.method} {request.path}{hint}")


def _an_export(doc: Any) -> None:
    """Refuse, before its schema's details, a file that is not a game export at all."""
    if not isinstance(doc, dict) or doc.get("format") != EXPORT_FORMAT:
        raise ApiError(400, "this is not a Doom Companion game export (a file saved with a "
                            f"game's Export button says \"format\": \"{EXPORT_FORMAT}\")")


def _error(status: int, message: str, **extra: Any) -> Any:
    return jsonify({"error": message, **extra}), status
