"""taplib: what the Python tests share, as the shell tests share tests/lib.sh:
their TAP lines and a private place to run drqa-tui in.

  ok(cond, name, detail=None, tail=False)
                  one TAP line; on a failure the detail's first 30 lines (its
                  last 40 with tail: a valgrind log ends with what matters) as
                  comments
  done()          prints the plan; the exit status: 1 when a check failed
  private_env(d)  os.environ with HOME, XDG_CACHE_HOME and XDG_CONFIG_HOME
                  under the directory d and no model or provider variable of
                  the caller's, so that nothing of the developer's setup
                  reaches a test
  workdir(name)   a temporary directory (removed on leaving the with block)
                  holding a copy of the pyrepo fixture at DIR/repo
TOP and DRQA are the source tree and the program, as make check sets them.
"""
import contextlib
import os
import shutil
import sys
import tempfile

TOP = os.environ.get("top_srcdir", ".")
DRQA = os.environ.get("DRQA", "./drqa-tui")
n = 0
failed = 0


def ok(cond, name, detail=None, tail=False):
    global n, failed
    n += 1
    print(("ok %d - %s" if cond else "not ok %d - %s") % (n, name))
    if not cond:
        failed = 1
        lines = str("" if detail is None else detail).splitlines()
        for line in lines[-40:] if tail else lines[:30]:
            print("#   " + line)
    sys.stdout.flush()


def done():
    print("1..%d" % n)
    return failed


def private_env(d):
    env = dict(os.environ)
    for k in ("DRQA_API_KEY", "DRQA_MODEL", "DRQA_API_BASE", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OLLAMA_HOST"):
        env.pop(k, None)
    env.update(HOME=os.path.join(d, "home"), XDG_CACHE_HOME=os.path.join(d, "cache"),
               XDG_CONFIG_HOME=os.path.join(d, "config"))
    return env


@contextlib.contextmanager
def workdir(name):
    tmp = tempfile.mkdtemp(prefix="drqa-%s-" % name)
    try:
        shutil.copytree(os.path.join(TOP, "tests", "fixtures", "pyrepo"), os.path.join(tmp, "repo"))
        yield tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
