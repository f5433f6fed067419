#!/bin/sh
# A verb and its particle in a question ("times out", "set up") name what the
# code writes as one word (timeout, setup): the question looks for that word
# too when the index holds it, so the code about timeouts is cited first, not
# the code that says "time" and "request" most. Checked on a repository the
# test writes, offline policy. A word the code writes joined ("set" of "set
# up") is not one the answer says no file holds. A hyphenated compound
# ("k-means", "in-place") names what the code writes as one word too
# (kmeans_plusplus, inplace).
: "${top_srcdir:=.}" "${DRQA:=./drqa-tui}" "${PYTHON3:=python3}"
. "$top_srcdir/tests/lib.sh"

R="$T/repo"
mkdir -p "$R/net" "$R/util" "$R/cluster" "$R/stats"
cat >"$R/cluster/init.py" <<'EOF'
def kmeans_plusplus(points, n_clusters, rng):
    """Pick the first centers, each far from the ones picked before."""
    centers = [points[rng.randrange(len(points))]]
    while len(centers) < n_clusters:
        centers.append(max(points, key=lambda p: min(abs(p - c) for c in centers)))
    return centers
EOF
cat >"$R/stats/seeding.py" <<'EOF'
def seeding_means(groups, seeding):
    """The means of the seeding groups: the seeding means of each group."""
    return [sum(g) / len(g) for g in groups if g in seeding]


def group_means(groups):
    """The means of the groups, and the means of the means."""
    means = [sum(g) / len(g) for g in groups]
    return means, sum(means) / len(means)
EOF
cat >"$R/net/timeouts.py" <<'EOF'
class Timeout(Exception):
    """Raised when a request gets no reply before the deadline."""


def read_reply(sock, timeout=10.0):
    """Read the reply to a request; give up after timeout seconds."""
    sock.settimeout(timeout)
    try:
        return sock.recv(4096)
    except OSError:
        raise Timeout("no reply within %s seconds" % timeout)
EOF
cat >"$R/net/conn.py" <<'EOF'
def setup(host, port):
    """Open the socket to the host and send the greeting."""
    sock = open_socket(host, port)
    sock.send(b"HELLO")
    return sock


def open_socket(host, port):
    import socket
    return socket.create_connection((host, port))
EOF
cat >"$R/util/clock.py" <<'EOF'
def stamp(request):
    """The time a request was made, from the request's own clock."""
    return request.time


def log_lines(request, times):
    """Format the times of a request for the log: each time on a line."""
    return "\n".join("%s: request time %s" % (request, time) for time in times)


def connection_log(connection):
    """Log the connection: the connection's host and the connection's port."""
    return "connection %s:%s" % (connection.host, connection.port)
EOF

# first_cited QUESTION PATH WHAT: PATH is the first citation of the answer
first_cited() {
    "$DRQA" --index "$T/index.sqlite" --no-progress --quiet --policy offline --json --ask "$1" "$R" \
        >"$T/out" 2>"$T/err"
    "$PYTHON3" - "$T/out" >"$T/f" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
c = d["citations"]
print(c[0]["path"] if c else "(none)")
print(d["answer"].split("\n", 1)[0])
EOF
    sed 's/^/# /' "$T/f"
    [ "$(head -1 "$T/f")" = "$2" ]
    ok $? "$3"
}
first_cited "What happens when a request times out?" net/timeouts.py \
    "times out: the timeout code is cited first, not the code about request times"
first_cited "Where is the connection set up?" net/conn.py \
    "set up: the setup code is cited first, not the code that says connection most"
# no file says "set", but the code says setup: the answer does not call the word missing
! grep -q 'says `set`' "$T/f"
ok $? "set up: the answer does not say that no file says 'set'"

first_cited "How does k-means seeding choose the centers?" cluster/init.py \
    "k-means: the kmeans code is cited first, not the code that says means and seeding most"

echo "1..$n"
exit $fail
