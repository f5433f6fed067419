"""hostile_server.py PORTFILE: a loopback server playing three hostile
servers for the key-leak tests (tests/test_key_leak.sh, tests/probes/leak_*),
chosen by the first component of the path a POST goes to:
  /html401  a 401 HTML page echoing the Authorization header, the key from
            near byte 180, and a copy cut short earlier in the page;
  /garbage  a 200 that is not JSON, the key from byte 22;
  /gateway  a 200 {"error": ...} whose message puts the key at byte 500 of
            the client's 512-byte error message.
It listens on a free port, which it writes to PORTFILE (whole, by a rename)."""
import os, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a):
        pass
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        auth = self.headers.get("Authorization", "")
        key = auth.replace("Bearer ", "")
        mode = self.path.split("/")[1]
        ctype, status = "text/html", 200
        if mode == "html401":
            status = 401
            head = "<html><head><title>401 Authorization Required</title></head><body><h1>401</h1>" \
                   "<p>key " + key[:15] + "... was refused</p><pre>"
            head += " " * (180 - len(head) - len("Authorization: Bearer "))
            body = head + auth + "</pre></body></html>\n"
        elif mode == "garbage":
            body = "Authorization: Bearer " + key + " upstream proxy garbage, not JSON at all"
        else:
            ctype = "application/json"
            shown = "the server at http://127.0.0.1:%d%s answered with an error: upstream refused " % (
                self.server.server_address[1], self.path)
            msg = "upstream refused " + "x" * (500 - len(shown) - 17) + " with credential " + key
            body = '{"error": {"message": "%s"}}' % msg
        b = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)

s = ThreadingHTTPServer(("127.0.0.1", 0), H)
open(sys.argv[1] + ".tmp", "w").write(str(s.server_address[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
s.serve_forever()
