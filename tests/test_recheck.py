#!/usr/bin/env python3
"""test_recheck: answers saved by --batch, --ask --json and a transcript are
rechecked with --recheck after the repository was edited: in one cited file
lines were inserted above the citations (moved, with the new lines), in
another a cited line was changed (changed), a third cited file was deleted
(gone), the rest untouched (unchanged). The hashes are FNV-1a 64 of the
cited lines' text, checked here independently. The offline answer text is
the same as before citations carried hashes (--ask prints no hash). TAP.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from taplib import DRQA, TOP, done, ok, private_env  # noqa: E402


def fnv1a64(data):
    h = 1469598103934665603
    for b in data:
        h ^= b
        h = (h * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return "fnv1a64:%016x" % h


def run(args, env):
    p = subprocess.run([DRQA] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=300)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def lines_of(path, a, b):
    with open(path, "rb") as f:
        text = f.read().split(b"\n")
    return b"\n".join(text[a - 1:b])


def main():
    tmp = tempfile.mkdtemp(prefix="drqa-test-recheck-")
    try:
        repo = os.path.join(tmp, "repo")
        shutil.copytree(os.path.join(TOP, "tests", "fixtures", "pyrepo"), repo)
        env = private_env(tmp)
        env["GIT_CONFIG_NOSYSTEM"] = "1"
        have_git = shutil.which("git") is not None
        if have_git:
            for cmd in (["init", "-q"], ["add", "-A"],
                        ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "fixture"]):
                subprocess.run(["git", "-C", repo] + cmd, check=True, env=env, stdout=subprocess.DEVNULL)
        common = ["--index", os.path.join(tmp, "index.sqlite"), "--no-progress", "--quiet"]

        # ---- answers saved before the edits
        q1, q2 = "How are sessions saved?", "How does the router match a URL to a view?"
        qfile = os.path.join(tmp, "q.jsonl")
        with open(qfile, "w") as f:
            f.write(json.dumps({"id": "s", "question": q1}) + "\n" + json.dumps({"id": "r", "question": q2}) + "\n")
        batch = os.path.join(tmp, "answers.jsonl")
        rc, out, err = run(["--batch", qfile, "--out", batch] + common + [repo], env)
        ok(rc == 0, "--batch answers both questions", err)
        rc, out, err = run(["--ask", q1, "--json", "--transcript-dir", os.path.join(tmp, "tr")] + common + [repo], env)
        ok(rc == 0, "--ask --json answers", err)
        ask = json.loads(out)
        ask_file = os.path.join(tmp, "ask.json")
        with open(ask_file, "w") as f:
            f.write(out)
        rc, md, err = run(["--ask", q1] + common + [repo], env)
        ok("fnv1a64" not in md and "text_hash" not in md, "--ask's Markdown carries no hash")

        cites = ask["citations"]
        good = bool(cites)
        for c in cites:
            want = fnv1a64(lines_of(os.path.join(repo, c["path"]), c["start_line"], c["end_line"]))
            good = good and c.get("text_hash") == want
        ok(good, "each citation's text_hash is FNV-1a 64 of its lines", json.dumps(cites, indent=1))
        with open(batch) as f:
            blines = [json.loads(l) for l in f if l.strip()]
        ok(all("text_hash" in c for b in blines for c in b["citations"]) and
           all(set(c) >= {"path", "start_line", "end_line"} for b in blines for c in b["citations"]),
           "--batch citations keep their fields and gain text_hash")
        if have_git:
            head = subprocess.run(["git", "-C", repo, "rev-parse", "HEAD"], stdout=subprocess.PIPE,
                                  env=env).stdout.decode().strip()
            ok(ask["commit"] == head, "the answer carries HEAD's commit", (ask["commit"], head))
        transcripts = [os.path.join(tmp, "tr", f) for f in os.listdir(os.path.join(tmp, "tr")) if f.endswith(".json")]
        ok(len(transcripts) == 1, "a transcript was written")

        # ---- the edits: three distinct cited files
        files = []
        for b in [ask] + blines:
            for c in b["citations"]:
                if c["path"] not in files:
                    files.append(c["path"])
        ok(len(files) >= 3, "the answers cite at least three files", files)
        moved_f, changed_f, gone_f = files[0], files[1], files[2]
        path = os.path.join(repo, moved_f)
        with open(path) as f:
            text = f.read()
        with open(path, "w") as f:
            f.write("# inserted one\n# inserted two\n# inserted three\n" + text)
        changed_line = min(c["start_line"] for b in [ask] + blines for c in b["citations"] if c["path"] == changed_f)
        path = os.path.join(repo, changed_f)
        with open(path) as f:
            tl = f.read().split("\n")
        tl[changed_line - 1] = tl[changed_line - 1] + "  # edited"
        with open(path, "w") as f:
            f.write("\n".join(tl))
        os.unlink(os.path.join(repo, gone_f))

        def expected(c):
            if c["path"] == moved_f:
                return ("moved", c["start_line"] + 3, c["end_line"] + 3)
            if c["path"] == gone_f:
                return ("gone",)
            if c["path"] == changed_f and c["start_line"] <= changed_line <= c["end_line"]:
                return ("changed",)
            return ("unchanged",)

        def verdicts(rep):
            return [(c["verdict"], c["new_start_line"], c["new_end_line"]) if c["verdict"] == "moved"
                    else (c["verdict"],) for c in rep["citations"]]

        # ---- --recheck on each saved form
        rc, out, err = run(["--recheck", batch, "--json"] + common + [repo], env)
        reps = [json.loads(l) for l in out.splitlines() if l.strip()]
        ok(rc == 0 and len(reps) == 2, "--recheck a --batch file: one report per answer", err)
        for b, rep in zip(blines, reps):
            want = [expected(c) for c in b["citations"]]
            ok(verdicts(rep) == want, "--batch answer %s: each verdict right" % b["id"],
               "got  %s\nwant %s" % (verdicts(rep), want))
            ok(rep["id"] == b["id"] and rep["stale"] == any(w[0] in ("changed", "gone") for w in want),
               "--batch answer %s: id and stale" % b["id"], rep)
        kinds = {expected(c)[0] for b in [ask] + blines for c in b["citations"]}
        ok(kinds >= {"moved", "changed", "gone", "unchanged"}, "every verdict is met", kinds)

        rc, out, err = run(["--recheck", ask_file, "--json"] + common + [repo], env)
        rep = json.loads(out) if rc == 0 else {}
        want = [expected(c) for c in ask["citations"]]
        ok(rc == 0 and verdicts(rep) == want, "--recheck an --ask --json answer: each verdict right",
           "got  %s\nwant %s\n%s" % (verdicts(rep) if rep else None, want, err))
        if have_git:
            ok(rep.get("saved_commit") == ask["commit"], "the report names the saved commit", rep)

        rc, out, err = run(["--recheck", ask_file] + common + [repo], env)
        mc = [c for c in ask["citations"] if c["path"] == moved_f][0]
        ok(rc == 0 and "%s:%d-%d  moved to %d-%d" % (moved_f, mc["start_line"], mc["end_line"], mc["start_line"] + 3,
                                                     mc["end_line"] + 3) in out and "stale:" in out,
           "--recheck as text: a line per citation, the new lines of a moved one", out + err)

        rc, out, err = run(["--recheck", transcripts[0], "--json"] + common + [repo], env)
        rep = json.loads(out) if rc == 0 else {}
        with open(transcripts[0]) as f:
            tcites = json.load(f)["answer"]["citations"]
        want = [("unknown",) if c.get("elided") else expected(c) for c in tcites]
        ok(rc == 0 and verdicts(rep) == want, "--recheck a transcript (hashes from its verbatim text)",
           "got  %s\nwant %s\n%s" % (verdicts(rep) if rep else None, want, err))

        bad = os.path.join(tmp, "bad.jsonl")
        with open(bad, "w") as f:
            f.write('{"question": "no citations"}\n')
        rc, out, err = run(["--recheck", bad] + common + [repo], env)
        ok(rc == 2 and "citations" in err, "an answer without citations: status 2 and why", (rc, err))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return done()


if __name__ == "__main__":
    sys.exit(main())
