#!/bin/sh
# A question whose subject is a bare name ("What does area do?", "Where is
# area defined?") asks about the module-level definition of that name, when
# the repository defines one: it is cited first, ahead of the methods of the
# same name (Shape.area, Room.area, Hall.area) and of the tests that call it, and
# FindFunction shows its code whatever its rank among them. The same
# word in a question that describes ("What does the area helper do?") stays
# a word, and so does the repository's own name ("How does Canvas draw a
# frame?" on the canvas package). Checked on repositories the test writes,
# offline policy.
: "${top_srcdir:=.}" "${DRQA:=./drqa-tui}" "${PYTHON3:=python3}"
. "$top_srcdir/tests/lib.sh"

R="$T/repo"
mkdir -p "$R/pkg/tests"
: >"$R/pkg/__init__.py"
cat >"$R/pkg/a_shapes.py" <<'EOF'
class Shape:
    """A shape drawn on the canvas."""

    def area(self):
        """The area of the shape: none for a bare shape."""
        return 0


class Room(Shape):
    """A room of a floor plan."""

    def area(self):
        """The area of the room, from its width and depth."""
        return self.width * self.depth


class Hall(Room):
    """A hall: a room with columns."""

    def area(self):
        """The area of the hall less its columns."""
        return super().area() - self.columns
EOF
cat >"$R/pkg/measure.py" <<'EOF'
def area(shape, unit="m"):
    """Measure the area of a shape in square units.

    Sums the areas of its parts when it has any, else asks the shape.
    """
    parts = getattr(shape, "parts", None)
    if parts:
        return sum(area(p, unit) for p in parts)
    return shape.area()


def perimeter(shape):
    """Measure the perimeter of a shape."""
    return shape.perimeter()
EOF
cat >"$R/pkg/tests/test_area.py" <<'EOF'
from pkg.measure import area


def test_area_of_a_room():
    """The area of a room is its width times its depth."""
    class R:
        width, depth = 2, 3

        def area(self):
            return self.width * self.depth
    assert area(R()) == 6
EOF

# ask QUESTION: its --json answer in $T/out
ask() { "$DRQA" --index "$T/index.sqlite" --no-progress --quiet --policy offline --json --ask "$1" "$R" \
        >"$T/out" 2>"$T/err"; }
# first: the first citation's path and the answer's first line
first() {
    "$PYTHON3" - "$T/out" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
c = d["citations"]
print(c[0]["path"] if c else "(none)")
print(d["answer"].split("\n", 1)[0])
EOF
}

ask "What does area do?"
first >"$T/f1"
sed 's/^/# /' "$T/f1"
[ "$(head -1 "$T/f1")" = "pkg/measure.py" ]
ok $? "What does area do?: the module's area() is cited first"

ask "Where is area defined?"
first >"$T/f2"
sed 's/^/# /' "$T/f2"
[ "$(head -1 "$T/f2")" = "pkg/measure.py" ] && grep -q 'is defined in `pkg/measure.py`' "$T/f2"
ok $? "Where is area defined?: it is, and the first line says where"

"$DRQA" --index "$T/index.sqlite" --action FindFunction '{"function_name":"area"}' "$R" >"$T/find" 2>>"$T/err"
"$PYTHON3" - "$T/find" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
print("# listed: " + ", ".join(i["qualname"] + " " + i["path"] for i in r["items"]))
print("# code: " + ", ".join("%s:%d" % (e["path"], e["start_line"]) for e in r["evidence"]))
assert len(r["items"]) == 5, r["items"]
assert [e["path"] for e in r["evidence"]].count("pkg/measure.py") == 1, r["evidence"]
EOF
ok $? "FindFunction area: the module-level function's code is shown, though it is listed after the methods"

# The repository's own name opening a question names the project, not the
# class of that name: "How does Canvas draw a frame?" on the canvas package
# cites the code that draws frames first, not the class Canvas, whether the
# name is the top-level package's (a clone in canvas-main, or one with a src/
# folder) or the directory indexed; the same name called a class is the class.
C="$T/canvas-main"
mkdir -p "$C/canvas"
: >"$C/canvas/__init__.py"
cat >"$C/canvas/app.py" <<'EOF'
class Canvas:
    """The application object: holds the layers and the settings."""

    def __init__(self, width, height):
        self.width = width
        self.height = height
        self.layers = []

    def add_layer(self, layer):
        self.layers.append(layer)
EOF
cat >"$C/canvas/frames.py" <<'EOF'
def draw_frame(canvas, frame):
    """Draw a frame: paint every layer of the canvas into the frame."""
    for layer in canvas.layers:
        layer.paint(frame)
    return frame
EOF
# first_cited QUESTION DIR PATH WHAT: asks QUESTION about DIR (an index of
# its own) and checks that PATH is cited first
first_cited() {
    "$DRQA" --index "$T/$(basename "$2").sqlite" --no-progress --quiet --policy offline --json --ask "$1" "$2" \
        >"$T/out" 2>"$T/err"
    first >"$T/f"
    sed 's/^/# /' "$T/f"
    [ "$(head -1 "$T/f")" = "$3" ]
    ok $? "$4"
}
first_cited "How does Canvas draw a frame?" "$C" canvas/frames.py \
    "How does Canvas draw a frame?: the top-level package's name is no subject; the code that draws frames comes first"
first_cited "How does Canvas draw a frame?" "$C/canvas" frames.py "the same, the directory indexed named so"
# the src/ layout: src/canvas/__init__.py
S="$T/canvas-src"
mkdir -p "$S/src"
cp -r "$C/canvas" "$S/src/canvas"
first_cited "How does Canvas draw a frame?" "$S" src/canvas/frames.py "the same, the package under src/"
first_cited "What does the Canvas class hold?" "$C" canvas/app.py \
    "What does the Canvas class hold?: the project's name called a class is the class"

# An indexed directory that is a package itself (an installed tree, as
# dist-packages/sympy) is the project: its subpackages are its parts, so a
# subject named like one ("What does simplify do?", simplify/ a subpackage)
# is the function of that name, not the project's name.
P="$T/algebra"
mkdir -p "$P/simplify" "$P/rewrite"
: >"$P/__init__.py"
: >"$P/simplify/__init__.py"
: >"$P/rewrite/__init__.py"
cat >"$P/simplify/core.py" <<'EOF'
def simplify(expr, ratio=1.7):
    """Simplifies the given expression: tries each rewrite and keeps the shortest."""
    best = expr
    for rule in expr.rules():
        candidate = rule(expr)
        if len(candidate) < ratio * len(best):
            best = candidate
    return best
EOF
cat >"$P/rewrite/steps.py" <<'EOF'
def rewrite_all(rv):
    """Rewrite every argument of rv."""

    def do(rv, first=True):
        """Do one rewrite step on rv and on its arguments."""
        return rv.func(*[do(a, first=False) for a in rv.args])

    return do(rv)
EOF
first_cited "What does simplify do?" "$P" simplify/core.py \
    "What does simplify do?: in an indexed package, a subpackage's name is no project name; the function is cited first"

echo "1..$n"
exit $fail
