"""A forge's OAuth endpoints on 127.0.0.1, speaking GitHub's and GitLab's protocols and OpenID
Connect's (under /oidc: discovery, a signed ID token, userinfo, the signing keys): authorise,
exchange the code for a token, and answer the user, e-mail, organisation and group APIs for the
account the test says is signing in. What each request carried is kept, so a test can check what
Recheck asked for."""
from __future__ import annotations

import json
import secrets
import time
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode, urlsplit

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa

@dataclass
class Account:
    id: int
    login: str
    email: str
    organisations: list[str] = field(default_factory=list)


class FakeForge:
    def __init__(self, port: int, *, client_id: str, client_secret: str):
        self.port = port
        self.client_id, self.client_secret = client_id, client_secret
        self.url = f"http://127.0.0.1:{port}"
        self.account: Account | None = None
        self.codes: dict[str, Account] = {}
        self.tokens: dict[str, Account] = {}
        self.requests: list[tuple[str, str, dict]] = []
        self.signing_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        forge = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                forge._handle(self, "GET")

            def do_POST(self):
                forge._handle(self, "POST")

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()

    # --- The endpoints --------------------------------------------------------------------------

    def _handle(self, handler, method: str):
        url = urlsplit(handler.path)
        query = {key: values[0] for key, values in parse_qs(url.query).items()}
        length = int(handler.headers.get("Content-Length") or 0)
        body = {key: values[0] for key, values in parse_qs(handler.rfile.read(length).decode()).items()}
        self.requests.append((method, url.path, {**query, **body}))
        routes = {
            ("GET", "/login/oauth/authorize"): self._authorize,
            ("GET", "/oauth/authorize"): self._authorize,
            ("POST", "/login/oauth/access_token"): self._token,
            ("POST", "/oauth/token"): self._token,
            ("GET", "/api/v3/user"): lambda *a: self._user(handler, query, "github"),
            ("GET", "/api/v3/user/emails"): lambda *a: self._emails(handler, query),
            ("GET", "/api/v3/user/orgs"): lambda *a: self._orgs(handler, query),
            ("GET", "/api/v4/user"): lambda *a: self._user(handler, query, "gitlab"),
            ("GET", "/api/v4/groups"): lambda *a: self._groups(handler, query),
            ("GET", "/oidc/.well-known/openid-configuration"): self._discovery,
            ("GET", "/oidc/authorize"): self._authorize,
            ("POST", "/oidc/token"): self._token,
            ("GET", "/oidc/userinfo"): lambda *a: self._userinfo(handler, query),
            ("GET", "/oidc/jwks"): self._jwks,
        }
        route = routes.get((method, url.path))
        if route is None:
            return self._send(handler, 404, {"message": "Not Found"})
        return route(handler, query, body)

    def _authorize(self, handler, query, body):
        # The person agrees at once: back to Recheck's callback with a one-time code.
        if query.get("client_id") != self.client_id or self.account is None:
            return self._send(handler, 400, {"error": "invalid_client"})
        code = secrets.token_hex(8)
        self.codes[code] = self.account
        location = f"{query['redirect_uri']}?{urlencode({'code': code, 'state': query.get('state', '')})}"
        handler.send_response(302)
        handler.send_header("Location", location)
        handler.end_headers()

    def _token(self, handler, query, body):
        account = self.codes.pop(body.get("code", ""), None)
        if body.get("client_secret") != self.client_secret or account is None:
            return self._send(handler, 400, {"error": "bad_verification_code"})
        token = secrets.token_hex(12)
        self.tokens[token] = account
        answer = {"access_token": token, "token_type": "bearer", "scope": "read:user"}
        if handler.path.startswith("/oidc/"):
            now = int(time.time())
            claims = {"iss": f"{self.url}/oidc", "aud": self.client_id, "sub": str(account.id), "iat": now,
                      "exp": now + 300, "email": account.email, "preferred_username": account.login}
            answer["id_token"] = jwt.encode(claims, self.signing_key, algorithm="RS256", headers={"kid": "fake-1"})
        return self._send(handler, 200, answer)

    def _discovery(self, handler, query, body):
        base = f"{self.url}/oidc"
        return self._send(handler, 200, {
            "issuer": base, "authorization_endpoint": f"{base}/authorize", "token_endpoint": f"{base}/token",
            "userinfo_endpoint": f"{base}/userinfo", "jwks_uri": f"{base}/jwks",
            "token_endpoint_auth_methods_supported": ["client_secret_post", "client_secret_basic"],
        })

    def _jwks(self, handler, query, body):
        key = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.signing_key.public_key()))
        return self._send(handler, 200, {"keys": [{**key, "kid": "fake-1", "use": "sig", "alg": "RS256"}]})

    def _userinfo(self, handler, query):
        account = self._account(handler, query)
        if account is None:
            return self._send(handler, 401, {"error": "invalid_token"})
        return self._send(handler, 200, {"sub": str(account.id), "email": account.email, "email_verified": True,
                                         "preferred_username": account.login, "groups": account.organisations})

    def _account(self, handler, query) -> Account | None:
        header = handler.headers.get("Authorization", "")
        token = header.split(" ", 1)[1] if " " in header else query.get("access_token", "")
        return self.tokens.get(token)

    def _user(self, handler, query, kind: str):
        account = self._account(handler, query)
        if account is None:
            return self._send(handler, 401, {"message": "Bad credentials"})
        key = "login" if kind == "github" else "username"
        return self._send(handler, 200, {"id": account.id, key: account.login, "name": account.login.title(),
                                         "email": account.email})

    def _emails(self, handler, query):
        account = self._account(handler, query)
        if account is None:
            return self._send(handler, 401, {"message": "Bad credentials"})
        return self._send(handler, 200, [{"email": account.email, "primary": True, "verified": True}])

    def _orgs(self, handler, query):
        account = self._account(handler, query)
        if account is None:
            return self._send(handler, 401, {"message": "Bad credentials"})
        return self._send(handler, 200, [{"login": name} for name in account.organisations])

    def _groups(self, handler, query):
        account = self._account(handler, query)
        if account is None:
            return self._send(handler, 401, {"message": "401 Unauthorized"})
        return self._send(handler, 200, [{"full_path": name} for name in account.organisations])

    @staticmethod
    def _send(handler, status: int, payload):
        data = json.dumps(payload).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)
