/* Unit tests for pathsafe: confinement of caller-given paths to the repository. */
#include "tap.h"
#include "harness.h"
#include "pathsafe.h"
#include "util.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static void okpath(const char *root, const char *given, const char *want)
{
    char *rel = NULL, err[512] = "";
    int r = pathsafe_resolve(root, given, &rel, err, sizeof err);
    ok(r == 0 && rel && strcmp(rel, want) == 0, "'%s' -> '%s' (%s)", given, want, r ? err : rel);
    free(rel);
}

static void refused(const char *root, const char *given, const char *needle)
{
    char *rel = NULL, err[512] = "";
    int r = pathsafe_resolve(root, given, &rel, err, sizeof err);
    ok(r == -1 && rel == NULL, "'%s' is refused", given);
    ok(strstr(err, needle) != NULL, "  message: %s", err);
}

int main(void)
{
    char dir[256];
    ok(temp_dir(dir, sizeof dir, "pathsafe") != NULL, "temp dir");
    char *root = xasprintf("%s/repo", dir);
    char *sub = xasprintf("%s/pkg", root);
    mkdir(root, 0700);
    mkdir(sub, 0700);
    char *f = xasprintf("%s/a.py", sub);
    FILE *fp = fopen(f, "w");
    fputs("x = 1\n", fp);
    fclose(fp);
    char *outside = xasprintf("%s/secret.txt", dir);
    fp = fopen(outside, "w");
    fputs("secret\n", fp);
    fclose(fp);
    char *link_out = xasprintf("%s/leak", root);
    char *link_in = xasprintf("%s/alias.py", root);
    char *dirlink = xasprintf("%s/up", root);
    ok(symlink(outside, link_out) == 0, "a symlink pointing out of the repository");
    ok(symlink(f, link_in) == 0, "a symlink staying inside");
    ok(symlink(dir, dirlink) == 0, "a directory symlink pointing out");

    okpath(root, "pkg/a.py", "pkg/a.py");
    okpath(root, "./pkg//a.py", "pkg/a.py");
    okpath(root, "pkg/../pkg/a.py", "pkg/a.py");
    okpath(root, "pkg/missing.py", "pkg/missing.py");
    okpath(root, ".", "");
    okpath(root, "alias.py", "alias.py");
    char *abs_in = xasprintf("%s/pkg/a.py", root);
    okpath(root, abs_in, "pkg/a.py");

    refused(root, "../../etc/passwd", "leaves the repository");
    refused(root, "pkg/../../secret.txt", "leaves the repository");
    refused(root, "/etc/passwd", "outside the repository");
    refused(root, "leak", "symbolic link");
    refused(root, "up/secret.txt", "symbolic link");
    refused(root, "up/missing/deeper.py", "symbolic link");
    refused(root, "", "empty path");
    refused(root, "pkg/a\t.py", "control character");

    char *n = pathsafe_normalize("a/b/../c/./d");
    is_str(n, "a/c/d", "normalize collapses . and ..");
    free(n);
    ok(pathsafe_normalize("a/../../b") == NULL, "normalize refuses climbing above the start");

    unlink(link_out); unlink(link_in); unlink(dirlink); unlink(f); unlink(outside);
    rmdir(sub); rmdir(root); rmdir(dir);
    free(root); free(sub); free(f); free(outside); free(link_out); free(link_in); free(dirlink); free(abs_in);
    return done_testing();
}
